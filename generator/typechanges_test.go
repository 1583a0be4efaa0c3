package generator_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
)

// TestTypeChanges: paths that change between file and folder, both ways,
// at depth, and back, build cleanly in one build each, with the output
// linked or copied (another file system), with every capability whose
// files follow the resources' paths (versions and their TimeMaps, dumps,
// html_link's rewritten pages), after a wiped output, and from a state
// rebuilt from the output. Each build
// publishes the old resources as deleted and the new as created, and
// passes the checker reading every resource (#33: the build failed with
// "file exists" or "not a directory", and so did every later one).
func TestTypeChanges(t *testing.T) {
	t.Parallel() // six histories of builds: they overlap the other tests
	kept := func(c *config.Config) {
		c.ChangeList.Rotate = config.Duration{Duration: time.Hour}
		c.Dumps.ResourceDump, c.Dumps.ChangeDump = true, true
		c.Archives = config.Archives{ChangeLists: true, ChangeDumps: true, ResourceLists: true, ResourceDumps: true,
			SnapshotEvery: config.Duration{Duration: 2 * time.Hour}}
		c.Publish.HTMLLink = true
		c.Sets = []config.Set{{Name: "default", SetLinks: config.SetLinks{KeepVersions: true, Patches: true}}}
	}
	other := otherDeviceDir(t)
	for _, tc := range []struct {
		name  string
		root  string
		tweak func(*config.Config)
		wipe  bool // the output is wiped before each build
		// recover rebuilds the state from the output before each build
		recover bool
	}{
		{"linked", "", nil, false, false},
		{"copied", other, nil, false, false},
		{"every capability", "", kept, false, false},
		{"every capability, copied", other, kept, false, false},
		{"wiped output", "", kept, true, false},
		{"state rebuilt from the output", "", kept, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root == "" && strings.Contains(tc.name, "copied") {
				t.Skip("no other file system to copy to")
			}
			root := t.TempDir()
			if tc.root != "" {
				var err error
				if root, err = os.MkdirTemp(tc.root, "site-"); err != nil {
					t.Fatal(err)
				}
			}
			s := newSiteIn(t, root, testBaseURL, tc.tweak)
			if tc.root != "" {
				s.Cfg.Source = filepath.Join(t.TempDir(), "src") // the source on the test's file system
				s.Source = s.Cfg.Source
			}
			s.write("dir/b.txt", "b")
			s.write("thing.html", "<html><head></head><body>thing</body></html>")
			s.write("a/b/c/d/e.json", `{"e": 1}`)
			s.write("a/x", "x")
			s.build(t0)
			steps := []struct {
				change           func()
				created, deleted []string
			}{
				{func() { s.removeAll("dir"); s.write("dir", "dir is a file") }, []string{"dir"}, []string{"dir/b.txt"}},
				{func() {
					s.remove("thing.html")
					s.write("thing.html/c.html", "<html><head></head><body>c</body></html>")
				},
					[]string{"thing.html/c.html"}, []string{"thing.html"}},
				{func() {
					s.removeAll("a/b/c")
					s.write("a/b/c", "c is a file")
					s.remove("a/x")
					s.write("a/x/y/z.json", `{"z": 1}`)
				}, []string{"a/b/c", "a/x/y/z.json"}, []string{"a/b/c/d/e.json", "a/x"}},
				{func() {
					s.remove("dir")
					s.write("dir/b.txt", "b again")
					s.removeAll("thing.html")
					s.write("thing.html", "<html><head></head><body>thing again</body></html>")
				}, []string{"dir/b.txt", "thing.html"}, []string{"dir", "thing.html/c.html"}},
			}
			for i, step := range steps {
				step.change()
				if tc.wipe {
					if err := os.RemoveAll(s.Out); err != nil {
						t.Fatal(err)
					}
				}
				sum := s.buildWith(generator.Options{Now: t0.Add(time.Duration(i+1) * time.Hour), StateFromOutput: tc.recover})
				var created, deleted []string
				for _, ev := range sum.Events {
					switch ev.Change.String() {
					case "created":
						created = append(created, ev.Record.Path)
					case "deleted":
						deleted = append(deleted, ev.Record.Path)
					}
				}
				if !slices.Equal(created, step.created) || !slices.Equal(deleted, step.deleted) {
					t.Errorf("build %d: created %q, deleted %q; want %q, %q", i+1, created, deleted, step.created, step.deleted)
				}
				for _, p := range step.deleted {
					if info, err := os.Stat(filepath.Join(s.Out, filepath.FromSlash(p))); err == nil && !info.IsDir() {
						t.Errorf("build %d: %s is still in the output", i+1, p)
					}
				}
			}
			if sum := s.build(t0.Add(10 * time.Hour)); len(sum.Events) != 0 {
				t.Errorf("a build without changes found %v", sum.Events)
			}
		})
	}
}

