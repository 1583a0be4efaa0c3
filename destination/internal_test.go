package destination

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
)

// TestRecordLinesRoundTrip writes records, wants and journal operations
// with every kind of byte in their strings, and reads them back equal.
func TestRecordLinesRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	r := record{path: "a b/ü\n\t%41 x", length: 7, lastmod: t0, changed: t0.Add(time.Second),
		stamp: stamp{size: 7, mtime: 1, ctime: 2, ino: 3}}
	r.sums[rs.SHA256] = []byte{1, 2, 3}
	got, err := parseRecord(appendRecord(nil, &r)[:len(appendRecord(nil, &r))-1])
	if err != nil || !reflect.DeepEqual(got, r) {
		t.Errorf("record: got %+v, %v; want %+v", got, err, r)
	}
	w := want{path: "x y", loc: "http://h/x%20y", change: rs.ChangeDeleted, at: t0, seq: 9,
		fix: fixity{length: -1, lastmod: t0}}
	w.fix.sums[rs.MD5] = []byte{9}
	line := appendWant(nil, &w)
	if gotW, err := parseWant(line[:len(line)-1]); err != nil || !reflect.DeepEqual(gotW, w) {
		t.Errorf("want: got %+v, %v; want %+v", gotW, err, w)
	}
	for _, o := range []op{{del: true, rec: record{path: "gone"}, seq: 4}, {rec: r, seq: 5}} {
		line := appendOp(nil, &o)
		gotO, err := parseOp(line[:len(line)-1])
		if o.del {
			o.rec = record{path: o.rec.path}
		}
		if err != nil || !reflect.DeepEqual(gotO, o) {
			t.Errorf("op: got %+v, %v; want %+v", gotO, err, o)
		}
	}
}

// TestSorterSpillsAndMerges sorts more values than it may hold, in walk
// order, equal paths in the order added, and again when asked again.
func TestSorterSpillsAndMerges(t *testing.T) {
	defer func(m int) { sortMemory = m }(sortMemory)
	sortMemory = 2 << 10
	s := newSorter(t.TempDir(), wantCodec)
	defer s.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	var paths []string
	for i := range 2000 {
		p := fmt.Sprintf("d%d/f%d", rng.IntN(30), rng.IntN(500))
		if i%7 == 0 {
			p = fmt.Sprintf("d%d", rng.IntN(30)) // a file beside folders of the same prefix
		}
		paths = append(paths, p)
		if err := s.Add(want{path: p, loc: "http://h/" + p, seq: int64(i), fix: fixity{length: -1}}); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.runs) < 2 {
		t.Fatalf("%d runs: the test does not spill", len(s.runs))
	}
	slices.SortStableFunc(paths, layout.ComparePaths)
	for range 2 {
		var got []string
		var last int64 = -1
		prev := ""
		for w, err := range s.All() {
			if err != nil {
				t.Fatal(err)
			}
			if w.path == prev && w.seq < last {
				t.Fatalf("%s: seq %d after %d", w.path, w.seq, last)
			}
			prev, last = w.path, w.seq
			got = append(got, w.path)
		}
		if !slices.Equal(got, paths) {
			t.Fatalf("sorted %d paths, not in walk order", len(got))
		}
	}
}

// TestReadLinesDropsATornLastLine reads a journal whose last write a kill
// cut short: the whole lines before it are read, the torn one left out.
func TestReadLinesDropsATornLastLine(t *testing.T) {
	name := filepath.Join(t.TempDir(), "journal")
	a, b := appendOp(nil, &op{del: true, rec: record{path: "a"}, seq: 1}), appendOp(nil, &op{del: true, rec: record{path: "b"}, seq: 2})
	if err := os.WriteFile(name, append(a, b[:len(b)-3]...), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	for o, err := range readLines(name, opCodec) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, o.rec.path)
	}
	if !slices.Equal(got, []string{"a"}) {
		t.Errorf("read %q, want [a]", got)
	}
}

