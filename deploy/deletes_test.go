package deploy

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"
)

// TestS3MaxDeletes refuses a deploy that would delete more than
// MaxDeletes objects, before it writes anything, and says how many.
func TestS3MaxDeletes(t *testing.T) {
	v := startVersity(t)
	p := newProxy(t, v.endpoint)
	s := tinySite(t, v.website, 5)
	store := v.store(t, p.srv.URL, "")
	run(t, s.options(store))
	for _, f := range []string{"docs/file-000.txt", "docs/file-001.txt", "docs/file-002.txt"} {
		s.remove(t, f)
	}
	s.build(t)
	p.take()

	opts := s.options(store)
	opts.MaxDeletes = 2
	_, err := Run(context.Background(), opts)
	var tooMany *TooManyDeletesError
	if !errors.As(err, &tooMany) || tooMany.Deletes != 3 || tooMany.Max != 2 {
		t.Fatalf("deploy with 3 deletes and --max-deletes 2: %v", err)
	}
	for _, r := range p.take() {
		if r.method != http.MethodGet {
			t.Errorf("the refused deploy made a %s request (%s)", r.method, r.key)
		}
	}
	if !slices.Contains(v.keys(t, ""), "docs/file-000.txt") {
		t.Error("the refused deploy deleted a file")
	}

	opts.MaxDeletes = 3
	if sum := run(t, opts); sum.Deletes != 3 {
		t.Errorf("deleted %d; want 3", sum.Deletes)
	}
	if slices.Contains(v.keys(t, ""), "docs/file-000.txt") {
		t.Error("the deploy did not delete the file")
	}
}

// TestS3DeleteGrace keeps an object that left the output for the grace
// period, counted from the first deploy that found it gone, and deletes it
// with the first deploy after; meanwhile a deploy with nothing else to do
// makes one request.
func TestS3DeleteGrace(t *testing.T) {
	v := startVersity(t)
	p := newProxy(t, v.endpoint)
	s := tinySite(t, v.website, 3)
	store := v.store(t, p.srv.URL, "")
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	opts := s.options(store)
	opts.Grace = time.Hour
	opts.Now = func() time.Time { return now }
	run(t, opts)
	s.remove(t, "docs/file-001.txt")
	s.build(t)

	if sum := run(t, opts); sum.Deletes != 0 || sum.Deferred != 1 {
		t.Errorf("first deploy without the file: %d deletes, %d deferred; want 0, 1", sum.Deletes, sum.Deferred)
	}
	p.take()
	now = now.Add(59 * time.Minute)
	if sum := run(t, opts); sum.Deletes != 0 || sum.Deferred != 1 {
		t.Errorf("within the grace period: %d deletes, %d deferred", sum.Deletes, sum.Deferred)
	}
	if log := p.take(); len(log) != 1 {
		t.Errorf("a deploy with nothing to do but wait made %d requests: %v", len(log), describe(log))
	}
	if !slices.Contains(v.keys(t, ""), "docs/file-001.txt") {
		t.Fatal("the file was deleted within its grace period")
	}
	now = now.Add(time.Minute)
	if sum := run(t, opts); sum.Deletes != 1 || sum.Deferred != 0 {
		t.Errorf("after the grace period: %d deletes, %d deferred; want 1, 0", sum.Deletes, sum.Deferred)
	}
	if slices.Contains(v.keys(t, ""), "docs/file-001.txt") {
		t.Error("the file outlived its grace period")
	}
}
