package destination_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsgen/rsgen/destination"
	"github.com/rsgen/rsgen/rs"
)

// requestCounter counts the requests of each path.
type requestCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *requestCounter) add(p string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[p]++
	return c.n[p]
}

func (c *requestCounter) get(p string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[p]
}

// TestBadBytesNeverLand serves a resource whose bytes are not those
// listed, in each way a Source or a network can get them wrong: the sync
// tries again, reports it, places every other resource, leaves no
// partial file, and does not move its sync point; once the Source serves
// the right bytes, the next sync places them.
func TestBadBytesNeverLand(t *testing.T) {
	for _, tc := range []struct {
		name   string
		serve  func(w http.ResponseWriter, r *http.Request) // the bad resource's response
		errHas string
	}{
		{"wrong hash", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "BAD bytes!") }, "sha-256 is "},
		{"wrong length", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "good bytes and more") }, "length is 19"},
		{"wrong length, no Content-Length", func(w http.ResponseWriter, r *http.Request) {
			w.(http.Flusher).Flush()
			fmt.Fprint(w, "good bytes and more")
		}, "length is "},
		{"truncated", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "10")
			fmt.Fprint(w, "good")
		}, "unexpected EOF"},
		{"an error status", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "busy", http.StatusBadGateway) }, "502"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := newFakeSource(t)
			src.skeleton(map[string]string{rs.CapResourceList: "resourcelist.xml"})
			src.resources(t0, map[string]string{"ok.txt": "fine", "bad.txt": "good bytes"})
			var count requestCounter
			src.srv.setWrap(func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/bad.txt" {
						count.add(r.URL.Path)
						tc.serve(w, r)
						return
					}
					next.ServeHTTP(w, r)
				})
			})
			dir := filepath.Join(t.TempDir(), "mirror")
			o := src.options(dir)
			o.Retries = 2
			sum, events, err := run(t, o)
			if !errors.Is(err, destination.ErrIncomplete) {
				t.Fatalf("sync: %v, want ErrIncomplete", err)
			}
			if !hasEvent(events, destination.EventFailed, tc.errHas) {
				t.Errorf("no failure saying %q:%s", tc.errHas, describe(events))
			}
			if n := count.get("/bad.txt"); n != 3 {
				t.Errorf("the bad resource was fetched %d times, want 3 (2 retries)", n)
			}
			if sum.Failed != 1 || sum.Fetched != 1 {
				t.Errorf("%d failed, %d fetched; want 1 and 1", sum.Failed, sum.Fetched)
			}
			sameTree(t, treeOf(t, dir), map[string]string{"ok.txt": "fine"})

			src.srv.setWrap(nil)
			if sum := mustSync(t, o); sum.Mode != "baseline" || sum.Fetched != 1 || sum.Unchanged != 1 {
				t.Errorf("after the Source mends: %s, %d fetched, %d unchanged; want a baseline fetching 1", sum.Mode, sum.Fetched, sum.Unchanged)
			}
			sameTree(t, treeOf(t, dir), map[string]string{"ok.txt": "fine", "bad.txt": "good bytes"})
		})
	}
}

// TestStalledBodyFails serves a body that stops coming: the fetch gives
// up after the timeout, tries again, and reports it.
func TestStalledBodyFails(t *testing.T) {
	src := newFakeSource(t)
	src.skeleton(map[string]string{rs.CapResourceList: "resourcelist.xml"})
	src.resources(t0, map[string]string{"slow.txt": "0123456789"})
	src.srv.setWrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/slow.txt" {
				next.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Content-Length", "10")
			fmt.Fprint(w, "01234")
			w.(http.Flusher).Flush()
			<-r.Context().Done() // until the client gives up
		})
	})
	dir := filepath.Join(t.TempDir(), "mirror")
	o := src.options(dir)
	o.Timeout, o.Retries = 50*time.Millisecond, 1
	_, events, err := run(t, o)
	if !errors.Is(err, destination.ErrIncomplete) || !hasEvent(events, destination.EventFailed, "no byte came for 50ms") {
		t.Fatalf("sync: %v, want a stalled fetch reported:%s", err, describe(events))
	}
	sameTree(t, treeOf(t, dir), map[string]string{})
}

