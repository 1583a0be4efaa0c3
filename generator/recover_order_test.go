package generator

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rsgen/rsgen/snapshot"
)

// recordPaths returns the paths of recs, in memory, with the size of each
// after a colon.
func recordPaths(recs *snapshot.Records) []string {
	var out []string
	for _, r := range recs.List.All() {
		out = append(out, fmt.Sprintf("%s:%d", r.Path, r.Size))
	}
	return out
}

// TestRecoveredRecordsInWalkOrder: a Resource List in walk order is taken
// as it is; one out of order (edited by hand) is sorted, and a path listed
// twice keeps its last record, as before recovery read lists into order.
func TestRecoveredRecordsInWalkOrder(t *testing.T) {
	inOrder := snapshot.RecordsOf(snapshot.Record{Path: "a/b", Size: 1}, snapshot.Record{Path: "a-b", Size: 2})
	if got := inWalkOrder(&inOrder); !slices.Equal(recordPaths(&got), []string{"a/b:1", "a-b:2"}) {
		t.Errorf("in order: %q", recordPaths(&got))
	}
	shuffled := snapshot.RecordsOf(snapshot.Record{Path: "z", Size: 1}, snapshot.Record{Path: "a", Size: 2}, snapshot.Record{Path: "z", Size: 3})
	if got := inWalkOrder(&shuffled); !slices.Equal(recordPaths(&got), []string{"a:2", "z:3"}) {
		t.Errorf("out of order: %q, want a:2 z:3", recordPaths(&got))
	}
}

// recordFileOf returns a finished record file in memory holding recs.
func recordFileOf(t *testing.T, recs ...snapshot.Record) *snapshot.RecordFile {
	t.Helper()
	f, err := snapshot.NewRecordFile("")
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		f.Append(&recs[i])
	}
	if err := f.Finish(); err != nil {
		t.Fatal(err)
	}
	return f
}

// fileRecords returns the records of f as recordPaths does.
func fileRecords(t *testing.T, f *snapshot.RecordFile) []string {
	t.Helper()
	var recs snapshot.Records
	for r, err := range f.All() {
		if err != nil {
			t.Fatal(err)
		}
		recs.Append(r)
	}
	return recordPaths(&recs)
}

// TestRecoveredSetsMerge: the sets' records merge in walk order, a file in
// several sets keeping the first set's record.
func TestRecoveredSetsMerge(t *testing.T) {
	first := recordFileOf(t, snapshot.Record{Path: "b", Size: 1}, snapshot.Record{Path: "d", Size: 1})
	second := recordFileOf(t, snapshot.Record{Path: "a", Size: 2}, snapshot.Record{Path: "b", Size: 2}, snapshot.Record{Path: "e", Size: 2})
	third := recordFileOf(t, snapshot.Record{Path: "b", Size: 3}, snapshot.Record{Path: "e", Size: 3}, snapshot.Record{Path: "f", Size: 3})
	merged, _ := snapshot.NewRecordFile("")
	if err := mergeSets(merged, []*snapshot.RecordFile{first, second, third}); err != nil {
		t.Fatal(err)
	}
	if got := fileRecords(t, merged); !slices.Equal(got, []string{"a:2", "b:1", "d:1", "e:2", "f:3"}) {
		t.Errorf("merged: %q, want a:2 b:1 d:1 e:2 f:3", got)
	}
}

// TestRecoveredSetReplaysLateEvents: the events newer than a Resource List
// replace, delete and add records as the list streams by, the last event
// of a path winning; a record no Change List explains is dropped, and a
// late event of its path adds it back; a list out of walk order is
// refused, for recoverSetFiles to sort it.
func TestRecoveredSetReplaysLateEvents(t *testing.T) {
	ev := func(c snapshot.Change, p string, size int64) snapshot.Event {
		return snapshot.Event{Change: c, Record: &snapshot.Record{Path: p, Size: size}}
	}
	late := []snapshot.Event{
		ev(snapshot.Updated, "b", 5), ev(snapshot.Deleted, "d", 0), ev(snapshot.Created, "c", 5),
		ev(snapshot.Created, "f", 5), ev(snapshot.Deleted, "f", 0), ev(snapshot.Deleted, "e", 0), ev(snapshot.Created, "e", 6),
		ev(snapshot.Created, "0", 7), ev(snapshot.Created, "z", 7), ev(snapshot.Updated, "x", 8),
	}
	unexplained := func(r *snapshot.Record) bool { return r.Path == "x" || r.Path == "y" }
	f, _ := snapshot.NewRecordFile("")
	w := newSetRecords(f, unexplained, late)
	for _, r := range []snapshot.Record{{Path: "a", Size: 2}, {Path: "b", Size: 2}, {Path: "d", Size: 2}, {Path: "e", Size: 2}, {Path: "x", Size: 2}, {Path: "y", Size: 2}} {
		if err := w.add(r); err != nil {
			t.Fatal(err)
		}
	}
	w.finish()
	if err := f.Finish(); err != nil {
		t.Fatal(err)
	}
	if got, want := fileRecords(t, f), []string{"0:7", "a:2", "b:5", "c:5", "e:6", "x:8", "z:7"}; !slices.Equal(got, want) {
		t.Errorf("replayed: %q, want %q", got, want)
	}
	if !slices.Equal(w.dropped, []string{"x", "y"}) {
		t.Errorf("dropped %q, want x and y", w.dropped)
	}
	if err := w.add(snapshot.Record{Path: "b"}); !errors.Is(err, errNotInWalkOrder) {
		t.Errorf("a record before the last: %v, want errNotInWalkOrder", err)
	}
}

