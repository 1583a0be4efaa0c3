package zippkg

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// randomItems returns n sorted items with sizes from a few bytes to
// maxSize, the same for the same seed.
func randomItems(seed uint64, n int, maxSize int64) []Item {
	r := rand.New(rand.NewPCG(seed, 0))
	items := make([]Item, n)
	for i := range items {
		items[i] = Item{Path: fmt.Sprintf("/resources/d%03d/f%06d.html", r.IntN(100), i), Size: r.Int64N(maxSize)}
	}
	slices.SortFunc(items, func(a, b Item) int {
		if a.Path < b.Path {
			return -1
		}
		return 1
	})
	return items
}

// checkPlan checks that ranges cover items contiguously, in order, within
// lim unless a range holds a single item.
func checkPlan(t *testing.T, items []Item, ranges []Range, lim Limits) {
	t.Helper()
	lim = lim.withDefaults()
	next := 0
	for _, r := range ranges {
		if r.Start != next || r.End <= r.Start {
			t.Fatalf("range %+v after %d", r, next)
		}
		next = r.End
		if r.End-r.Start > 1 && (r.Bytes > lim.MaxBytes || r.End-r.Start > lim.MaxEntries) {
			t.Errorf("range %+v over the limits", r)
		}
		if want := int64(packageOverhead); r.Bytes < want+sumSizes(items[r.Start:r.End]) {
			t.Errorf("range %+v: bytes below the sizes", r)
		}
	}
	if next != len(items) {
		t.Fatalf("ranges end at %d of %d", next, len(items))
	}
}

func sumSizes(items []Item) int64 {
	var n int64
	for _, it := range items {
		n += it.Size
	}
	return n
}

func TestPlanLimits(t *testing.T) {
	items := randomItems(1, 3000, 100_000)
	items[1234].Size = 50 << 20 // bigger than the limit: a package of its own
	lim := Limits{MaxBytes: 4 << 20, MaxEntries: 100}
	ranges, err := Plan(slices.Values(items), lim)
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, items, ranges, lim)
	if !slices.Contains(ranges, Range{Start: 1234, End: 1235, Bytes: packageOverhead + itemCost(items[1234])}) {
		t.Error("the oversized item does not have a package of its own")
	}
	for _, c := range []struct {
		name  string
		lim   Limits
		count int
	}{
		{"defaults fit all", Limits{}, 1},
		{"by count", Limits{MaxEntries: 10, MaxBytes: 1 << 40}, 0},
	} {
		ranges, err := Plan(slices.Values(items), c.lim)
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, items, ranges, c.lim)
		if c.count > 0 && len(ranges) != c.count {
			t.Errorf("%s: %d ranges", c.name, len(ranges))
		}
	}
	if ranges, err := Plan(slices.Values([]Item(nil)), Limits{}); err != nil || len(ranges) != 0 {
		t.Errorf("no items: %v %v", ranges, err)
	}
}

func TestPlanRejectsUnsorted(t *testing.T) {
	for _, items := range [][]Item{
		{{"/b", 1}, {"/a", 1}},
		{{"/a", 1}, {"/a", 1}},
		{{"/a", -1}},
	} {
		if _, err := Plan(slices.Values(items), Limits{}); err == nil {
			t.Errorf("Plan(%v) succeeded", items)
		}
	}
}

// TestPlanStableUnderSizeChange changes one item's size at a time: the
// partition stays the same, so only the package holding the item changes.
func TestPlanStableUnderSizeChange(t *testing.T) {
	items := randomItems(2, 5000, 100_000)
	lim := Limits{MaxBytes: 8 << 20}
	before, err := Plan(slices.Values(items), lim)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 0))
	for range 200 {
		changed := slices.Clone(items)
		i := r.IntN(len(items))
		changed[i].Size += r.Int64N(2000) - 1000
		changed[i].Size = max(changed[i].Size, 0)
		after, err := Plan(slices.Values(changed), lim)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rangeBounds(before), rangeBounds(after)) {
			t.Fatalf("resizing %s changed the partition", items[i].Path)
		}
	}
}