// TestRetryAfterIsHonoured answers 503 and 429 with Retry-After: the
// sync waits and tries again; a Source that asks for longer than the sync
// waits fails the fetch at once.
func TestRetryAfterIsHonoured(t *testing.T) {
	src := newFakeSource(t)
	src.skeleton(map[string]string{rs.CapResourceList: "resourcelist.xml"})
	src.resources(t0, map[string]string{"a.txt": "a", "never.txt": "n"})
	var count requestCounter
	src.srv.setWrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch n := count.add(r.URL.Path); {
			case r.URL.Path == "/a.txt" && n == 1:
				w.Header().Set("Retry-After", "0")
				http.Error(w, "slow down", http.StatusTooManyRequests)
			case r.URL.Path == "/a.txt" && n == 2:
				w.Header().Set("Retry-After", "0")
				http.Error(w, "busy", http.StatusServiceUnavailable)
			case r.URL.Path == "/never.txt":
				w.Header().Set("Retry-After", "3600")
				http.Error(w, "come back in an hour", http.StatusServiceUnavailable)
			default:
				next.ServeHTTP(w, r)
			}
		})
	})
	dir := filepath.Join(t.TempDir(), "mirror")
	o := src.options(dir)
	o.MaxRetryAfter = time.Second
	_, events, err := run(t, o)
	if !errors.Is(err, destination.ErrIncomplete) || !hasEvent(events, destination.EventFailed, "never.txt: 503") {
		t.Fatalf("sync: %v:%s", err, describe(events))
	}
	if n := count.get("/a.txt"); n != 3 {
		t.Errorf("a.txt fetched %d times, want 3", n)
	}
	if n := count.get("/never.txt"); n != 1 {
		t.Errorf("never.txt fetched %d times, want 1: its Retry-After is beyond what the sync waits", n)
	}
	sameTree(t, treeOf(t, dir), map[string]string{"a.txt": "a"})
}

// TestRedirectToAnotherHost follows a resource redirected to another
// host only with OtherHosts; its bytes are verified either way.
func TestRedirectToAnotherHost(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "moved") }))
	defer other.Close()
	src := newFakeSource(t)
	src.skeleton(map[string]string{rs.CapResourceList: "resourcelist.xml"})
	src.resources(t0, map[string]string{"moved.txt": "moved", "here.txt": "here"})
	src.srv.setWrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/moved.txt" {
				http.Redirect(w, r, other.URL+"/elsewhere", http.StatusFound)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	dir := filepath.Join(t.TempDir(), "mirror")
	o := src.options(dir)
	_, events, err := run(t, o)
	if !errors.Is(err, destination.ErrIncomplete) || !hasEvent(events, destination.EventFailed, "redirected to another host") {
		t.Fatalf("sync: %v:%s", err, describe(events))
	}
	sameTree(t, treeOf(t, dir), map[string]string{"here.txt": "here"})
	o.OtherHosts = true
	mustSync(t, o)
	sameTree(t, treeOf(t, dir), map[string]string{"here.txt": "here", "moved.txt": "moved"})
}

