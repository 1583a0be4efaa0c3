package destination_test

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsgen/rsgen/destination"
)

// folders serves folders of this machine over HTTP on loopback, each at a
// URL path prefix, as a static web server does: the longest prefix wins,
// and a file without an extension (the Source Description) is XML. The
// folders can be swapped while it runs, as a Source is rebuilt.
type folders struct {
	srv      *httptest.Server
	mu       sync.Mutex
	roots    map[string]string // URL path prefix → folder
	requests atomic.Int64
	wrap     func(http.Handler) http.Handler // hostile behaviours, in some tests
}

func serveFolders(t *testing.T, roots map[string]string) *folders {
	t.Helper()
	f := &folders{roots: roots}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		h := http.Handler(http.HandlerFunc(f.serve))
		f.mu.Lock()
		if f.wrap != nil {
			h = f.wrap(h)
		}
		f.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *folders) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	best, dir := "", ""
	for prefix, d := range f.roots {
		if strings.HasPrefix(r.URL.Path, prefix) && len(prefix) > len(best) {
			best, dir = prefix, d
		}
	}
	f.mu.Unlock()
	if dir == "" {
		http.NotFound(w, r)
		return
	}
	name := strings.TrimPrefix(r.URL.Path, best)
	if strings.HasSuffix(name, "resourcesync") || strings.HasSuffix(name, ".xml") {
		w.Header().Set("Content-Type", "application/xml")
	}
	http.ServeFile(w, r, filepath.Join(dir, filepath.FromSlash(name)))
}

func (f *folders) set(roots map[string]string) {
	f.mu.Lock()
	f.roots = roots
	f.mu.Unlock()
}

func (f *folders) setWrap(wrap func(http.Handler) http.Handler) {
	f.mu.Lock()
	f.wrap = wrap
	f.mu.Unlock()
}

// URL returns the server's base URL, with a trailing slash.
func (f *folders) URL() string { return f.srv.URL + "/" }

// run syncs with the options o, filling in fast retries for tests, and
// returns the summary and the events.
func run(t *testing.T, o destination.Options) (*destination.Summary, []destination.Event, error) {
	t.Helper()
	var events []destination.Event
	o.Notify = func(e destination.Event) { events = append(events, e) }
	if o.Backoff == 0 {
		o.Backoff = time.Millisecond
	}
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Second
	}
	sum, err := destination.Sync(context.Background(), o)
	return sum, events, err
}

// mustSync syncs and fails the test on any error.
func mustSync(t *testing.T, o destination.Options) *destination.Summary {
	t.Helper()
	sum, events, err := run(t, o)
	if err != nil {
		t.Fatalf("sync: %v\nevents: %v", err, describe(events))
	}
	return sum
}

// audit audits and returns its summary and error.
func audit(t *testing.T, o destination.Options) (*destination.Summary, []destination.Event, error) {
	t.Helper()
	var events []destination.Event
	o.Notify = func(e destination.Event) { events = append(events, e) }
	o.Backoff = time.Millisecond
	sum, err := destination.Audit(context.Background(), o)
	return sum, events, err
}

func describe(events []destination.Event) string {
	var b strings.Builder
	for _, e := range events {
		if e.Kind == destination.EventFetched || e.Kind == destination.EventDeleted {
			continue
		}
		b.WriteString("\n  " + e.Kind.String() + " " + e.Path + " " + e.URL + " " + e.Msg)
		if e.Err != nil {
			b.WriteString(" " + e.Err.Error())
		}
	}
	return b.String()
}

// treeOf returns the files under dir, by slash path, with their bytes;
// links and special files are named by their kind.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.IsDir():
			return nil
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			files[filepath.ToSlash(rel)] = string(data)
			return err
		}
		files[filepath.ToSlash(rel)] = "<" + d.Type().String() + ">"
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return files
}

// sameTree fails the test unless the folders got and want hold the same
// files with the same bytes.
func sameTree(t *testing.T, got, want map[string]string) {
	t.Helper()
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok:
			t.Errorf("%s: missing", p)
		case g != w:
			t.Errorf("%s: %d bytes %q…, want %d bytes %q…", p, len(g), clip(g), len(w), clip(w))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: extra", p)
		}
	}
}

func clip(s string) string {
	if len(s) > 20 {
		return s[:20]
	}
	return s
}

// emptyFolders lists the folders under dir that hold nothing.
func emptyFolders(t *testing.T, dir string) []string {
	t.Helper()
	var empty []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != dir {
			if entries, _ := os.ReadDir(p); len(entries) == 0 {
				empty = append(empty, p)
			}
		}
		return nil
	})
	return empty
}

func prefixed(files map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for p, data := range files {
		out[prefix+p] = data
	}
	return out
}

func hasEvent(events []destination.Event, kind destination.EventKind, substr string) bool {
	for _, e := range events {
		text := e.Path + " " + e.URL + " " + e.Msg
		if e.Err != nil {
			text += " " + e.Err.Error()
		}
		if e.Kind == kind && strings.Contains(text, substr) {
			return true
		}
	}
	return false
}
