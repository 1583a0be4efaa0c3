package generator_test

import (
	"context"
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
