package destination_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rsgen/rsgen/destination"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
)

// TestFetchesArePolite mirrors 60 resources with 3 jobs: never more than
// 3 requests at once, over at most 3 connections kept alive, each
// naming rsgen as its User-Agent.
func TestFetchesArePolite(t *testing.T) {
	src := newFakeSource(t)
	src.skeleton(map[string]string{rs.CapResourceList: "resourcelist.xml"})
	files := map[string]string{}
	for i := range 60 {
		files[fmt.Sprintf("f%02d.txt", i)] = strings.Repeat("x", i)
	}
	src.resources(t0, files)
	var inFlight, most atomic.Int64
	var mu sync.Mutex
	agents, conns := map[string]bool{}, map[string]bool{}
	src.srv.setWrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			mu.Lock()
			agents[r.Header.Get("User-Agent")] = true
			conns[r.RemoteAddr] = true
			mu.Unlock()
			next.ServeHTTP(w, r)
		})
	})
	o := src.options(filepath.Join(t.TempDir(), "mirror"))
	o.Jobs, o.UserAgent = 3, "rsgen/v9.9.9"
	mustSync(t, o)
	if m := most.Load(); m > 3 {
		t.Errorf("%d requests at once, want at most 3", m)
	}
	if len(conns) > 3 {
		t.Errorf("%d connections for 62 requests, want at most 3: kept alive", len(conns))
	}
	if len(agents) != 1 || !agents["rsgen/v9.9.9"] {
		t.Errorf("User-Agents %v, want rsgen/v9.9.9 only", agents)
	}
}

// TestKeepDeletedAndOtherHosts follows a deletion with KeepDeleted: the
// file stays, the state forgets it (an audit calls it extra); and mirrors
// a resource on another host under DIR/HOST/ with OtherHosts.
func TestKeepDeletedAndOtherHosts(t *testing.T) {
	src := newFakeSource(t)
	src.skeleton(map[string]string{rs.CapResourceList: "resourcelist.xml", rs.CapChangeList: "changelist.xml"})
	src.file("a.txt", "a")
	src.file("elsewhere/x.txt", "x")
	other := res("elsewhere/x.txt", "x")
	other.Loc = "https://other.example/x.txt"
	src.doc("resourcelist.xml", rs.URLSet, rs.MD{Capability: rs.CapResourceList, At: t0}, res("a.txt", "a"), other)
	src.doc("changelist.xml", rs.URLSet, rs.MD{Capability: rs.CapChangeList, From: t0})
	dir := filepath.Join(t.TempDir(), "mirror")
	o := src.options(dir)
	o.OtherHosts = true
	o.Maps = append(o.Maps, destination.Map{From: "https://other.example/", To: src.srv.URL() + "elsewhere/"})
	mustSync(t, o)
	sameTree(t, treeOf(t, dir), map[string]string{"a.txt": "a", "other.example/x.txt": "x"})

	src.doc("changelist.xml", rs.URLSet, rs.MD{Capability: rs.CapChangeList, From: t0},
		change(rs.ChangeDeleted, "a.txt", "", t0.Add(1)))
	o.KeepDeleted = true
	if sum := mustSync(t, o); sum.Deleted != 0 {
		t.Errorf("%d deleted with KeepDeleted", sum.Deleted)
	}
	sameTree(t, treeOf(t, dir), map[string]string{"a.txt": "a", "other.example/x.txt": "x"})
	src.doc("resourcelist.xml", rs.URLSet, rs.MD{Capability: rs.CapResourceList, At: t0.Add(1)}, other)
	if _, events, err := audit(t, o); !errors.Is(err, destination.ErrOutOfSync) || !hasEvent(events, destination.EventExtra, "a.txt") {
		t.Errorf("audit: %v, want a.txt extra:%s", err, describe(events))
	}
}

// TestInterruptedSyncResumes cancels a sync in the middle, as Ctrl-C
// does: it returns the context's error, and the next sync finishes what
// it left, fetching none of what it verified.
func TestInterruptedSyncResumes(t *testing.T) {
	src := newFakeSource(t)
	src.skeleton(map[string]string{rs.CapResourceList: "resourcelist.xml"})
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("d/f%02d.txt", i)] = fmt.Sprint(i)
	}
	src.resources(t0, files)
	var gets atomic.Int64
	src.srv.setWrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/d/") {
				gets.Add(1)
			}
			next.ServeHTTP(w, r)
		})
	})
	dir := filepath.Join(t.TempDir(), "mirror")
	o := src.options(dir)
	o.Jobs = 1
	ctx, cancel := context.WithCancel(context.Background())
	fetched := 0
	o.Notify = func(e destination.Event) {
		if e.Kind == destination.EventFetched {
			if fetched++; fetched == 10 {
				cancel()
			}
		}
	}
	if _, err := destination.Sync(ctx, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted sync: %v, want context.Canceled", err)
	}
	before := gets.Load()
	sum := mustSync(t, o)
	if sum.Unchanged < 10 || gets.Load()-before != 40-sum.Unchanged {
		t.Errorf("resumed: %d unchanged, %d fetched again; want the 10 verified left alone", sum.Unchanged, gets.Load()-before)
	}
	sameTree(t, treeOf(t, dir), files) // and no temporary file
}

// TestStateIsLockedAndPruned: a second sync on a state in use is refused,
// naming the process; and the state keeps only the documents the last
// sync read.
func TestStateIsLockedAndPruned(t *testing.T) {
	src := newFakeSource(t)
	src.skeleton(map[string]string{rs.CapResourceList: "resourcelist.xml", rs.CapChangeList: "changelist.xml"})
	src.resources(t0, map[string]string{"a.txt": "a"})
	src.doc("changelist.xml", rs.URLSet, rs.MD{Capability: rs.CapChangeList, From: t0})
	dir := filepath.Join(t.TempDir(), "mirror")
	o := src.options(dir)
	lock, err := snapshot.AcquireLock(context.Background(), destination.DefaultState(dir), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, o); err == nil || !strings.Contains(err.Error(), "another rsgen sync is running on the state") {
		t.Errorf("a sync on a locked state: %v", err)
	}
	lock.Release()
	mustSync(t, o) // a baseline: the Source Description, the Capability List, the Resource List
	mustSync(t, o) // the changes: the Resource List is no longer read
	docs, _ := filepath.Glob(filepath.Join(destination.DefaultState(dir), "documents", "*.xml"))
	if len(docs) != 3 {
		t.Errorf("%d documents kept, want the 3 the last sync read", len(docs))
	}
}
