package destination_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/destination"
	"github.com/rsgen/rsgen/generator"
	"github.com/rsgen/rsgen/internal/freeport"
	"github.com/rsgen/rsgen/internal/servertest"
	"github.com/rsgen/rsgen/serve"
)

// rsgenSite is a source tree that rsgen builds into an output folder.
type rsgenSite struct {
	t   *testing.T
	cfg *config.Config
	now time.Time
}

func newRsgenSite(t *testing.T, base string, tweak func(*config.Config)) *rsgenSite {
	t.Helper()
	root := t.TempDir()
	cfg := config.Default()
	cfg.Dir, cfg.BaseURL = root, base
	cfg.Source, cfg.Out, cfg.State = filepath.Join(root, "src"), filepath.Join(root, "out"), filepath.Join(root, "state")
	if tweak != nil {
		tweak(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(cfg.Source, 0o755); err != nil {
		t.Fatal(err)
	}
	return &rsgenSite{t: t, cfg: &cfg, now: t0}
}

func (s *rsgenSite) write(p, content string) {
	s.t.Helper()
	full := filepath.Join(s.cfg.Source, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

func (s *rsgenSite) remove(p string) {
	s.t.Helper()
	if err := os.Remove(filepath.Join(s.cfg.Source, filepath.FromSlash(p))); err != nil {
		s.t.Fatal(err)
	}
}

// build builds the site after d.
func (s *rsgenSite) build(d time.Duration) {
	s.t.Helper()
	s.now = s.now.Add(d)
	if _, err := generator.Build(context.Background(), s.cfg, generator.Options{Now: s.now}); err != nil {
		s.t.Fatalf("build at %s: %v", s.now, err)
	}
}

// source returns the files of the source tree, as a mirror must hold them.
func (s *rsgenSite) source() map[string]string { return treeOf(s.t, s.cfg.Source) }

// listen returns a loopback listener and the base URL it answers at.
func listen(t *testing.T) (net.Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln, "http://" + ln.Addr().String() + "/"
}

// serveOutput serves the site's output with rsgen serve's Handler on ln,
// counting the 304 answers.
func serveOutput(t *testing.T, s *rsgenSite, ln net.Listener) *atomic.Int64 {
	t.Helper()
	h, err := serve.New(serve.Options{Dir: s.cfg.Out, BaseURL: s.cfg.BaseURL})
	if err != nil {
		t.Fatal(err)
	}
	notModified := new(atomic.Int64)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if rec.status == http.StatusNotModified {
			notModified.Add(1)
		}
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close(); h.Close() })
	return notModified
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) { r.status = code; r.ResponseWriter.WriteHeader(code) }

// TestRsgenSourceWithConditionalRequests mirrors an rsgen Source served
// by rsgen serve: names that need escaping, a Change List Index of
// closed and open lists; a sync of a Source that did not change asks for
// its documents conditionally and is answered 304 Not Modified.
func TestRsgenSourceWithConditionalRequests(t *testing.T) {
	ln, base := listen(t)
	s := newRsgenSite(t, base, func(c *config.Config) { c.ChangeList.Rotate = config.Duration{Duration: time.Hour} })
	for _, p := range []string{"a b.txt", "hash#tag.txt", "per%cent.txt", "%41.txt", "amp&ersand.txt", "ünïcödé/日本語.txt",
		"q?mark.txt", "plus+and=equals.txt", "tab\there.txt", "empty.txt", "deep/er/x.bin"} {
		s.write(p, "content of "+p)
	}
	s.write("empty.txt", "")
	s.build(0)
	notModified := serveOutput(t, s, ln)
	dir := filepath.Join(t.TempDir(), "mirror")
	o := destination.Options{Source: base, Dir: dir}
	mustSync(t, o)
	sameTree(t, treeOf(t, dir), s.source())

	mustSync(t, o) // the first to read the Change Lists
	before := notModified.Load()
	if sum := mustSync(t, o); sum.Mode != "incremental" || sum.Fetched != 0 {
		t.Errorf("again: %s, %d fetched", sum.Mode, sum.Fetched)
	}
	if n := notModified.Load() - before; n != 4 {
		t.Errorf("%d documents answered 304 on a sync of an unchanged Source, want 4: the Source Description, the Capability List, the Change List Index and its list", n)
	}

	s.write("a b.txt", "changed")
	s.remove("q?mark.txt")
	s.build(2 * time.Hour) // closes the first Change List
	s.write("new/one.txt", "new")
	s.build(time.Minute)
	if sum := mustSync(t, o); sum.Mode != "incremental" || sum.Fetched != 2 || sum.Deleted != 1 {
		t.Errorf("after two builds: %s, %d fetched, %d deleted; want incremental, 2, 1", sum.Mode, sum.Fetched, sum.Deleted)
	}
	sameTree(t, treeOf(t, dir), s.source())
}

// TestPropertyRandomHistories builds random histories of a source tree
// with random configurations (Change Lists rotated or not, Resource and
// Change Dumps, archives), and follows each with rsgen sync served by
// rsgen serve, and by nginx when it is installed: after each build it
// syncs (now and then skipping builds, so that a sync spans several
// Change Lists), and the mirror must equal the source and pass --audit.
func TestPropertyRandomHistories(t *testing.T) {
	seeds, builds := 3, 6
	if os.Getenv("RSGEN_STRESS") == "1" {
		seeds, builds = 20, 30
	}
	for seed := range seeds {
		t.Run(fmt.Sprintf("serve/seed%d", seed), func(t *testing.T) { randomHistory(t, uint64(seed), builds, false) })
	}
	if nginx := servertest.Nginx(t); nginx != "" {
		for seed := range max(1, seeds/3) {
			t.Run(fmt.Sprintf("nginx/seed%d", seed), func(t *testing.T) { randomHistory(t, uint64(seed)+100, builds, true) })
		}
	}
}

var oddNames = []string{"a b", "c#d", "e%f", "%41", "g&h", "ü", "日本", "q?r", "s+t", "u'v", "w;x", "y=z", "x"}

func randomHistory(t *testing.T, seed uint64, builds int, nginx bool) {
	rng := rand.New(rand.NewPCG(seed, seed*7919+1))
	var ln net.Listener
	var base string
	port := 0
	if nginx {
		port = freeport.Get(t)
		base = fmt.Sprintf("http://127.0.0.1:%d/", port)
	} else {
		ln, base = listen(t)
	}
	rotate := []time.Duration{0, time.Hour, 10 * time.Minute}[rng.IntN(3)]
	s := newRsgenSite(t, base, func(c *config.Config) {
		c.ChangeList.Rotate = config.Duration{Duration: rotate}
		c.Dumps.ResourceDump = rng.IntN(2) == 0
		c.Dumps.ChangeDump = rng.IntN(2) == 0
		c.Archives.ChangeLists = rng.IntN(2) == 0
		if nginx {
			c.Publish.Targets = []config.Target{"nginx"}
		}
	})
	var names []string
	newName := func() string {
		depth := rng.IntN(3)
		var segs []string
		for range depth + 1 {
			segs = append(segs, oddNames[rng.IntN(len(oddNames))]+strconv.Itoa(rng.IntN(4)))
		}
		return strings.Join(segs, "/")
	}
	content := func() string { return strings.Repeat(string(rune('a'+rng.IntN(26))), rng.IntN(3000)) }
	remove := func(i int) {
		s.remove(names[i])
		removeEmptyParents(s.cfg.Source, names[i])
		names = slices.Delete(names, i, i+1)
	}
	mutate := func() {
		for range 1 + rng.IntN(8) {
			switch op := rng.IntN(10); {
			case op < 4 && len(names) > 0:
				s.write(names[rng.IntN(len(names))], content())
			case op < 8:
				// a new name where a file stands as a folder, or a folder
				// as a file, replaces them: a type change, in one build
				p := newName()
				for i := len(names) - 1; i >= 0; i-- {
					if conflicts(names[i:i+1], p) {
						remove(i)
					}
				}
				s.write(p, content())
				if !slices.Contains(names, p) {
					names = append(names, p)
				}
			case len(names) > 0:
				remove(rng.IntN(len(names)))
			}
		}
	}
	mutate()
	s.build(0)
	if nginx {
		servertest.ServeNginx(t, servertest.Nginx(t), s.cfg.Out, port)
	} else {
		serveOutput(t, s, ln)
	}
	dir := filepath.Join(t.TempDir(), "mirror")
	policies := []destination.DumpPolicy{destination.DumpsAuto, destination.DumpsAlways, destination.DumpsNever}
	synced := false
	for b := range builds {
		if b > 0 {
			mutate()
			s.build(time.Duration(1+rng.IntN(40)) * time.Minute)
		}
		if rng.IntN(4) == 0 && b < builds-1 {
			continue // this build is followed by the next sync
		}
		o := destination.Options{Source: base, Dir: dir, Dumps: policies[rng.IntN(3)]}
		sum, events, err := run(t, o)
		if err != nil {
			t.Fatalf("build %d: sync: %v%s", b, err, describe(events))
		}
		if synced && sum.Mode != "incremental" {
			t.Errorf("build %d: a %s, want incremental:%s", b, sum.Mode, describe(events))
		}
		synced = true
		sameTree(t, treeOf(t, dir), s.source())
		if _, events, err := audit(t, o); err != nil {
			t.Fatalf("build %d: audit: %v%s", b, err, describe(events))
		}
		if t.Failed() {
			t.Fatalf("build %d (rotate %s): the mirror differs from the source", b, rotate)
		}
	}
}

// conflicts reports whether p cannot be created beside names: it is one
// of their folders, or one of them is among its folders.
func conflicts(names []string, p string) bool {
	for _, n := range names {
		if strings.HasPrefix(n, p+"/") || strings.HasPrefix(p, n+"/") {
			return true
		}
	}
	return false
}

// removeEmptyParents removes the folders a removal left empty in root.
func removeEmptyParents(root, p string) {
	for dir := filepath.Dir(filepath.Join(root, filepath.FromSlash(p))); dir != root; dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			return
		}
	}
}