// TestDecide is the table of what a sync does about one path.
func TestDecide(t *testing.T) {
	t1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Hour)
	sum := func(b byte) sums { var s sums; s[rs.SHA256] = []byte{b}; return s }
	fix := func(b byte) fixity { return fixity{length: 1, sums: sum(b), lastmod: t1} }
	rec := &record{path: "p", length: 1, sums: sum(1), lastmod: t1, changed: t1}
	md5Only := fixity{length: 1, lastmod: t1}
	md5Only.sums[rs.MD5] = []byte{1}
	for _, tc := range []struct {
		name                   string
		w                      *want
		r                      *record
		trusted, present, list bool
		keepDeleted            bool
		want                   action
	}{
		{"listed, right", &want{fix: fix(1)}, rec, true, true, true, false, actKeep},
		{"listed, new lastmod", &want{fix: fixity{length: 1, sums: sum(1), lastmod: t2}}, rec, true, true, true, false, actRecord},
		{"listed, other bytes", &want{fix: fix(2)}, rec, true, true, true, false, actFetch},
		{"listed, file changed behind", &want{fix: fix(1)}, rec, false, true, true, false, actCheck},
		{"listed, file gone", &want{fix: fix(1)}, rec, false, false, true, false, actFetch},
		{"listed, another algorithm", &want{fix: md5Only}, rec, true, true, true, false, actCheck},
		{"listed, no record, a file there", &want{fix: fix(1)}, nil, false, true, true, false, actCheck},
		{"listed, no record, a file there, no digest", &want{fix: fixity{length: 1}}, nil, false, true, true, false, actFetch},
		{"listed, no record", &want{fix: fix(1)}, nil, false, false, true, false, actFetch},
		{"unlisted", nil, rec, true, true, true, false, actDelete},
		{"unlisted, kept", nil, rec, true, true, true, true, actForget},
		{"no event", nil, rec, true, true, false, false, actKeep},
		{"deleted", &want{change: rs.ChangeDeleted, at: t2}, rec, true, true, false, false, actDelete},
		{"deleted, untracked file there", &want{change: rs.ChangeDeleted, at: t2}, nil, false, true, false, false, actDelete},
		{"deleted, nothing there", &want{change: rs.ChangeDeleted, at: t2}, nil, false, false, false, false, actKeep},
		{"deleted, kept", &want{change: rs.ChangeDeleted, at: t2}, rec, true, true, false, true, actForget},
		{"updated", &want{change: rs.ChangeUpdated, at: t2, fix: fix(2)}, rec, true, true, false, false, actFetch},
		{"updated, applied", &want{change: rs.ChangeUpdated, at: t1, fix: fix(1)}, rec, true, true, false, false, actKeep},
		{"updated, older than the record's", &want{change: rs.ChangeUpdated, at: t1.Add(-time.Hour), fix: fix(2)}, rec, true, true, false, false, actKeep},
		{"updated, same time, other bytes", &want{change: rs.ChangeUpdated, at: t1, fix: fix(2)}, rec, true, true, false, false, actFetch},
		{"updated to the bytes there", &want{change: rs.ChangeUpdated, at: t2, fix: fix(1)}, rec, true, true, false, false, actRecord},
	} {
		if got := decide(tc.w, tc.r, tc.trusted, tc.present, tc.list, tc.keepDeleted); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestMapperRefusesWhatCannotBeAFile maps URIs to paths of DIR: decoded
// byte for byte under the base, other hosts apart, and every way out of
// DIR refused.
func TestMapperRefusesWhatCannotBeAFile(t *testing.T) {
	m, _ := newMapper("http://h.example/pub/", false)
	other, _ := newMapper("http://h.example/pub/", true)
	for loc, want := range map[string]string{
		"http://h.example/pub/a%20b/c%23d.txt": "a b/c#d.txt",
		"http://H.EXAMPLE:80/pub/x":            "x",
		"http://h.example/pub/%C3%BC%FF":       "ü\xff",
		"http://h.example/pub/a+b":             "a+b",
	} {
		if got, err := m.path(loc); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", loc, got, err, want)
		}
	}
	if got, err := other.path("http://o.example/x/y"); err != nil || got != "o.example/x/y" {
		t.Errorf("other host: %q, %v", got, err)
	}
	if _, err := m.path("http://o.example/x"); err != errOtherHost {
		t.Errorf("other host without OtherHosts: %v", err)
	}
	for _, loc := range []string{
		"http://h.example/pub/../etc/passwd", "http://h.example/pub/%2e%2e/x", "http://h.example/pub/a/%2E%2E/%2E%2E/x",
		"http://h.example/pub/..%2fx", "http://h.example/pub/a//b", "http://h.example/pub/dir/", "http://h.example/pub/",
		"http://h.example/pub/a%00b", "http://h.example/pub/q?x=1", "http://h.example/pub/f#frag",
		"file:///etc/passwd", "/etc/passwd", "http://u:p@h.example/pub/x", "http://h.example/pub/" + strings.Repeat("n", 300),
		"http://h.example/pub/" + layout.TempPrefix + "sync/x", "http://h.example/pub/%2e",
	} {
		if p, err := m.path(loc); err == nil {
			t.Errorf("%q mapped to %q, want a refusal", loc, p)
		} else if _, ok := err.(*RefusedError); !ok {
			t.Errorf("%q: %v, want a *RefusedError", loc, err)
		}
	}
	if _, err := other.path("http://o.example/../x"); err == nil {
		t.Errorf("traversal on another host mapped")
	}
}