// TestHostileLocsWriteNothingOutside lists resources whose URIs lead out
// of DIR in every way, or cannot be file names: each is refused, the
// others land, and nothing appears outside DIR and the state.
func TestHostileLocsWriteNothingOutside(t *testing.T) {
	src := newFakeSource(t)
	src.skeleton(map[string]string{rs.CapResourceList: "resourcelist.xml"})
	src.file("ok.txt", "ok")
	hostile := []string{
		"../escape.txt", "%2e%2e/escape.txt", "a/%2E%2E/%2E%2E/escape.txt", "..%2fescape.txt", "a//b.txt",
		"dir/", "nul%00.txt", "q?x=1", "frag#x", strings.Repeat("n", 300) + ".txt", ".rsgen-tmp-sync/x",
	}
	entries := []rs.Entry{res("ok.txt", "ok")}
	for _, h := range hostile {
		entries = append(entries, rs.Entry{Loc: fakeBase + h})
	}
	entries = append(entries,
		rs.Entry{Loc: "file:///etc/passwd"}, rs.Entry{Loc: "/etc/passwd"},
		rs.Entry{Loc: "https://other.example/x.txt"}, rs.Entry{Loc: "https://other.example/../../x.txt"})
	src.doc("resourcelist.xml", rs.URLSet, rs.MD{Capability: rs.CapResourceList, At: t0}, entries...)
	sandbox := t.TempDir()
	dir := filepath.Join(sandbox, "mirror")
	sum, events, err := run(t, src.options(dir))
	if !errors.Is(err, destination.ErrIncomplete) {
		t.Fatalf("sync: %v, want ErrIncomplete", err)
	}
	if sum.Refused != int64(len(hostile)+2) || sum.OtherHosts != 2 {
		t.Errorf("%d refused, %d on other hosts; want %d and 2:%s", sum.Refused, sum.OtherHosts, len(hostile)+2, describe(events))
	}
	sameTree(t, treeOf(t, dir), map[string]string{"ok.txt": "ok"})
	if names, _ := os.ReadDir(sandbox); len(names) != 2 {
		t.Errorf("the sandbox holds %d entries, want mirror and .rsgen-sync", len(names))
	}
	// refusals are for good: the sync point moves, the next sync follows changes
	if sum, _, _ := run(t, src.options(dir)); sum.Mode != "baseline" {
		t.Logf("second sync: %s", sum.Mode)
	}
}

// TestSymlinksInDirAreNotFollowed puts links in DIR where a folder and a
// file of the mirror go: nothing is written through them, and the place
// of a file is taken by the file, the link replaced.
func TestSymlinksInDirAreNotFollowed(t *testing.T) {
	src := newFakeSource(t)
	src.skeleton(map[string]string{rs.CapResourceList: "resourcelist.xml"})
	src.resources(t0, map[string]string{"sub/x.txt": "x", "file.txt": "f"})
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "victim.txt"), []byte("victim"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "mirror")
	os.MkdirAll(dir, 0o755)
	os.Symlink(outside, filepath.Join(dir, "sub"))
	os.Symlink(filepath.Join(outside, "victim.txt"), filepath.Join(dir, "file.txt"))
	_, events, err := run(t, src.options(dir))
	if !errors.Is(err, destination.ErrIncomplete) || !hasEvent(events, destination.EventFailed, "symbolic link") {
		t.Fatalf("sync: %v:%s", err, describe(events))
	}
	sameTree(t, treeOf(t, outside), map[string]string{"victim.txt": "victim"})
	if got := treeOf(t, dir); got["file.txt"] != "f" || got["sub"] != "<L--------->" {
		t.Errorf("DIR holds %v; want file.txt placed, sub left a link", got)
	}
}