// TestRecoveredRecordsAreSpilled: a state rebuilt from the output holds
// its file records in an unnamed file of the state folder, not in memory,
// and the recovering build publishes as the lost state's would have.
func TestRecoveredRecordsAreSpilled(t *testing.T) {
	_, _, cfg := recoverySite(t, map[string]string{"a.txt": "a", "b/c.txt": "c", "b/d.txt": "d"}, nil)
	buildAt(t, &cfg, "2026-01-01T00:00:00Z", limits{})
	if err := os.RemoveAll(cfg.State); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(cfg.State, 0o755); err != nil { // as the build's lock makes it
		t.Fatal(err)
	}
	s, err := resolve(&cfg, Options{Now: time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	prev, err := load(s)
	if err != nil {
		t.Fatal(err)
	}
	defer prev.close()
	if prev.recovered == nil || prev.state.Files.Len() != 0 || prev.state.NumFiles() != 3 {
		t.Fatalf("recovered %v, %d records in memory of %d, want 0 of 3", prev.recovered != nil, prev.state.Files.Len(), prev.state.NumFiles())
	}
	if left, _ := os.ReadDir(cfg.State); len(left) != 0 {
		t.Errorf("the spilled records left %v in the state folder", left)
	}
	var paths []string
	for r, err := range prev.state.Records() {
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, r.Path)
	}
	if want := []string{"a.txt", "b/c.txt", "b/d.txt"}; !slices.Equal(paths, want) {
		t.Errorf("spilled records %q, want %q", paths, want)
	}
	sum := buildAt(t, &cfg, "2026-01-01T01:00:00Z", limits{})
	if sum.Created+sum.Updated+sum.Deleted != 0 || sum.Hashed != 3 {
		t.Errorf("recovering build: %d created, %d updated, %d deleted, %d read; want no events and 3 read", sum.Created, sum.Updated, sum.Deleted, sum.Hashed)
	}
}

// TestRecoveryFromAListOutOfOrder: a Resource List whose entries were put
// in another order than the walk's (by hand) is read again and sorted, and
// the recovering build publishes no event.
func TestRecoveryFromAListOutOfOrder(t *testing.T) {
	_, _, cfg := recoverySite(t, map[string]string{"a.txt": "a", "b/c.txt": "c", "b/d.txt": "d", "e.txt": "e"}, nil)
	buildAt(t, &cfg, "2026-01-01T00:00:00Z", limits{})
	rl := filepath.Join(cfg.Out, "resourcesync", "default", "resourcelist.xml")
	data, err := os.ReadFile(rl)
	if err != nil {
		t.Fatal(err)
	}
	// The first entry moves to the end.
	start := bytes.Index(data, []byte("<url>"))
	firstEnd := start + bytes.Index(data[start:], []byte("</url>")) + len("</url>")
	end := bytes.LastIndex(data, []byte("</url>")) + len("</url>")
	reordered := slices.Concat(data[:start], data[firstEnd:end], data[start:firstEnd], data[end:])
	if err := os.WriteFile(rl, reordered, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(cfg.State); err != nil {
		t.Fatal(err)
	}
	sum := buildAt(t, &cfg, "2026-01-01T01:00:00Z", limits{})
	if sum.Created+sum.Updated+sum.Deleted != 0 || sum.Hashed != 4 {
		t.Errorf("recovering build: %d created, %d updated, %d deleted, %d read; want no events and 4 read", sum.Created, sum.Updated, sum.Deleted, sum.Hashed)
	}
}