// TestPlanLocalUnderInsertAndDelete adds or removes one item at a time and
// counts the packages whose range changed, against greedy first-fit
// packing, where every package after the change shifts.
func TestPlanLocalUnderInsertAndDelete(t *testing.T) {
	items := randomItems(4, 20000, 100_000)
	lim := Limits{MaxBytes: 16 << 20}
	before, err := Plan(slices.Values(items), lim)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 0))
	var changed, greedyChanged int
	const trials = 200
	for trial := range trials {
		edited := slices.Clone(items)
		i := r.IntN(len(items))
		if trial%2 == 0 {
			edited = slices.Delete(edited, i, i+1)
		} else {
			edited = slices.Insert(edited, i+1, Item{Path: items[i].Path + "-new", Size: r.Int64N(100_000)})
		}
		after, err := Plan(slices.Values(edited), lim)
		if err != nil {
			t.Fatal(err)
		}
		changed += replaced(items, before, edited, after)
		greedyChanged += replaced(items, greedy(items, lim), edited, greedy(edited, lim))
	}
	t.Logf("packages rewritten per insertion or deletion: %.2f (greedy: %.2f) of %d", float64(changed)/trials, float64(greedyChanged)/trials, len(before))
	if changed > 2*trials {
		t.Errorf("%d packages rewritten in %d one-item edits", changed, trials)
	}
	if greedyChanged < 5*changed {
		t.Errorf("greedy packing rewrote only %d packages, Plan %d: the comparison is meaningless", greedyChanged, changed)
	}
}

// replaced counts the packages of after that do not hold the same items
// as a package of before: those a build would write.
func replaced(oldItems []Item, before []Range, newItems []Item, after []Range) int {
	type key struct {
		first, last string
		n           int
	}
	old := map[key]bool{}
	for _, r := range before {
		old[key{oldItems[r.Start].Path, oldItems[r.End-1].Path, r.End - r.Start}] = true
	}
	n := 0
	for _, r := range after {
		if !old[key{newItems[r.Start].Path, newItems[r.End-1].Path, r.End - r.Start}] {
			n++
		}
	}
	return n
}

func greedy(items []Item, lim Limits) []Range {
	var out []Range
	start, bytes := 0, int64(packageOverhead)
	for i, it := range items {
		if i > start && bytes+itemCost(it) > lim.MaxBytes {
			out = append(out, Range{Start: start, End: i})
			start, bytes = i, packageOverhead
		}
		bytes += itemCost(it)
	}
	return append(out, Range{Start: start, End: len(items)})
}

func rangeBounds(rs []Range) [][2]int {
	var out [][2]int
	for _, r := range rs {
		out = append(out, [2]int{r.Start, r.End})
	}
	return out
}

func TestPlanFill(t *testing.T) {
	items := randomItems(6, 20000, 100_000)
	lim := Limits{MaxBytes: 16 << 20}
	ranges, err := Plan(slices.Values(items), lim)
	if err != nil {
		t.Fatal(err)
	}
	total := sumSizes(items)
	t.Logf("%d packages for %d MiB under a %d MiB limit: %.0f%% full on average",
		len(ranges), total>>20, lim.MaxBytes>>20, 100*float64(total)/float64(int64(len(ranges))*lim.MaxBytes))
	if int64(len(ranges)) > 2*total/lim.MaxBytes+1 {
		t.Errorf("%d packages, more than twice the minimum", len(ranges))
	}
}

// TestPlanWalkOrder: paths come in rsgen's walk order, in which a folder's
// files come before a name that extends the folder's name ("apt/f" before
// "apt-x/f"), unlike byte order.
func TestPlanWalkOrder(t *testing.T) {
	items := []Item{{Path: "/apt/f", Size: 1}, {Path: "/apt-x/f", Size: 1}, {Path: "/apt.y/f", Size: 1}, {Path: "/apt_z", Size: 1}}
	if _, err := Plan(slices.Values(items), Limits{}); err != nil {
		t.Fatalf("walk order refused: %v", err)
	}
	items[0], items[1] = items[1], items[0]
	if _, err := Plan(slices.Values(items), Limits{}); err == nil {
		t.Fatal("byte order accepted: it is not the walk order")
	}
}