// TestDumpsSeed follows an rsgen Source that publishes a Resource Dump
// and Change Dumps: with DumpsAlways the baseline takes every file from
// the Resource Dump's packages and the incremental sync from the Change
// Dump's, each verified against its manifest; the lists then find them
// right and fetch nothing more.
func TestDumpsSeed(t *testing.T) {
	ln, base := listen(t)
	s := newRsgenSite(t, base, func(c *config.Config) {
		c.Dumps.ResourceDump, c.Dumps.ChangeDump = true, true
		c.Dumps.PackageSize = 4 << 10
	})
	for i := range 20 {
		s.write(fmt.Sprintf("d%d/f%02d.txt", i%3, i), strings.Repeat("x", 500+i))
	}
	s.build(0)
	serveOutput(t, s, ln)
	dir := filepath.Join(t.TempDir(), "mirror")
	o := destination.Options{Source: base, Dir: dir, Dumps: destination.DumpsAlways}
	if sum := mustSync(t, o); sum.FromDumps != 20 || sum.Fetched != 20 {
		t.Errorf("baseline: %d fetched, %d from the Resource Dump; want all 20 from it", sum.Fetched, sum.FromDumps)
	}
	for i := range 5 {
		s.write(fmt.Sprintf("d%d/f%02d.txt", i%3, i), "changed")
	}
	s.remove("d0/f18.txt")
	s.build(time.Minute)
	sum := mustSync(t, o)
	if sum.Mode != "incremental" || sum.FromDumps != 5 || sum.Fetched != 5 || sum.Deleted != 1 {
		t.Errorf("incremental: %s, %d fetched, %d from the Change Dump, %d deleted; want 5, 5, 1", sum.Mode, sum.Fetched, sum.FromDumps, sum.Deleted)
	}
	sameTree(t, treeOf(t, dir), s.source())
}

