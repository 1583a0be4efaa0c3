package destination_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsgen/rsgen/destination"
	"github.com/rsgen/rsgen/rs"
)

// generated is a Source of n resources that a handler makes up as it
// serves them: a Resource List index over parts of rs.MaxEntries entries,
// a Change List of the last epoch's updates (every hundredth resource),
// and resources of a few bytes each. Nothing of it is held in memory.
type generated struct {
	n     int
	epoch atomic.Int64 // changes every resource whose index is a multiple of 100
}

func (g *generated) content(i int) string {
	if i%100 == 0 {
		return fmt.Sprintf("resource %d, version %d\n", i, g.epoch.Load())
	}
	return fmt.Sprintf("resource %d\n", i)
}

func (g *generated) path(i int) string { return fmt.Sprintf("d%03d/f%07d.txt", i/1000%1000, i) }

func (g *generated) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	parts := (g.n + rs.MaxEntries - 1) / rs.MaxEntries
	at := t0.Add(time.Duration(g.epoch.Load()) * time.Hour)
	switch p := r.URL.Path; {
	case p == "/.well-known/resourcesync":
		g.doc(w, rs.URLSet, rs.MD{Capability: rs.CapDescription}, func(yield func(*rs.Entry) bool) {
			yield(&rs.Entry{Loc: fakeBase + "capabilitylist.xml", MD: rs.MD{Capability: rs.CapCapabilityList}})
		})
	case p == "/capabilitylist.xml":
		g.doc(w, rs.URLSet, rs.MD{Capability: rs.CapCapabilityList}, func(yield func(*rs.Entry) bool) {
			if yield(&rs.Entry{Loc: fakeBase + "resourcelist.xml", MD: rs.MD{Capability: rs.CapResourceList}}) {
				yield(&rs.Entry{Loc: fakeBase + "changelist.xml", MD: rs.MD{Capability: rs.CapChangeList}})
			}
		})
	case p == "/changelist.xml":
		g.doc(w, rs.URLSet, rs.MD{Capability: rs.CapChangeList, From: t0}, func(yield func(*rs.Entry) bool) {
			for i := 0; i < g.n && g.epoch.Load() > 0; i += 100 {
				c := g.content(i)
				sum := sha256.Sum256([]byte(c))
				e := &rs.Entry{Loc: fakeBase + g.path(i), MD: rs.MD{Change: rs.ChangeUpdated, Datetime: at,
					Hash: "sha-256:" + hex.EncodeToString(sum[:]), Length: int64(len(c)), HasLength: true}}
				if !yield(e) {
					return
				}
			}
		})
	case p == "/resourcelist.xml":
		g.doc(w, rs.SitemapIndex, rs.MD{Capability: rs.CapResourceList, At: at}, func(yield func(*rs.Entry) bool) {
			for k := range parts {
				if !yield(&rs.Entry{Loc: fmt.Sprintf("%sresourcelist-%d.xml", fakeBase, k)}) {
					return
				}
			}
		})
	case strings.HasPrefix(p, "/resourcelist-"):
		k, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(p, "/resourcelist-"), ".xml"))
		g.doc(w, rs.URLSet, rs.MD{Capability: rs.CapResourceList, At: at}, func(yield func(*rs.Entry) bool) {
			e := &rs.Entry{}
			for i := k * rs.MaxEntries; i < min(g.n, (k+1)*rs.MaxEntries); i++ {
				c := g.content(i)
				sum := sha256.Sum256([]byte(c))
				*e = rs.Entry{Loc: fakeBase + g.path(i), MD: rs.MD{Hash: "sha-256:" + hex.EncodeToString(sum[:]), Length: int64(len(c)), HasLength: true}}
				if !yield(e) {
					return
				}
			}
		})
	default:
		var i int
		if _, err := fmt.Sscanf(p[strings.LastIndexByte(p, '/')+1:], "f%07d.txt", &i); err != nil || i >= g.n {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, g.content(i))
	}
}

func (g *generated) doc(w http.ResponseWriter, root rs.Root, md rs.MD, entries func(func(*rs.Entry) bool)) {
	w.Header().Set("Content-Type", "application/xml")
	dw := rs.NewWriter(w, root)
	dw.Start(md)
	for e := range entries {
		if err := dw.Entry(e); err != nil {
			panic(err)
		}
	}
	dw.Close()
}

// peakHeap samples the heap in use until stop is called, and returns its
// peak.
func peakHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond): // a sampling interval
			}
		}
	}()
	return func() uint64 { close(done); <-finished; return peak.Load() }
}

// TestMemoryStaysBounded mirrors a Source of many resources, then
// follows its Change List after 1% changed, sampling the heap: it is
// bounded by the fetches in flight and one sorted run, not by the number
// of resources. 2,000 resources by default, with sorts that spill every
// 64 KiB; 1,000,000 with RSGEN_STRESS=1.
func TestMemoryStaysBounded(t *testing.T) {
	n, limit := 2_000, uint64(48<<20)
	if os.Getenv("RSGEN_STRESS") == "1" {
		n, limit = 1_000_000, 64<<20
	} else {
		defer destination.SetSortMemory(64 << 10)()
	}
	g := &generated{n: n}
	srv := httptest.NewServer(g)
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "mirror")
	o := destination.Options{Source: fakeBase, Dir: dir, Jobs: 8, Maps: []destination.Map{{From: fakeBase, To: srv.URL + "/"}}}
	runtime.GC()
	stop := peakHeap()
	start := time.Now()
	sum := syncHoldingNoEvents(t, o)
	took := time.Since(start)
	if sum.Fetched != int64(n) {
		t.Fatalf("%d fetched, want %d", sum.Fetched, n)
	}
	g.epoch.Add(1)
	start2 := time.Now()
	sum = syncHoldingNoEvents(t, o)
	took2 := time.Since(start2)
	peak := stop()
	if sum.Mode != "incremental" || sum.Fetched != int64(n/100) {
		t.Errorf("after 1%% changed: %s, %d fetched; want incremental, %d", sum.Mode, sum.Fetched, n/100)
	}
	t.Logf("%d resources: baseline %s, again after 1%% changed %s; peak heap %.1f MiB", n, took.Round(time.Millisecond), took2.Round(time.Millisecond), float64(peak)/(1<<20))
	if peak > limit {
		t.Errorf("peak heap %.1f MiB over %d resources, more than %d MiB", float64(peak)/(1<<20), n, limit>>20)
	}
}

// syncHoldingNoEvents syncs, keeping only the failures of the events:
// the helper run holds every event, a million of them here, which would
// be the test's memory, not the sync's.
func syncHoldingNoEvents(t *testing.T, o destination.Options) *destination.Summary {
	t.Helper()
	var failures []string
	o.Notify = func(e destination.Event) {
		if e.Kind == destination.EventFailed && len(failures) < 10 {
			failures = append(failures, e.Err.Error())
		}
	}
	sum, err := destination.Sync(context.Background(), o)
	if err != nil {
		t.Fatalf("sync: %v %q", err, failures)
	}
	return sum
}