// TestChangeListsOutOfOrder follows a Change List Index that lists its
// lists out of order and itself, with events out of order inside a list
// and a list named again by the archive: every event is applied once,
// the newest per resource wins.
func TestChangeListsOutOfOrder(t *testing.T) {
	src := newFakeSource(t)
	src.skeleton(map[string]string{rs.CapResourceList: "resourcelist.xml", rs.CapChangeList: "changelist.xml", rs.CapChangeListArchive: "changelist-archive.xml"})
	src.resources(t0, map[string]string{"a.txt": "a0", "b.txt": "b0"})
	dir := filepath.Join(t.TempDir(), "mirror")
	o := src.options(dir)
	src.doc("changelist.xml", rs.SitemapIndex, rs.MD{Capability: rs.CapChangeList, From: t0},
		rs.Entry{Loc: fakeBase + "changelist.xml"})
	mustSync(t, o)

	h := time.Hour
	src.file("a.txt", "a3")
	src.file("c.txt", "c1")
	os.Remove(filepath.Join(src.dir, "b.txt"))
	src.doc("cl1.xml", rs.URLSet, rs.MD{Capability: rs.CapChangeList, From: t0, Until: t0.Add(2 * h)},
		change(rs.ChangeUpdated, "a.txt", "a2", t0.Add(h)),
		change(rs.ChangeUpdated, "a.txt", "a1", t0.Add(h/2)),
		change(rs.ChangeCreated, "c.txt", "c1", t0.Add(h/6)))
	src.doc("cl2.xml", rs.URLSet, rs.MD{Capability: rs.CapChangeList, From: t0.Add(2 * h)},
		change(rs.ChangeDeleted, "b.txt", "", t0.Add(3*h)),
		change(rs.ChangeUpdated, "a.txt", "a3", t0.Add(5*h/2)))
	src.doc("changelist.xml", rs.SitemapIndex, rs.MD{Capability: rs.CapChangeList, From: t0},
		rs.Entry{Loc: fakeBase + "cl2.xml", MD: rs.MD{From: t0.Add(2 * h)}},
		rs.Entry{Loc: fakeBase + "changelist.xml"},
		rs.Entry{Loc: fakeBase + "cl1.xml", MD: rs.MD{From: t0, Until: t0.Add(2 * h)}})
	src.doc("changelist-archive.xml", rs.URLSet, rs.MD{Capability: rs.CapChangeListArchive},
		rs.Entry{Loc: fakeBase + "cl1.xml", MD: rs.MD{From: t0, Until: t0.Add(2 * h)}})
	sum, events, err := run(t, o)
	if err != nil {
		t.Fatalf("sync: %v%s", err, describe(events))
	}
	if sum.Mode != "incremental" || sum.Fetched != 2 || sum.Deleted != 1 {
		t.Errorf("%s: %d fetched, %d deleted; want incremental, 2 and 1", sum.Mode, sum.Fetched, sum.Deleted)
	}
	if !hasEvent(events, destination.EventWarning, "lists itself") {
		t.Errorf("no warning of the index that lists itself:%s", describe(events))
	}
	sameTree(t, treeOf(t, dir), map[string]string{"a.txt": "a3", "c.txt": "c1"})

	// the same lists again: nothing is applied twice
	if sum := mustSync(t, o); sum.Fetched != 0 || sum.Deleted != 0 {
		t.Errorf("again: %d fetched, %d deleted; want nothing", sum.Fetched, sum.Deleted)
	}
}

// TestGapTakesANewBaseline follows a Source whose Change Lists start
// after the last sync: the sync says so and takes a new baseline, or
// with NoRebaseline stops with ErrGap.
func TestGapTakesANewBaseline(t *testing.T) {
	src := newFakeSource(t)
	src.skeleton(map[string]string{rs.CapResourceList: "resourcelist.xml", rs.CapChangeList: "changelist.xml"})
	src.resources(t0, map[string]string{"a.txt": "a0", "b.txt": "b0"})
	src.doc("changelist.xml", rs.URLSet, rs.MD{Capability: rs.CapChangeList, From: t0})
	dir := filepath.Join(t.TempDir(), "mirror")
	o := src.options(dir)
	mustSync(t, o)

	later := t0.Add(5 * time.Hour)
	src.resources(later, map[string]string{"a.txt": "a1", "c.txt": "c1"})
	os.Remove(filepath.Join(src.dir, "b.txt"))
	src.doc("changelist.xml", rs.URLSet, rs.MD{Capability: rs.CapChangeList, From: later.Add(-time.Hour)},
		change(rs.ChangeCreated, "c.txt", "c1", later))
	o.NoRebaseline = true
	if _, _, err := run(t, o); !errors.Is(err, destination.ErrGap) {
		t.Fatalf("with NoRebaseline: %v, want ErrGap", err)
	}
	sameTree(t, treeOf(t, dir), map[string]string{"a.txt": "a0", "b.txt": "b0"})
	o.NoRebaseline = false
	sum, events, err := run(t, o)
	if err != nil || sum.Mode != "baseline" || !hasEvent(events, destination.EventInfo, "taking a new baseline") {
		t.Fatalf("sync: %v, mode %s:%s", err, sum.Mode, describe(events))
	}
	sameTree(t, treeOf(t, dir), map[string]string{"a.txt": "a1", "c.txt": "c1"})
}