// TestDumpsSeedAcrossTypeChanges: a Change Dump whose package holds a
// file where the mirror still has the folder the change deletes (and a
// file in a folder where the mirror has a file) leaves those to the
// Change Lists, which delete what is in the way first: no warning, and
// the mirror equals the source. Found on /usr/share/doc: a folder turned
// into a file warned "a folder is there" on every such sync.
func TestDumpsSeedAcrossTypeChanges(t *testing.T) {
	ln, base := listen(t)
	s := newRsgenSite(t, base, func(c *config.Config) { c.Dumps.ChangeDump = true })
	s.write("dir/a.txt", "in a folder")
	s.write("file", "a file")
	s.build(0)
	serveOutput(t, s, ln)
	o := destination.Options{Source: base, Dir: filepath.Join(t.TempDir(), "mirror"), Dumps: destination.DumpsAlways}
	mustSync(t, o)
	s.remove("dir/a.txt")
	removeEmptyParents(s.cfg.Source, "dir/a.txt")
	s.write("dir", "now a file")
	s.remove("file")
	s.write("file/b.txt", "now in a folder")
	s.build(time.Minute)
	sum, events, err := run(t, o)
	if err != nil || sum.Mode != "incremental" || sum.Fetched != 2 || sum.Deleted != 2 || hasEvent(events, destination.EventWarning, "") {
		t.Fatalf("after the type changes: %+v, %v%s", sum, err, describe(events))
	}
	sameTree(t, treeOf(t, o.Dir), s.source())
}