// removeAll removes a source file or folder with all it holds.
func (s *site) removeAll(rel string) {
	s.t.Helper()
	if err := os.RemoveAll(s.src(rel)); err != nil {
		s.t.Fatal(err)
	}
}

// TestTypeChangeInTheSameSecond: a path that changes between file and
// folder in a build of the same second as the last, where that build kept
// a version of the old path, would put the two versions' mementos at one
// URI, as a file and as a folder, both kept: the build fails before it
// publishes anything, saying to build a second later, which succeeds.
func TestTypeChangeInTheSameSecond(t *testing.T) {
	s := newSite(t, testBaseURL, func(c *config.Config) {
		c.Sets = []config.Set{{Name: "default", SetLinks: config.SetLinks{KeepVersions: true}}}
	})
	s.write("dir/b.txt", "b")
	s.write("thing", "thing")
	s.build(t0)
	s.write("dir/b.txt", "b2") // a version of dir/b.txt first seen at t0+1h
	s.build(t0.Add(time.Hour))
	before := readTree(t, s.Out)
	s.removeAll("dir")
	s.write("dir", "dir is a file")
	_, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: t0.Add(time.Hour)})
	if err == nil || !strings.Contains(err.Error(), "build again a second later") {
		t.Fatalf("err = %v, want the memento of dir refused", err)
	}
	if d := diffBytes(before, readTree(t, s.Out)); len(d) > 0 {
		t.Errorf("the failed build changed the output:\n%v", d)
	}
	s.build(t0.Add(time.Hour + time.Second))
	if got := string(s.outFile("resourcesync/mementos/20240301090001/dir")); got != "dir is a file" {
		t.Errorf("the memento of dir holds %q", got)
	}
	if got := string(s.outFile("resourcesync/mementos/20240301090000/dir/b.txt")); got != "b2" {
		t.Errorf("the memento of dir/b.txt holds %q", got)
	}
}

// TestTypeChangeDeletesFirst: a build's deletions come before its
// creations and updates in its Change List and its Change Dump packages,
// across packages too, so that a Destination applying them in the
// documents' order clears the folder dir before it writes the file dir
// (in walk order, "created dir" came before "deleted dir/b0.txt", and
// resync 2.0.1 could not write the file).
func TestTypeChangeDeletesFirst(t *testing.T) {
	for _, tc := range []struct {
		name        string
		packageSize int64
	}{{"one package", 1 << 20}, {"several packages", 8 << 10}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, testBaseURL, func(c *config.Config) {
				c.Dumps.ChangeDump = true
				c.Dumps.PackageSize = config.ByteSize(tc.packageSize)
			})
			for i := range 6 {
				s.write(fmt.Sprintf("dir/b%d.txt", i), "b")
			}
			s.write("a.txt", "a")
			s.build(t0)
			s.removeAll("dir")
			s.write("dir", "dir is a file")
			s.write("a.txt", "a, updated")
			s.write("c/new.txt", "new")
			s.build(t0.Add(time.Hour))

			cl := s.doc("resourcesync/default/changelists/changelist-" + t0.UTC().Format("20060102T150405Z") + ".xml")
			var changes []string
			for _, e := range cl.Entries {
				changes = append(changes, e.MD().Change)
			}
			checkDeletionsFirst(t, "the Change List", changes)
			changes = nil
			packages := 0
			for _, d := range s.doc("resourcesync/default/changedump.xml").Entries {
				_, dump := s.docAt(d.Loc)
				for _, p := range dump.Entries {
					packages++
					files, _, order := packageFilesOf(t, s, p.Loc)
					for _, path := range order {
						if _, created := files[path]; created {
							changes = append(changes, "created or updated")
						} else {
							changes = append(changes, "deleted")
						}
					}
				}
			}
			checkDeletionsFirst(t, fmt.Sprintf("the Change Dump's %d packages", packages), changes)
			if tc.packageSize < 1<<20 && packages < 2 {
				t.Errorf("%d Change Dump packages, want several", packages)
			}
		})
	}
}

// checkDeletionsFirst checks that changes, in a document's order, hold the
// deletions before anything else, and 6 of them, dir's files.
func checkDeletionsFirst(t *testing.T, what string, changes []string) {
	t.Helper()
	deleted := 0
	for i, c := range changes {
		if c != "deleted" {
			continue
		}
		deleted++
		if i >= deleted {
			t.Errorf("%s: a deletion after another change: %q", what, changes)
			return
		}
	}
	if deleted != 6 || len(changes) != 9 {
		t.Errorf("%s: %q, want 6 deletions, then 3 other changes", what, changes)
	}
}