// TestFixityOfReadsSeveralDigests reads a hash attribute with two
// digests, as resync writes on deletes, and refuses what cannot be
// verified.
func TestFixityOfReadsSeveralDigests(t *testing.T) {
	md := rs.MD{Hash: "md5:d41d8cd98f00b204e9800998ecf8427e sha-256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", Length: 0, HasLength: true}
	f, err := fixityOf(&md, time.Time{})
	if err != nil || f.sums[rs.MD5] == nil || f.sums[rs.SHA256] == nil || f.length != 0 {
		t.Fatalf("%+v, %v", f, err)
	}
	v := newVerifier(&f)
	if err := v.check("u", &f); err != nil {
		t.Errorf("empty bytes: %v", err)
	}
	v.Write([]byte("x"))
	if err := v.check("u", &f); err == nil {
		t.Errorf("one byte passed as empty")
	}
	for _, h := range []string{"sha-512:00", "md5:zz", "md5:00", "md5:d41d8cd98f00b204e9800998ecf8427e md5:00000000000000000000000000000000"} {
		if _, err := fixityOf(&rs.MD{Hash: h}, time.Time{}); err == nil {
			t.Errorf("hash %q accepted", h)
		}
	}
}

// TestRateSpacesRequests: with a rate of one request an hour, the first
// goes at once and the second waits, here until its context is cancelled.
func TestRateSpacesRequests(t *testing.T) {
	r := &rateLimiter{interval: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	if err := r.wait(ctx); err != nil {
		t.Fatalf("first request: %v", err)
	}
	cancel()
	if err := r.wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("second request within the hour: %v, want it held back", err)
	}
}

// TestRetryAfterValues reads Retry-After as seconds or as an HTTP date.
func TestRetryAfterValues(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"120": 2 * time.Minute, "0": 0, "": 0, "soon": 0,
		"Thu, 01 Jan 2026 00:00:30 GMT": 30 * time.Second, "Wed, 31 Dec 2025 00:00:00 GMT": 0,
	} {
		if got := retryAfter(v, now); got != want {
			t.Errorf("Retry-After %q: %s, want %s", v, got, want)
		}
	}
}

// TestSortedFileFinds bisects a sorted file of records, short and long
// (past a page, past the span it scans), for every path in it and for
// paths between and around them.
func TestSortedFileFinds(t *testing.T) {
	name := filepath.Join(t.TempDir(), "sorted")
	var paths []string
	for i := range 3000 {
		p := fmt.Sprintf("d%02d/f%05d", i%50, i)
		if i%300 == 0 {
			p += strings.Repeat("ü", 3000) // a line of some 18 KB
		}
		paths = append(paths, p)
	}
	slices.SortFunc(paths, layout.ComparePaths)
	var recs []storedRecord
	for _, p := range paths {
		line := appendRecord(nil, &record{path: p, length: int64(len(p))})
		recs = append(recs, storedRecord{path: p, line: line[:len(line)-1]})
	}
	if err := writeLines(name, slices.Values(recs), storedCodec); err != nil {
		t.Fatal(err)
	}
	f, err := openSorted(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range paths {
		line, err := f.find(p)
		if err != nil || line == nil {
			t.Fatalf("%.40s: %v, not found", p, err)
		}
		if r, err := parseRecord(line); err != nil || r.path != p || r.length != int64(len(p)) {
			t.Fatalf("%.40s: found %.40s, %v", p, r.path, err)
		}
	}
	for _, p := range []string{"", "a", "d00", "d00/f00000x", "d25/f", "zzz", "d49/f99999"} {
		if line, err := f.find(p); err != nil || line != nil {
			t.Errorf("%q: found %.40q, %v", p, line, err)
		}
	}
}

// TestSmallChangesGoToTheDelta: a sync that changes a few files of many
// writes them to the delta and leaves the base alone; one that changes
// many writes a new base. Either way the inventory reads the same.
func TestSmallChangesGoToTheDelta(t *testing.T) {
	dir, work := t.TempDir(), t.TempDir()
	inv, _, err := openInventory(dir, work)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		inv.put(&record{path: fmt.Sprintf("f%03d", i), length: 1})
	}
	if err := inv.close(work); err != nil {
		t.Fatal(err)
	}
	base, _ := os.Stat(filepath.Join(dir, inventoryFile))
	inv, _, _ = openInventory(dir, work)
	inv.put(&record{path: "f005", length: 2})
	inv.del("f006")
	inv.put(&record{path: "g", length: 3})
	if err := inv.close(work); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(filepath.Join(dir, inventoryFile)); err != nil || !os.SameFile(base, after) {
		t.Errorf("the base was rewritten for three changes")
	}
	f, _ := openFinder(dir)
	defer f.Close()
	for p, want := range map[string]int64{"f005": 2, "f006": -1, "g": 3, "f007": 1} {
		r, err := f.find(p)
		switch {
		case err != nil:
			t.Fatal(err)
		case want < 0 && r != nil:
			t.Errorf("%s: found, want deleted", p)
		case want >= 0 && (r == nil || string(r.line[len(r.line)-1:]) == "D"):
			t.Errorf("%s: not found", p)
		}
	}
	n := 0
	for r, err := range readInventory(dir) {
		if err != nil || r.path == "f006" {
			t.Fatalf("%s, %v", r.path, err)
		}
		n++
	}
	if n != 100 {
		t.Errorf("%d records, want 100", n)
	}
	inv, _, _ = openInventory(dir, work)
	for i := range 50 {
		inv.del(fmt.Sprintf("f%03d", i))
	}
	inv.close(work)
	if _, err := os.Stat(filepath.Join(dir, deltaFile)); !os.IsNotExist(err) {
		t.Errorf("the delta is left after a large change: %v", err)
	}
}