// TestFileBecomesFolder follows a resource that gives its name to a
// folder, and back: the deletion comes before the creation.
func TestFileBecomesFolder(t *testing.T) {
	src := newFakeSource(t)
	src.skeleton(map[string]string{rs.CapResourceList: "resourcelist.xml"})
	dir := filepath.Join(t.TempDir(), "mirror")
	o := src.options(dir)
	src.resources(t0, map[string]string{"x": "file"})
	mustSync(t, o)
	os.Remove(filepath.Join(src.dir, "x"))
	src.resources(t0.Add(time.Hour), map[string]string{"x/y": "inside"})
	mustSync(t, o)
	sameTree(t, treeOf(t, dir), map[string]string{"x/y": "inside"})
	os.RemoveAll(filepath.Join(src.dir, "x"))
	src.resources(t0.Add(2*time.Hour), map[string]string{"x": "file again"})
	mustSync(t, o)
	sameTree(t, treeOf(t, dir), map[string]string{"x": "file again"})

	// a list that names both a file and a folder of the same name
	src.file("x", "file")
	src.doc("resourcelist.xml", rs.URLSet, rs.MD{Capability: rs.CapResourceList, At: t0.Add(3 * time.Hour)},
		res("x", "file"), res("x/y", "inside"))
	os.MkdirAll(filepath.Join(src.dir, "xx"), 0o755)
	_, events, err := run(t, o)
	if !errors.Is(err, destination.ErrIncomplete) || !hasEvent(events, destination.EventFailed, "x/y") {
		t.Errorf("sync: %v:%s", err, describe(events))
	}
}

// TestSetsAreListedWhenAmbiguous reads a Source Description with two
// Capability Lists: without Set, the error names both; Set picks one, by
// name or URL; a Capability List URL picks itself.
func TestSetsAreListedWhenAmbiguous(t *testing.T) {
	src := newFakeSource(t)
	src.doc(".well-known/resourcesync", rs.URLSet, rs.MD{Capability: rs.CapDescription},
		rs.Entry{Loc: fakeBase + "resourcesync/books/capabilitylist.xml", MD: rs.MD{Capability: rs.CapCapabilityList}},
		rs.Entry{Loc: fakeBase + "resourcesync/maps/capabilitylist.xml", MD: rs.MD{Capability: rs.CapCapabilityList}})
	for _, set := range []string{"books", "maps"} {
		src.doc("resourcesync/"+set+"/capabilitylist.xml", rs.URLSet, rs.MD{Capability: rs.CapCapabilityList},
			rs.Entry{Loc: fakeBase + "resourcesync/" + set + "/resourcelist.xml", MD: rs.MD{Capability: rs.CapResourceList}})
		src.file(set+"/a.txt", set)
		src.doc("resourcesync/"+set+"/resourcelist.xml", rs.URLSet, rs.MD{Capability: rs.CapResourceList, At: t0}, res(set+"/a.txt", set))
	}
	o := src.options(filepath.Join(t.TempDir(), "mirror"))
	_, _, err := run(t, o)
	var usage *destination.UsageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "books  https://source.example/resourcesync/books/capabilitylist.xml") || !strings.Contains(err.Error(), "\n  maps ") {
		t.Fatalf("no set: %v, want a *UsageError listing the sets", err)
	}
	o.Set = "nope"
	if _, _, err := run(t, o); !errors.As(err, &usage) || !strings.Contains(err.Error(), "no such set") {
		t.Errorf("--set nope: %v", err)
	}
	o.Set = "maps"
	mustSync(t, o)
	sameTree(t, treeOf(t, o.Dir), map[string]string{"maps/a.txt": "maps"})

	o2 := src.options(filepath.Join(t.TempDir(), "books"))
	o2.Source = fakeBase + "resourcesync/books/capabilitylist.xml"
	if sum := mustSync(t, o2); sum.Set != "books" {
		t.Errorf("from the Capability List: set %q", sum.Set)
	}
	// a state holds one Source: another set into the same folder is refused
	o.Set, o.Source = "", o2.Source
	if _, _, err := run(t, o); !errors.As(err, &usage) || !strings.Contains(err.Error(), "is a mirror of") {
		t.Errorf("another set into the same folder: %v", err)
	}
}

