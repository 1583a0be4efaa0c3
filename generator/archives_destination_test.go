package generator_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
)

// TestArchiveReconstruction plays a Destination that reconstructs earlier
// states of a Source from its archives alone: for each past build time T
// it takes the newest archived Resource List at or before T and applies
// the changes after its at up to T from the Change Lists the Change List
// Archive lists. The inventory it gets (every resource with its sha-256)
// must be the source tree as it was at T.
func TestArchiveReconstruction(t *testing.T) {
	s := newSite(t, testBaseURL, func(c *config.Config) {
		c.ChangeList.Rotate = config.Duration{Duration: time.Hour}
		c.Archives = config.Archives{ChangeLists: true, ResourceLists: true,
			SnapshotEvery: config.Duration{Duration: 3 * time.Hour}, Keep: config.Retention{Age: 6 * time.Hour}}
	})
	r := rand.New(rand.NewPCG(9, 9))
	live := map[string]string{}
	history := map[time.Time]map[string]string{} // build time -> path -> sha-256
	var times []time.Time
	for i := range 16 {
		for range 3 {
			p := fmt.Sprintf("d%d/f %d.txt", r.IntN(2), r.IntN(8))
			if _, ok := live[p]; ok && r.IntN(3) == 0 {
				s.remove(p)
				delete(live, p)
				continue
			}
			body := fmt.Sprintf("%s at %d\n", p, i)
			s.write(p, body)
			live[p] = sha256Hex([]byte(body))
		}
		now := t0.Add(time.Duration(i) * 50 * time.Minute)
		s.build(now)
		history[now] = maps.Clone(live)
		times = append(times, now)
	}

	cl := s.doc("resourcesync/default/capabilitylist.xml")
	var rlArchive, clArchive string
	for _, e := range cl.Entries {
		switch e.MD().Capability {
		case "resourcelist-archive":
			rlArchive = e.Loc
		case "changelist-archive":
			clArchive = e.Loc
		}
	}
	if rlArchive == "" || clArchive == "" {
		t.Fatalf("the Capability List advertises no archives: %+v", cl.Entries)
	}
	snapshots := s.archiveEntries(rlArchive)
	lists := s.archiveEntries(clArchive)
	// The open Change List is not archived: take it from the index.
	idx := s.doc("resourcesync/default/changelist.xml")
	open := idx.Entries[len(idx.Entries)-1]
	if open.MD().Until != "" {
		t.Fatal("the last Change List of the index is closed")
	}
	lists = append(lists, open)

	reconstructed := 0
	for _, at := range times {
		base := -1
		for i, e := range snapshots {
			if !parseTime(t, e.MD().At).After(at) {
				base = i
			}
		}
		if base < 0 {
			continue // before the oldest snapshot retention kept
		}
		from := parseTime(t, snapshots[base].MD().At)
		if first := parseTime(t, lists[0].MD().From); from.Before(first) {
			t.Errorf("the oldest snapshot (%s) needs changes from before the oldest Change List (%s)", from, first)
			continue
		}
		got := s.inventory(snapshots[base].Loc)
		for _, l := range lists {
			_, d := s.docAt(l.Loc)
			for _, e := range d.Entries {
				dt := parseTime(t, e.MD().Datetime)
				if !dt.After(from) || dt.After(at) {
					continue
				}
				p := locPath(t, s.Cfg.BaseURL, e.Loc)
				if e.MD().Change == "deleted" {
					delete(got, p)
				} else {
					got[p] = sha256Of(e.MD())
				}
			}
		}
		if want := history[at]; !maps.Equal(got, want) {
			t.Errorf("state at %s reconstructed from the snapshot at %s:\n got %v\nwant %v", at.Format(time.RFC3339), from.Format(time.RFC3339), got, want)
		}
		reconstructed++
	}
	if reconstructed < 6 {
		t.Errorf("only %d earlier states could be reconstructed", reconstructed)
	}
	if len(snapshots) >= 6 {
		t.Errorf("%d snapshots kept: retention of 6h should have removed some", len(snapshots))
	}
}

// archiveEntries returns the entries of the archive at loc, through its
// parts when it is an Archive Index.
func (s *site) archiveEntries(loc string) []entry {
	s.t.Helper()
	_, d := s.docAt(loc)
	if d.Root == "urlset" {
		return d.Entries
	}
	var all []entry
	for _, p := range d.Entries {
		_, part := s.docAt(p.Loc)
		all = append(all, part.Entries...)
	}
	return all
}

// inventory reads the Resource List at loc (through its parts when it is
// an index) into path -> sha-256.
func (s *site) inventory(loc string) map[string]string {
	s.t.Helper()
	inv := map[string]string{}
	for _, e := range s.archiveEntries(loc) {
		inv[locPath(s.t, s.Cfg.BaseURL, e.Loc)] = sha256Of(e.MD())
	}
	return inv
}
