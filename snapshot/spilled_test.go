package snapshot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rsgen/rsgen/internal/chunked"
	"github.com/rsgen/rsgen/rs"
	"golang.org/x/sync/errgroup"
)

// spillTree writes a tree of n files over several folders, whose names
// sort differently in walk order and byte order ("d-1/" and "d/").
func spillTree(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	for i := range n {
		p := filepath.Join(dir, []string{"d", "d-1", "e"}[i%3], fmt.Sprintf("f%05d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, fmt.Appendf(nil, "file %d", i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestSpilledScanEqualsScanInMemory: a scan that spills every record gives
// the records (every field, the scan's marks too) and events of a scan in
// memory, on a cold scan and on a rescan with files changed, added and
// removed; its records are found by Search and Find as in memory, it
// leaves nothing in its folder, and its state saves to the same records.
func TestSpilledScanEqualsScanInMemory(t *testing.T) {
	const n = 3*chunked.Size + 100
	src := spillTree(t, n)
	spillDir := t.TempDir()
	opts := ScanOptions{FS: os.DirFS(src), Algorithms: []rs.HashAlgorithm{rs.SHA256, rs.MD5}, Now: 100}
	spilling := opts
	spilling.SpillDir, spilling.SpillAfter = spillDir, 1

	prev := &State{}
	for round := range 2 {
		memRecs, memEvents, _, err := Scan(context.Background(), prev, opts)
		if err != nil {
			t.Fatal(err)
		}
		recs, events, stats, err := Scan(context.Background(), prev, spilling)
		if err != nil {
			t.Fatal(err)
		}
		defer recs.Close()
		if recs.disk == nil || memRecs.disk != nil {
			t.Fatalf("round %d: spilled %v, in memory %v; want the first only", round, recs.disk != nil, memRecs.disk != nil)
		}
		if recs.Len() != memRecs.Len() || stats.Files != recs.Len() {
			t.Fatalf("round %d: %d records spilled, %d in memory, stats say %d", round, recs.Len(), memRecs.Len(), stats.Files)
		}
		for i, r := range memRecs.List.All() {
			if got := at(t, &recs, i); !reflect.DeepEqual(*got, *r) {
				t.Fatalf("round %d: record %d spilled is %+v, in memory %+v", round, i, *got, *r)
			}
			if j := search(t, &recs, r.Path); j != i || find(t, &recs, r.Path) == nil {
				t.Fatalf("round %d: Search(%s) = %d, want %d", round, r.Path, j, i)
			}
			if before := r.Path[:len(r.Path)-1]; search(t, &recs, before) != search(t, &memRecs, before) {
				t.Fatalf("round %d: Search(%s) = %d, in memory %d", round, before, search(t, &recs, before), search(t, &memRecs, before))
			}
		}
		if got, want := eventStrings(events), eventStrings(memEvents); !slices.Equal(got, want) {
			t.Fatalf("round %d: spilled events %q, in memory %q", round, got, want)
		}
		if left, _ := os.ReadDir(spillDir); len(left) != 0 {
			t.Fatalf("round %d: the spill left %v in its folder", round, left)
		}

		// The saved state holds the records (without the marks, which
		// are never saved), and is the next round's previous state.
		stateDir := t.TempDir()
		if err := Save(stateDir, &State{Files: recs}); err != nil {
			t.Fatal(err)
		}
		if prev, err = Load(stateDir); err != nil {
			t.Fatal(err)
		}
		defer prev.Close()
		k := 0
		for r, err := range prev.Records() {
			if err != nil {
				t.Fatal(err)
			}
			want := *memRecs.List.At(k)
			want.Placed, want.Change, want.Unchanged = false, 0, false
			if !reflect.DeepEqual(r, want) {
				t.Fatalf("round %d: saved record %d is %+v, want %+v", round, k, r, want)
			}
			k++
		}
		if k != n {
			t.Fatalf("round %d: the state saved %d records, want %d", round, k, n)
		}

		// The next round changes one file, adds one, removes one.
		os.WriteFile(filepath.Join(src, "d", "f00003.txt"), []byte("changed"), 0o644)
		os.WriteFile(filepath.Join(src, "d-1", "new.txt"), []byte("new"), 0o644)
		os.Remove(filepath.Join(src, "e", "f00005.txt"))
	}
}

func eventStrings(events []Event) []string {
	var s []string
	for _, ev := range events {
		s = append(s, fmt.Sprintf("%s %s %d %x", ev.Change, ev.Record.Path, ev.Time, ev.Record.Digests.SHA256))
	}
	return s
}

// TestScanKeepsSettledChunksInOrder: the scan moves a chunk of places into
// its results once all its places are filled and every chunk before it
// has moved, lets go of it, and leaves out the places of files it could
// not read; the last chunk moves once the walk has ended.
func TestScanKeepsSettledChunksInOrder(t *testing.T) {
	s := &scan{}
	var jobs []hashJob
	for i := range 2*chunked.Size + 3 {
		jobs = append(jobs, s.pending(&Record{Path: fmt.Sprintf("f%05d", i)}, nil))
	}
	fill := func(from, to int) {
		for i := from; i < to; i++ {
			filled(&jobs[i])
		}
	}
	settle := func(all bool) {
		s.keepSettled(all)
		s.finishSettling() // for the results to be seen
	}
	fill(chunked.Size, 2*chunked.Size) // the second chunk, not the first
	settle(false)
	if s.out.Len() != 0 {
		t.Fatalf("%d records kept before the first chunk settled", s.out.Len())
	}
	s.places.At(7).Path = "" // a file that could not be read
	fill(0, chunked.Size)
	settle(false)
	if s.out.Len() != 2*chunked.Size-1 || s.settled != 2 {
		t.Fatalf("%d records kept from %d chunks, want %d from 2", s.out.Len(), s.settled, 2*chunked.Size-1)
	}
	if s.places.Chunk(0) != nil || s.places.Chunk(1) != nil {
		t.Error("the chunks kept are still held in the places")
	}
	fill(2*chunked.Size, 2*chunked.Size+3)
	settle(false)
	if s.out.Len() != 2*chunked.Size-1 {
		t.Fatal("the last chunk was kept while the walk could still add to it")
	}
	s.keepSettled(true)
	if s.out.Len() != 2*chunked.Size+2 {
		t.Fatalf("%d records kept in all, want %d", s.out.Len(), 2*chunked.Size+2)
	}
	for i, r := range s.out.List.All() {
		if want := i + 1; i >= 7 && r.Path != fmt.Sprintf("f%05d", want) || i < 7 && r.Path != fmt.Sprintf("f%05d", i) {
			t.Fatalf("record %d is %s", i, r.Path)
		}
	}
}

// TestScanKeepsRecordsInMemoryWhenItCannotSpill: a spill folder that
// cannot be written costs only memory: the scan says so and goes on.
func TestScanKeepsRecordsInMemoryWhenItCannotSpill(t *testing.T) {
	src := spillTree(t, 10)
	var notes []string
	recs, _, _, err := Scan(context.Background(), &State{}, ScanOptions{FS: os.DirFS(src), Algorithms: []rs.HashAlgorithm{rs.SHA256},
		SpillDir: filepath.Join(t.TempDir(), "missing"), SpillAfter: 1,
		Notify: func(n Note) {
			if n.Kind == NoteInfo {
				notes = append(notes, n.Msg)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if recs.disk != nil || recs.Len() != 10 || len(notes) != 1 {
		t.Errorf("spilled %v, %d records, notes %q; want 10 records in memory and one note", recs.disk != nil, recs.Len(), notes)
	}
}

// TestSpilledRecordsThatCannotBeReadReturnAnError: a spill file that
// cannot be read back is the error of At, Find, Search and All (once,
// and All stops), which name the file: a disk error fails a build, and
// never crashes it.
func TestSpilledRecordsThatCannotBeReadReturnAnError(t *testing.T) {
	recs, _, _, err := Scan(context.Background(), &State{}, ScanOptions{FS: os.DirFS(spillTree(t, 10)),
		Algorithms: []rs.HashAlgorithm{rs.SHA256}, SpillDir: t.TempDir(), SpillAfter: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer recs.Close()
	recs.disk.file.Truncate(0)
	if r, err := recs.At(3); err == nil || r != nil || !strings.Contains(err.Error(), recs.disk.file.Name()) {
		t.Errorf("At of a truncated spill: %v, %v; want an error that names %s", r, err, recs.disk.file.Name())
	}
	if r, err := recs.Find("e/f00002.txt"); err == nil || r != nil {
		t.Errorf("Find in a truncated spill: %v, %v; want an error", r, err)
	}
	if _, err := recs.Search("e/f00002.txt"); err == nil {
		t.Error("Search in a truncated spill returned no error")
	}
	yielded, errs := 0, 0
	for r, err := range recs.All() {
		if yielded++; err != nil {
			errs++
		} else if r == nil {
			t.Error("All yielded no record and no error")
		}
	}
	if yielded != 1 || errs != 1 {
		t.Errorf("All of a truncated spill yielded %d times, %d errors; want one error and no record", yielded, errs)
	}
}

// search is rs.Search, failing the test on an error.
func search(t *testing.T, rs *Records, p string) int {
	t.Helper()
	i, err := rs.Search(p)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// TestBaselineScanMakesNoCreationEvents: the scan of a first build leaves
// the creations out of its events, and a spilled one keeps no copy of
// their records; the records still say they were created.
func TestBaselineScanMakesNoCreationEvents(t *testing.T) {
	src := spillTree(t, chunked.Size+10)
	for _, spill := range []string{"", t.TempDir()} {
		s := &scan{opts: ScanOptions{Baseline: true, SpillDir: spill, SpillAfter: 1}}
		for i := range chunked.Size + 10 {
			s.place(&Record{Path: fmt.Sprintf("f%05d", i), Change: Created}, false)
		}
		s.keepSettled(true)
		if s.out.disk != nil {
			if err := s.out.disk.finish(); err != nil {
				t.Fatal(err)
			}
		}
		if events := s.events(); len(events) != 0 || s.changed.Len() != 0 {
			t.Errorf("spill %q: %d events, %d copies; want none", spill, len(events), s.changed.Len())
		}
		if r := at(t, &s.out, chunked.Size+3); r.Change != Created {
			t.Errorf("spill %q: record %s has change %v, want created", spill, r.Path, r.Change)
		}
		s.out.Close()
	}
	recs, events, _, err := Scan(context.Background(), &State{}, ScanOptions{FS: os.DirFS(src), Algorithms: []rs.HashAlgorithm{rs.SHA256}, Baseline: true})
	if err != nil || len(events) != 0 || recs.Len() != chunked.Size+10 {
		t.Errorf("a baseline scan: %d records, %d events, error %v; want %d records and no event", recs.Len(), len(events), err, chunked.Size+10)
	}
}

// TestSpillThatCannotBeWrittenFailsTheScan: a write of the spill that
// fails (a full disk) is the scan's error, when the scan ends.
func TestSpillThatCannotBeWrittenFailsTheScan(t *testing.T) {
	s, err := newSpilled(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.file.Close() // every write fails
	s.add([]Record{{Path: "a"}, {Path: "b"}})
	if err := s.finish(); err == nil {
		t.Error("a spill whose writes failed finished without an error")
	}
}

// TestRecordReadersReadAtOnce: readers of spilled records, one per
// goroutine, each read the records of a range of their own, and of the
// others', as At does, at once and in any order.
func TestRecordReadersReadAtOnce(t *testing.T) {
	const n = 4*chunked.Size + 10
	src := spillTree(t, n)
	recs, _, _, err := Scan(context.Background(), &State{}, ScanOptions{FS: os.DirFS(src), Algorithms: []rs.HashAlgorithm{rs.SHA256},
		SpillDir: t.TempDir(), SpillAfter: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer recs.Close()
	if recs.disk == nil {
		t.Fatal("the records are not spilled")
	}
	var want []string
	for r, err := range recs.All() {
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, r.Path)
	}
	var g errgroup.Group
	for w := range 4 {
		g.Go(func() error {
			rd := recs.Reader()
			for j := range n {
				i := (w*n/4 + j*7) % n // its own range first, then the others', out of order
				r, err := rd.At(i)
				if err != nil {
					return err
				}
				if r.Path != want[i] {
					return fmt.Errorf("reader %d: record %d is %s, want %s", w, i, r.Path, want[i])
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}

// TestMarksAtAnswersFromMemory: the marks of every record, spilled or
// not, are those the scan set, in every combination and at odd and even
// indexes (a spill holds two to a byte); a spill whose file cannot be
// read back still answers them, since no record is decoded to learn them.
func TestMarksAtAnswersFromMemory(t *testing.T) {
	var all []Marks
	for _, change := range []Change{0, Created, Updated, Deleted} {
		for _, placed := range []bool{false, true} {
			for _, unchanged := range []bool{false, true} {
				all = append(all, Marks{Placed: placed, Unchanged: unchanged, Change: change})
			}
		}
	}
	const n = chunked.Size + 37
	marksOfRecord := func(i int) Marks { return all[(i*7)%len(all)] }
	for _, spill := range []string{"", t.TempDir()} {
		s := &scan{opts: ScanOptions{SpillDir: spill, SpillAfter: 1}}
		for i := range n {
			m := marksOfRecord(i)
			s.place(&Record{Path: fmt.Sprintf("f%05d", i), Placed: m.Placed, Unchanged: m.Unchanged, Change: m.Change}, false)
		}
		s.keepSettled(true)
		if (s.out.disk != nil) != (spill != "") {
			t.Fatalf("spill %q: spilled %v", spill, s.out.disk != nil)
		}
		if s.out.disk != nil {
			if err := s.out.disk.finish(); err != nil {
				t.Fatal(err)
			}
			if r := at(t, &s.out, n-2); r.Marks() != marksOfRecord(n-2) {
				t.Errorf("the decoded record %s has marks %+v, want %+v", r.Path, r.Marks(), marksOfRecord(n-2))
			}
			s.out.disk.file.Truncate(0)
		}
		for i := range n {
			if got := s.out.MarksAt(i); got != marksOfRecord(i) {
				t.Fatalf("spill %q: the marks of record %d are %+v, want %+v", spill, i, got, marksOfRecord(i))
			}
		}
		s.out.Close()
	}
}
