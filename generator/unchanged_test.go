package generator_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
	"github.com/rsgen/rsgen/internal/sysfile"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// setMtimes gives every file of the site's source the modification time
// at: an hour or more before the wall clock, a build trusts a file by its
// stat (snapshot.RaceWindow).
func (s *site) setMtimes(at time.Time) {
	s.t.Helper()
	err := filepath.WalkDir(s.Source, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(p, at, at)
	})
	if err != nil {
		s.t.Fatal(err)
	}
}

// stateSaved reports whether the state file is another than before (a
// build that saves the state renames a new file over it), and returns the
// inode it has now.
func (s *site) stateSaved(before uint64) (bool, uint64) {
	s.t.Helper()
	info, err := os.Stat(filepath.Join(s.State, snapshot.FileName))
	if err != nil {
		s.t.Fatal(err)
	}
	return sysfile.Inode(info) != before, sysfile.Inode(info)
}

// fastPathSite is a site with archives, dumps and hourly Change Lists,
// built once at t0 with a few files and again at t0+10m with a change, so
// that its open Change List holds an event; its files are old enough to be
// trusted by their stat. tweaks change its configuration further.
func fastPathSite(t *testing.T, tweaks ...func(*config.Config)) *site {
	t.Helper()
	s := newSite(t, testBaseURL, func(c *config.Config) {
		c.ChangeList.Rotate = config.Duration{Duration: time.Hour}
		c.Dumps.ResourceDump, c.Dumps.ChangeDump = true, true
		c.Archives = config.Archives{ChangeLists: true, ChangeDumps: true, ResourceLists: true, ResourceDumps: true,
			SnapshotEvery: config.Duration{Duration: 2 * time.Hour}}
		c.Publish.Stylesheet = true
		for _, tweak := range tweaks {
			tweak(c)
		}
	})
	for i := range 5 {
		s.write(fmt.Sprintf("docs/%d.txt", i), fmt.Sprintf("file %d", i))
	}
	s.setMtimes(time.Now().Add(-2 * time.Hour))
	s.build(t0)
	s.write("docs/new.html", "<p>new</p>")
	s.setMtimes(time.Now().Add(-time.Hour))
	s.build(t0.Add(10 * time.Minute))
	return s
}

// TestUnchangedBuildWritesNothing: a build that finds nothing changed
// writes no output and no state, only a record that it ran, and counts
// every output of the last build as unchanged, as a full build would.
func TestUnchangedBuildWritesNothing(t *testing.T) {
	s := fastPathSite(t)
	_, state := s.stateSaved(0)
	out := statTree(t, s.Out)
	sum := s.build(t0.Add(20 * time.Minute))
	if diffs := diffTrees(out, statTree(t, s.Out), true); len(diffs) > 0 {
		t.Errorf("an unchanged build changed the output:\n%s", diffs)
	}
	if saved, _ := s.stateSaved(state); saved {
		t.Error("an unchanged build saved the state")
	}
	if _, err := os.Stat(filepath.Join(s.State, snapshot.RunFile)); err != nil {
		t.Errorf("no run record: %v", err)
	}
	want := map[sink.Kind]int{}
	for rel := range out {
		if k := sink.KindOf(rel); rel == layout.SourceDescription || k != sink.SideFile || !isResource(s, rel) {
			want[k]++
		}
	}
	for k := range sink.NumKinds {
		if c := sum.Outputs[k]; c.Written != 0 || c.Removed != 0 || c.Unchanged != want[k] {
			t.Errorf("kind %d: %+v, want %d unchanged", k, c, want[k])
		}
	}
	if sum.Hashed != 0 || sum.Files != 6 || sum.Created+sum.Updated+sum.Deleted != 0 {
		t.Errorf("summary: %d files, %d read, %d events", sum.Files, sum.Hashed, sum.Created+sum.Updated+sum.Deleted)
	}
}

// isResource reports whether the output file rel is a copy of a source
// file.
func isResource(s *site, rel string) bool {
	_, err := os.Stat(s.src(rel))
	return err == nil
}

