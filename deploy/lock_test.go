package deploy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestS3LockRefusesAnotherDeploy holds the bucket's lock as a deploy from
// another machine would: a deploy fails naming it, and writes nothing;
// with BreakLock it takes the lock over, and the other deploy learns at its
// next renewal that it lost it.
func TestS3LockRefusesAnotherDeploy(t *testing.T) {
	v := startVersity(t)
	p := newProxy(t, v.endpoint)
	s := tinySite(t, v.website, 2)
	store := v.store(t, p.srv.URL, "")
	other := Holder{Owner: "x", Host: "ci-runner-7", PID: 4242, State: "/builds/site/.rsgen", Started: time.Now()}
	held, err := store.Lock(context.Background(), other, false)
	if err != nil {
		t.Fatal(err)
	}
	p.take()

	_, err = Run(context.Background(), s.options(store))
	var locked *LockedError
	if !errors.As(err, &locked) || locked.Holder.Host != "ci-runner-7" || locked.Holder.PID != 4242 {
		t.Fatalf("deploy while another holds the lock: %v", err)
	}
	if !strings.Contains(err.Error(), "ci-runner-7") || !strings.Contains(err.Error(), "--break-lock") {
		t.Errorf("the error does not say who holds the lock and what to do: %v", err)
	}
	for _, r := range p.take() {
		if objectPut(r) || r.key == MetaDir+"/manifest" && r.method == http.MethodPut {
			t.Errorf("the refused deploy wrote %s", r.key)
		}
	}

	opts := s.options(store)
	opts.BreakLock = true
	var warned atomic.Bool
	opts.Notify = func(e Event) {
		if e.Kind == EventWarning && strings.Contains(e.Msg, "ci-runner-7") {
			warned.Store(true)
		}
	}
	run(t, opts)
	if !warned.Load() {
		t.Error("taking the lock over was not reported")
	}
	lease := held.(*s3Lease)
	if !lease.renewOnce() {
		t.Fatal("the deploy whose lock was taken over renewed it")
	}
	select {
	case <-lease.Lost():
	default:
		t.Fatal("the lease taken over is not lost")
	}
	if err := lease.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := v.keys(t, MetaDir+"/"); len(got) != 1 || got[0] != "manifest" {
		t.Errorf("the deploy folder holds %v; want the manifest alone (the lock released)", got)
	}
}

// TestStaleLock: a lock is stale once it was not renewed for lockTTL, by
// the bucket's clock.
func TestStaleLock(t *testing.T) {
	renewed := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		now   time.Time
		stale bool
	}{
		{renewed, false},
		{renewed.Add(lockTTL - time.Second), false},
		{renewed.Add(lockTTL), true},
		{renewed.Add(-time.Hour), false}, // a clock behind: not stale
	} {
		if got := stale(renewed, c.now); got != c.stale {
			t.Errorf("renewed %s, now %s: stale %v; want %v", renewed, c.now, got, c.stale)
		}
	}
}

// TestOneDeployPerStateFolder: a second deploy to the same store from the
// same state folder fails while the first runs, naming it.
func TestOneDeployPerStateFolder(t *testing.T) {
	s := tinySite(t, "https://data.example.org/", 2)
	store, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d := &deployer{opts: s.options(store), store: store}
	d.opts.Now = time.Now
	d.dir = t.TempDir()
	_, unlock, err := d.lockLocally()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	d2 := &deployer{opts: d.opts, store: store, dir: d.dir}
	host, _ := os.Hostname()
	_, _, err = d2.lockLocally()
	if err == nil || !strings.Contains(err.Error(), "another rsgen deploy") ||
		!strings.Contains(err.Error(), fmt.Sprintf("held by process %d on %s (state ", os.Getpid(), host)) {
		t.Fatalf("second deploy from the same state folder: %v; want it to name the holder's process and host", err)
	}
}

// TestDirLock: a web root's lock is an flock; a second deploy fails
// naming the first.
func TestDirLock(t *testing.T) {
	store, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	first, err := store.Lock(context.Background(), Holder{Host: "a", PID: 1}, false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.Lock(context.Background(), Holder{Host: "b", PID: 2}, false)
	var locked *LockedError
	if !errors.As(err, &locked) || locked.Holder.PID != 1 {
		t.Fatalf("second lock: %v", err)
	}
	first.Release(context.Background())
	again, err := store.Lock(context.Background(), Holder{Host: "b", PID: 2}, false)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	again.Release(context.Background())
}