// TestRsgenSourceWithoutChangeListIndex follows a Source that turns
// [changelist] index off after the baseline, whose Capability List then
// points at the open Change List: a sync that spans a rotation finds the
// closed list through the Change List Archive and stays incremental.
func TestRsgenSourceWithoutChangeListIndex(t *testing.T) {
	ln, base := listen(t)
	s := newRsgenSite(t, base, func(c *config.Config) {
		c.ChangeList = config.ChangeList{Rotate: config.Duration{Duration: time.Hour}, Index: true}
		c.Archives.ChangeLists = true
	})
	s.write("a.txt", "a")
	s.write("b.txt", "b")
	s.build(0)
	serveOutput(t, s, ln)
	dir := filepath.Join(t.TempDir(), "mirror")
	o := destination.Options{Source: base, Dir: dir}
	mustSync(t, o)
	mustSync(t, o) // the first to read the Change Lists

	s.cfg.ChangeList.Index = false
	s.write("a.txt", "changed")
	s.build(time.Minute) // into the list the baseline opened
	s.remove("b.txt")
	s.build(2 * time.Hour) // closes it: the Capability List points at the next
	s.write("c.txt", "new")
	s.build(time.Minute)
	if _, err := os.Stat(filepath.Join(s.cfg.Out, "resourcesync", "default", "changelist.xml")); !os.IsNotExist(err) {
		t.Fatalf("a Change List Index is published (stat: %v)", err)
	}
	if sum := mustSync(t, o); sum.Mode != "incremental" || sum.Fetched != 2 || sum.Deleted != 1 {
		t.Errorf("after a rotation: %s, %d fetched, %d deleted; want incremental, 2, 1", sum.Mode, sum.Fetched, sum.Deleted)
	}
	sameTree(t, treeOf(t, dir), s.source())
}

// TestRsgenSetWithoutFiles follows an rsgen set that has no files, at
// first and again later: its Capability List then names Change Lists
// and no Resource List (rsgen publishes no empty one). A baseline of it
// is an empty mirror as of the newest time its Change Lists cover, from
// which later syncs follow the changes; an audit compares the mirror
// with no resources.
func TestRsgenSetWithoutFiles(t *testing.T) {
	ln, base := listen(t)
	s := newRsgenSite(t, base, nil)
	s.build(0) // no files yet
	serveOutput(t, s, ln)
	dir := filepath.Join(t.TempDir(), "mirror")
	o := destination.Options{Source: base, Dir: dir}
	sum, events, err := run(t, o)
	if err != nil || sum.Mode != "baseline" || !hasEvent(events, destination.EventInfo, "no Resource List: the set holds no resources now") {
		t.Fatalf("a set without files: %+v, %v%s", sum, err, describe(events))
	}
	s.write("a.txt", "alpha")
	s.build(time.Minute)
	if sum := mustSync(t, o); sum.Mode != "incremental" || sum.Fetched != 1 {
		t.Fatalf("after a file came: %+v, want an incremental sync that fetched it", sum)
	}
	sameTree(t, treeOf(t, dir), s.source())

	s.remove("a.txt")
	s.build(time.Minute)
	if sum := mustSync(t, o); sum.Mode != "incremental" || sum.Deleted != 1 {
		t.Fatalf("after the last file went: %+v, want an incremental sync that deleted it", sum)
	}
	if _, events, err := audit(t, o); err != nil {
		t.Fatalf("audit of the empty mirror: %v%s", err, describe(events))
	}
	os.WriteFile(filepath.Join(dir, "stray.txt"), []byte("stray"), 0o644)
	if sum, _, err := audit(t, o); !errors.Is(err, destination.ErrOutOfSync) || sum.Extra != 1 {
		t.Fatalf("audit with a file the empty set does not list: %+v, %v", sum, err)
	}

	fresh := destination.Options{Source: base, Dir: filepath.Join(t.TempDir(), "fresh")}
	if sum := mustSync(t, fresh); sum.Mode != "baseline" || sum.Fetched != 0 {
		t.Fatalf("a new mirror of the emptied set: %+v", sum)
	}
	s.write("b.txt", "beta")
	s.build(time.Minute)
	if sum := mustSync(t, fresh); sum.Mode != "incremental" || sum.Fetched != 1 {
		t.Fatalf("after a file came back: %+v, want an incremental sync that fetched it", sum)
	}
	sameTree(t, treeOf(t, fresh.Dir), s.source())
}