// TestUnchangedBuildTakesTheFullPathWhenItMust: a build that finds no
// source file changed still builds in full, and repairs or publishes what
// it must, when the configuration changed, the clock brings a rotation or
// a snapshot, an output or a kept file was edited or lost, the state is of
// an older format, or the last build left a publishing record; and takes
// the fast path again after.
func TestUnchangedBuildTakesTheFullPathWhenItMust(t *testing.T) {
	resourceList := "resourcesync/default/resourcelist.xml"
	for _, tc := range []struct {
		name string
		at   time.Duration // after t0
		// change changes what the build finds, and returns what to check
		// after it.
		change func(t *testing.T, s *site) (check func())
	}{
		{"configuration changed", 20 * time.Minute, func(t *testing.T, s *site) func() {
			s.Cfg.DescribedBy = "https://data.example.org/about.html"
			return func() {
				if d := s.doc(resourceList); d == nil || s.doc(layout.CapabilityList("default")).link("describedby") == "" {
					t.Error("the new describedby is not published")
				}
			}
		}},
		{"rotation due", 90 * time.Minute, func(t *testing.T, s *site) func() {
			return func() {
				if matches, _ := filepath.Glob(filepath.Join(s.Out, "resourcesync/default/changelists/*.xml")); len(matches) != 2 {
					t.Errorf("Change Lists: %v, want the one the rotation closed and the one it opened", matches)
				}
			}
		}},
		{"snapshot due", 150 * time.Minute, func(t *testing.T, s *site) func() {
			return func() {
				if matches, _ := filepath.Glob(filepath.Join(s.Out, "resourcesync/default/resourcelists/*.xml")); len(matches) != 2 {
					t.Errorf("archived Resource Lists: %v, want this build's beside the first's", matches)
				}
			}
		}},
		{"output edited", 20 * time.Minute, func(t *testing.T, s *site) func() {
			return editOutput(t, s, resourceList, func(b []byte) []byte { return append(b, '\n') })
		}},
		{"output edited, same size", 20 * time.Minute, func(t *testing.T, s *site) func() {
			check := editOutput(t, s, resourceList, func(b []byte) []byte {
				b[len(b)-2] = ' '
				return b
			})
			later := time.Now().Add(time.Second) // an edit a second later: the build's stat of the copy must not be trusted
			os.Chtimes(filepath.Join(s.Out, resourceList), later, later)
			return check
		}},
		{"output removed", 20 * time.Minute, func(t *testing.T, s *site) func() {
			return editOutput(t, s, layout.CapabilityList("default"), nil)
		}},
		{"side file removed", 20 * time.Minute, func(t *testing.T, s *site) func() {
			return editOutput(t, s, generator.StylesheetPath, nil)
		}},
		{"kept file lost", 20 * time.Minute, func(t *testing.T, s *site) func() {
			matches, _ := filepath.Glob(filepath.Join(s.Out, "resourcesync/default/resourcelists/*.xml"))
			if len(matches) != 1 {
				t.Fatalf("archived Resource Lists: %v", matches)
			}
			rel, _ := filepath.Rel(s.Out, matches[0])
			return editOutput(t, s, filepath.ToSlash(rel), nil)
		}},
		{"kept file lost in the state folder", 20 * time.Minute, func(t *testing.T, s *site) func() {
			matches, _ := filepath.Glob(filepath.Join(s.State, snapshot.ArchiveDir, "resourcesync/default/resourcelists/*.xml"))
			if len(matches) != 1 {
				t.Fatalf("kept Resource Lists: %v", matches)
			}
			if err := os.Remove(matches[0]); err != nil {
				t.Fatal(err)
			}
			return func() {
				if _, err := os.Stat(matches[0]); err != nil {
					t.Errorf("the kept copy is not restored: %v", err)
				}
			}
		}},
		{"state of an older format", 20 * time.Minute, func(t *testing.T, s *site) func() {
			st, err := snapshot.Load(s.State)
			if err != nil {
				t.Fatal(err)
			}
			st.OutputDigest, st.OutputStats = "", nil // what format 5 held
			if err := snapshot.Save(s.State, st); err != nil {
				t.Fatal(err)
			}
			st.Close()
			return func() {}
		}},
		{"publishing record left", 20 * time.Minute, func(t *testing.T, s *site) func() {
			if err := os.WriteFile(filepath.Join(s.State, snapshot.PublishingFile), []byte("+ \""+resourceList+"\"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return func() {}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fastPathSite(t)
			_, state := s.stateSaved(0)
			check := tc.change(t, s)
			_, state = s.stateSaved(state) // the change may save a state itself
			s.build(t0.Add(tc.at))
			saved, state := s.stateSaved(state)
			if !saved {
				t.Fatal("the build took the fast path")
			}
			check()
			s.build(t0.Add(tc.at + time.Minute))
			if saved, _ := s.stateSaved(state); saved {
				t.Error("the next build did not take the fast path")
			}
		})
	}
}

// editOutput edits the output file rel with edit, or removes it when edit
// is nil, keeping its mtime (a copy of an earlier file put back, say:
// only its inode then tells it apart, when it has the same size), and
// returns a check that the build put its bytes back.
func editOutput(t *testing.T, s *site, rel string, edit func([]byte) []byte) func() {
	t.Helper()
	p := filepath.Join(s.Out, filepath.FromSlash(rel))
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(p)
	if edit == nil {
		err = os.Remove(p)
	} else {
		err = os.WriteFile(p, edit(append([]byte(nil), want...)), 0o644)
		os.Chtimes(p, info.ModTime(), info.ModTime())
	}
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		if got, err := os.ReadFile(p); err != nil || string(got) != string(want) {
			t.Errorf("%s is not repaired: %v", rel, err)
		}
	}
}

// TestUnchangedBuildsPublishWhatFullBuildsPublish: two sites go through
// the same history, with changes, with builds that change nothing, and
// with builds that find every file touched (new stats, the same bytes), at
// times that bring rotations, snapshots and retention; one builds with
// --verify, which never takes a fast path. After every build their
// outputs are the same, byte for byte: a build that takes a fast path
// publishes what a full build would, and so does every build after it
// (the run record gives the state the time of the build that made it),
// whether the site publishes the files' mtimes or not. The history is
// random, from a seed it logs; longer with RSGEN_STRESS=1.
func TestUnchangedBuildsPublishWhatFullBuildsPublish(t *testing.T) {
	for _, lastmod := range []config.LastmodSource{config.LastmodMtime, config.LastmodContent} {
		t.Run(string(lastmod), func(t *testing.T) {
			t.Parallel() // among the longer tests of the package: they overlap
			publishSameHistory(t, lastmod)
		})
	}
}

// publishSameHistory is the history of
// TestUnchangedBuildsPublishWhatFullBuildsPublish, for sites whose lastmod
// is lastmod.
func publishSameHistory(t *testing.T, lastmod config.LastmodSource) {
	tweak := func(c *config.Config) {
		c.ChangeList.Rotate = config.Duration{Duration: time.Hour}
		c.Dumps.ResourceDump, c.Dumps.ChangeDump = true, true
		c.Archives = config.Archives{ChangeLists: true, ChangeDumps: true, ResourceLists: true, ResourceDumps: true,
			SnapshotEvery: config.Duration{Duration: 90 * time.Minute}, Keep: config.Retention{Age: 4 * time.Hour}}
		c.Publish.Stylesheet, c.Publish.HTMLLink = true, true
		c.Lastmod = lastmod
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 37))
	steps := 16
	if stress() {
		steps = 200
	}
	fast, full := newSite(t, testBaseURL, tweak), newSite(t, testBaseURL, tweak)
	for _, s := range []*site{fast, full} {
		// never removed: a history that removes every other file would
		// leave the set empty, which every build warns of
		s.write("kept.txt", "kept")
	}
	mtime := time.Now().Add(-24 * time.Hour)
	now := t0
	fastBuilds := 0
	var state uint64
	for step := range steps {
		if change := rng.IntN(4); step == 0 || change < 2 {
			mtime = mtime.Add(time.Minute)
			for _, s := range []*site{fast, full} {
				if step == 0 || change == 0 {
					changeSome(s, rand.New(rand.NewPCG(uint64(seed), uint64(step))), step) // the same changes in both
				}
				s.setMtimes(mtime) // alone: every file touched
			}
		}
		now = now.Add(time.Duration(5+rng.IntN(60)) * time.Minute)
		fast.build(now)
		full.buildWith(generator.Options{Now: now, Verify: true})
		if diffs := diffBytes(readTree(t, full.Out), readTree(t, fast.Out)); len(diffs) > 0 {
			t.Fatalf("step %d (seed %d): the outputs differ:\n%s", step, seed, diffs)
		}
		var saved bool
		if saved, state = fast.stateSaved(state); !saved && step > 0 {
			fastBuilds++
		}
	}
	if fastBuilds == 0 {
		t.Errorf("%d of %d builds took the fast path; the history does not test it", fastBuilds, steps)
	}
}

