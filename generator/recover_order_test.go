package generator

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/rsgen/rsgen/snapshot"
)

// recordPaths returns the paths of recs, with the size of each after a
// colon.
func recordPaths(recs *snapshot.Records) []string {
	var out []string
	for _, r := range recs.All() {
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

// TestRecoveredSetsMergeAndReplay: the sets' records merge in walk order,
// a file in two sets keeping the first set's record; the events newer than
// a Resource List replace, delete and add records, the last event of a
// path winning.
func TestRecoveredSetsMergeAndReplay(t *testing.T) {
	first := snapshot.RecordsOf(snapshot.Record{Path: "b", Size: 1}, snapshot.Record{Path: "d", Size: 1})
	second := snapshot.RecordsOf(snapshot.Record{Path: "a", Size: 2}, snapshot.Record{Path: "b", Size: 2}, snapshot.Record{Path: "e", Size: 2})
	merged := mergeRecords(&first, &second)
	if got := recordPaths(&merged); !slices.Equal(got, []string{"a:2", "b:1", "d:1", "e:2"}) {
		t.Errorf("merged: %q, want a:2 b:1 d:1 e:2", got)
	}
	ev := func(c snapshot.Change, p string, size int64) snapshot.Event {
		return snapshot.Event{Change: c, Record: &snapshot.Record{Path: p, Size: size}}
	}
	late := []snapshot.Event{
		ev(snapshot.Updated, "b", 5), ev(snapshot.Deleted, "d", 0), ev(snapshot.Created, "c", 5),
		ev(snapshot.Created, "f", 5), ev(snapshot.Deleted, "f", 0), ev(snapshot.Deleted, "e", 0), ev(snapshot.Created, "e", 6),
	}
	replayed := replayLate(merged, late)
	if got := recordPaths(&replayed); !slices.Equal(got, []string{"a:2", "b:5", "c:5", "e:6"}) {
		t.Errorf("replayed: %q, want a:2 b:5 c:5 e:6", got)
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
	b, err := newBuilder(&cfg, Options{Now: time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	if b.recoverer.recovered == nil || b.prev.Files.Len() != 0 || b.prev.NumFiles() != 3 {
		t.Fatalf("recovered %v, %d records in memory of %d, want 0 of 3", b.recoverer.recovered != nil, b.prev.Files.Len(), b.prev.NumFiles())
	}
	if left, _ := os.ReadDir(cfg.State); len(left) != 0 {
		t.Errorf("the spilled records left %v in the state folder", left)
	}
	var paths []string
	for r, err := range b.prev.Records() {
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