// TestListPastTheLimitsFails reads a Resource List of more entries than
// a document may hold: an error, read in bounded memory, nothing placed.
func TestListPastTheLimitsFails(t *testing.T) {
	src := newFakeSource(t)
	src.skeleton(map[string]string{rs.CapResourceList: "resourcelist.xml"})
	entries := make([]rs.Entry, rs.MaxEntries+1)
	for i := range entries {
		entries[i] = rs.Entry{Loc: fmt.Sprintf("%sf%d", fakeBase, i)}
	}
	src.doc("resourcelist.xml", rs.URLSet, rs.MD{Capability: rs.CapResourceList, At: t0}, entries...)
	dir := filepath.Join(t.TempDir(), "mirror")
	if _, _, err := run(t, src.options(dir)); !errors.Is(err, rs.ErrTooLarge) {
		t.Fatalf("sync: %v, want rs.ErrTooLarge", err)
	}
	sameTree(t, treeOf(t, dir), map[string]string{})
}

// zipPackage writes a dump package at path p of the fake Source: its
// manifest, then the files by name, and returns its listing.
func (f *fakeSource) zipPackage(p string, manifest []rs.Entry, files map[string]string) rs.Entry {
	f.t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	mw, _ := zw.Create("manifest.xml")
	w := rs.NewWriter(mw, rs.URLSet)
	w.Start(rs.MD{Capability: rs.CapResourceDumpManifest, At: t0})
	for i := range manifest {
		if err := w.Entry(&manifest[i]); err != nil {
			f.t.Fatal(err)
		}
	}
	w.Close()
	for name, content := range files {
		fw, _ := zw.Create(name)
		fw.Write([]byte(content))
	}
	if err := zw.Close(); err != nil {
		f.t.Fatal(err)
	}
	f.file(p, buf.String())
	e := res(p, buf.String())
	e.Lastmod = time.Time{}
	return e
}

// TestBadDumpPackages seeds from a Resource Dump whose package holds a
// file whose bytes are not its manifest entry's, an entry that names a
// file the package lacks, and a second package whose own digest is
// wrong: those are warned of and fetched one by one, every other file is
// taken from the package, and the mirror ends right.
func TestBadDumpPackages(t *testing.T) {
	src := newFakeSource(t)
	src.skeleton(map[string]string{rs.CapResourceList: "resourcelist.xml", rs.CapResourceDump: "resourcedump.xml"})
	files := map[string]string{"a.txt": "a", "b.txt": "bb", "c.txt": "c", "d.txt": "d"}
	src.resources(t0, files)
	withPath := func(p, content string) rs.Entry { e := res(p, content); e.MD.Path = "/" + p; return e }
	good := src.zipPackage("p1.zip", []rs.Entry{withPath("a.txt", "a"), withPath("b.txt", "bb"), withPath("c.txt", "c")},
		map[string]string{"a.txt": "a", "b.txt": "XX"}) // b.txt altered, c.txt missing
	spoilt := src.zipPackage("p2.zip", []rs.Entry{withPath("d.txt", "d")}, map[string]string{"d.txt": "d"})
	spoilt.MD.Hash = "sha-256:" + strings.Repeat("00", 32)
	src.doc("resourcedump.xml", rs.URLSet, rs.MD{Capability: rs.CapResourceDump, At: t0}, good, spoilt)
	dir := filepath.Join(t.TempDir(), "mirror")
	o := src.options(dir)
	o.Dumps = destination.DumpsAlways
	sum, events, err := run(t, o)
	if err != nil {
		t.Fatalf("sync: %v%s", err, describe(events))
	}
	if sum.FromDumps != 1 || sum.Fetched != 4 {
		t.Errorf("%d from dumps, %d fetched; want a.txt from the package, 3 fetched by themselves", sum.FromDumps, sum.Fetched)
	}
	for _, want := range []string{"b.txt: https://source.example/b.txt: sha-256 is", "names \"/c.txt\", which the package lacks", "p2.zip: https://source.example/p2.zip: sha-256 is"} {
		if !hasEvent(events, destination.EventWarning, want) {
			t.Errorf("no warning %q:%s", want, describe(events))
		}
	}
	sameTree(t, treeOf(t, dir), files)
}