// changeSome writes, rewrites or removes a few of the site's source files,
// as rng says.
func changeSome(s *site, rng *rand.Rand, step int) {
	for range 1 + rng.IntN(3) {
		k := rng.IntN(8)
		switch rng.IntN(5) {
		case 4: // the same bytes in a new file
			p := s.src(fmt.Sprintf("f%d.txt", k))
			if data, err := os.ReadFile(p); err == nil {
				s.write("replacement", string(data))
				if err := os.Rename(s.src("replacement"), p); err != nil {
					s.t.Fatal(err)
				}
			}
		case 0:
			if _, err := os.Stat(s.src(fmt.Sprintf("f%d.txt", k))); err == nil {
				s.remove(fmt.Sprintf("f%d.txt", k))
			}
		case 1:
			s.write(fmt.Sprintf("pages/page%d.html", k), fmt.Sprintf("<html><head></head><p>%d</p></html>", step))
		default:
			s.write(fmt.Sprintf("f%d.txt", k), fmt.Sprintf("version %d", step))
		}
	}
}

// TestTouchedBuildSavesOnlyTheStats: a build whose scan reads files and
// finds their bytes unchanged (every file touched, one replaced by a file
// with the same bytes) renders no document: an output altered in place
// with its stat kept is left as it is, which a full build would repair.
// It saves the state with the new stats, so that the next build reads
// nothing and takes the fast path; it counts every output as unchanged;
// and the replaced file's output is placed as a full build places it:
// linked to the new source file, or, where resources are copied, a copy
// with its new mtime.
func TestTouchedBuildSavesOnlyTheStats(t *testing.T) {
	for _, placement := range []config.Placement{config.PlaceLink, config.PlaceCopy} {
		t.Run(string(placement), func(t *testing.T) {
			s := fastPathSite(t, func(c *config.Config) { c.Publish.Resources = placement })
			resourceList := "resourcesync/default/resourcelist.xml"
			editOutput(t, s, resourceList, func(b []byte) []byte {
				b[bytes.Index(b, []byte("?>\n"))+2] = ' ' // still a valid document
				return b
			})
			altered := string(s.outFile(resourceList))
			_, state := s.stateSaved(0)
			replaced := s.src("docs/0.txt")
			data, _ := os.ReadFile(replaced)
			if err := os.WriteFile(replaced+".new", data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(replaced+".new", replaced); err != nil {
				t.Fatal(err)
			}
			s.setMtimes(time.Now().Add(-30 * time.Minute))
			sum := s.build(t0.Add(20 * time.Minute))
			if sum.Hashed != 6 || sum.Created+sum.Updated+sum.Deleted != 0 {
				t.Fatalf("summary: %d read, %d events; want every file read, no event", sum.Hashed, sum.Created+sum.Updated+sum.Deleted)
			}
			if got := string(s.outFile(resourceList)); got != altered {
				t.Error("the build rendered the Resource List again")
			}
			if c := sum.Outputs[sink.Document]; c.Written != 0 || c.Unchanged == 0 {
				t.Errorf("documents: %+v, want every one unchanged", c)
			}
			src, err1 := os.Stat(replaced)
			out, err2 := os.Stat(filepath.Join(s.Out, "docs", "0.txt"))
			switch {
			case err1 != nil || err2 != nil:
				t.Fatal(err1, err2)
			case placement == config.PlaceLink && !os.SameFile(src, out):
				t.Error("the output of the replaced file is not linked to it")
			case placement == config.PlaceCopy && (os.SameFile(src, out) || !out.ModTime().Equal(src.ModTime())):
				t.Errorf("the output of the replaced file is not a copy with its mtime %v: %v", src.ModTime(), out.ModTime())
			}
			if got := string(s.outFile("docs/0.txt")); got != string(data) {
				t.Errorf("the output of the replaced file holds %q, want %q", got, data)
			}
			saved, state := s.stateSaved(state)
			if !saved {
				t.Fatal("the build did not save the files' new stats")
			}
			if sum := s.build(t0.Add(30 * time.Minute)); sum.Hashed != 0 {
				t.Errorf("the next build read %d files", sum.Hashed)
			}
			if saved, _ := s.stateSaved(state); saved {
				t.Error("the next build did not take the fast path")
			}
		})
	}
}

// TestTouchedBuildPublishesTheNewMtime: a site that publishes its files'
// modification times (lastmod = "mtime", or the modified of a via link)
// publishes a touched file's new one: it builds in full.
func TestTouchedBuildPublishesTheNewMtime(t *testing.T) {
	for _, tc := range []struct {
		name      string
		tweak     func(*config.Config)
		published func(e *entry) string
	}{
		{"lastmod from mtime", func(c *config.Config) { c.Lastmod = config.LastmodMtime },
			func(e *entry) string { return e.Lastmod }},
		{"via link", func(c *config.Config) {
			c.Sets = []config.Set{{Name: "default", SetLinks: config.SetLinks{Via: "https://origin.example.org/"}}}
		}, func(e *entry) string {
			for _, l := range e.Links {
				if l.Rel == "via" {
					return l.Modified
				}
			}
			return ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, testBaseURL, tc.tweak)
			s.write("a.txt", "a")
			s.setMtimes(time.Now().Add(-2 * time.Hour))
			s.build(t0)
			touched := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
			s.setMtimes(touched)
			s.build(t0.Add(10 * time.Minute))
			d := s.doc("resourcesync/default/resourcelist.xml")
			if len(d.Entries) != 1 || tc.published(&d.Entries[0]) != touched.Format(time.RFC3339) {
				t.Errorf("Resource List entries %+v, want a.txt published with the time %s", d.Entries, touched.Format(time.RFC3339))
			}
		})
	}
}