// TestPlaceNewAndReplacedFiles places a new file and one over an old
// file, a link and a folder, written unnamed and linked where the file
// system can, and under a temporary name where it cannot: the same files,
// and no temporary name left.
func TestPlaceNewAndReplacedFiles(t *testing.T) {
	for _, mode := range []struct{ unnamed, openat2 bool }{{true, true}, {false, true}, {true, false}} {
		unnamed := mode.unnamed
		root := t.TempDir()
		d, err := openMirror(root, true)
		if err != nil {
			t.Fatal(err)
		}
		d.noOpenat2.Store(!mode.openat2) // as on a kernel before Linux 5.6
		if unnamed && !d.unnamed {
			t.Log("this file system cannot link unnamed files: only the named way is tested")
		}
		d.unnamed = d.unnamed && unnamed
		os.MkdirAll(filepath.Join(root, "sub/folder"), 0o755)
		os.WriteFile(filepath.Join(root, "sub/old.txt"), []byte("old"), 0o644)
		os.Symlink("/etc/passwd", filepath.Join(root, "sub/link.txt"))
		for rel, wantErr := range map[string]bool{"sub/new.txt": false, "sub/old.txt": false, "sub/link.txt": false, "sub/folder": true} {
			f, err := d.createTemp(rel, false) // unnamed: a file there is found by the link
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("new " + rel)
			if _, err := d.place(f, rel); (err != nil) != wantErr {
				t.Errorf("unnamed %v: place %s: %v", unnamed, rel, err)
			}
		}
		os.Symlink(filepath.Join(root, "sub"), filepath.Join(root, "via"))
		for rel, want := range map[string]bool{"sub/new.txt": true, "sub/folder": false, "via/new.txt": false, "sub/none": false} {
			if _, present, err := d.stat(rel); err != nil || present != want {
				t.Errorf("openat2 %v: stat %s: %v, %v; want %v", mode.openat2, rel, present, err, want)
			}
		}
		if f, err := d.open("via/new.txt"); err == nil {
			f.Close()
			t.Errorf("openat2 %v: a file opened through a link", mode.openat2)
		}
		os.Remove(filepath.Join(root, "via"))
		d.Close()
		entries, _ := os.ReadDir(filepath.Join(root, "sub"))
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if !slices.Equal(names, []string{"folder", "link.txt", "new.txt", "old.txt"}) {
			t.Errorf("unnamed %v: sub holds %q", unnamed, names)
		}
		for _, rel := range []string{"sub/new.txt", "sub/old.txt", "sub/link.txt"} {
			if data, err := os.ReadFile(filepath.Join(root, rel)); err != nil || string(data) != "new "+rel {
				t.Errorf("unnamed %v: %s holds %q, %v", unnamed, rel, data, err)
			}
		}
	}
}
