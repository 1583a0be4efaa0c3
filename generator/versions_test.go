package generator_test

// Tests of kept versions as a stream (versions.go): the state keeps them
// apart from the outputs, the build removes their files itself, and
// trusts the TimeMaps and patches of resources whose versions did not
// change.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// versionedSite keeps the versions of every resource, with patches.
func versionedSite(t *testing.T) *site {
	return newSite(t, testBaseURL, func(c *config.Config) {
		c.Sets = []config.Set{{Name: "default", SetLinks: config.SetLinks{KeepVersions: true, Patches: true}}}
	})
}

// versionFiles returns the files under the version folders of dir (the
// output, or the state archive), by path from dir.
func versionFiles(t *testing.T, dir string) []string {
	var files []string
	for _, sub := range []string{"mementos", "timemaps", "patches"} {
		root := filepath.Join(dir, "resourcesync", sub)
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(dir, p)
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
	}
	return files
}

// editState loads the site's state, lets edit change it, and saves it, as
// an older rsgen, or a failure, may have left it.
func (s *site) editState(edit func(st *snapshot.State)) {
	s.t.Helper()
	st, err := snapshot.Load(s.State)
	if err != nil {
		s.t.Fatal(err)
	}
	defer st.Close()
	edit(st)
	if err := snapshot.Save(s.State, st); err != nil {
		s.t.Fatal(err)
	}
}

// threeVersions builds versionedSite three times, a.json and b.txt
// changed before each, and returns the time of the last build.
func threeVersions(s *site) time.Time {
	for i := range 3 {
		s.write("a.json", `{"v": `+string(rune('0'+i))+`}`)
		s.write("b.txt", strings.Repeat("b", i+1))
		s.build(t0.Add(time.Duration(i) * time.Hour))
	}
	return t0.Add(2 * time.Hour)
}

// TestVersionsLeaveWithKeepVersions: a set that stops keeping versions
// has its mementos, TimeMaps and patches removed from the output and the
// state archive, though the state no longer lists them among its outputs.
func TestVersionsLeaveWithKeepVersions(t *testing.T) {
	s := versionedSite(t)
	last := threeVersions(s)
	files := versionFiles(t, s.Out)
	// Three mementos and a TimeMap each, and two patches of a.json.
	if len(files) != 10 {
		t.Fatalf("%d version files, want 10: %v", len(files), files)
	}
	st, err := snapshot.Load(s.State)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range st.Outputs {
		if strings.Contains(o, "/mementos/") || strings.Contains(o, "/timemaps/") || strings.Contains(o, "/patches/") {
			t.Errorf("the state lists the version file %s among its outputs", o)
		}
	}
	if st.NumVersions() != 6 {
		t.Errorf("the state keeps %d versions, want 6", st.NumVersions())
	}
	st.Close()
	s.Cfg.Sets[0].Patches = false
	s.build(last.Add(time.Hour))
	if files := versionFiles(t, s.Out); len(files) != 8 || strings.Contains(strings.Join(files, " "), "patches/") {
		t.Errorf("without patches the output holds %v; want the 6 mementos and 2 TimeMaps", files)
	}
	s.Cfg.Sets[0].KeepVersions = false
	s.build(last.Add(2 * time.Hour))
	if files := versionFiles(t, s.Out); len(files) != 0 {
		t.Errorf("without kept versions the output still holds %v", files)
	}
	if files := versionFiles(t, filepath.Join(s.State, snapshot.ArchiveDir)); len(files) != 0 {
		t.Errorf("without kept versions the state archive still holds %v", files)
	}
	if _, err := os.Stat(filepath.Join(s.State, snapshot.ArchiveDir, "resourcesync", "mementos")); err == nil {
		t.Error("without kept versions the state archive keeps the empty folders of the mementos")
	}
}

// TestVersionFilesRepaired: the files of versions carried over from the
// last build are trusted as the resources are: a build with --verify
// repairs those that went missing or were altered (the memento from the
// state archive, the TimeMap and patches made again), and so does any
// build when the output does not look like the last build's, here because
// its first memento is gone with the others.
func TestVersionFilesRepaired(t *testing.T) {
	s := versionedSite(t)
	last := threeVersions(s)
	out := func(rel string) string { return filepath.Join(s.Out, filepath.FromSlash(rel)) }
	files := versionFiles(t, s.Out)
	want := map[string][]byte{}
	for _, rel := range files {
		want[rel] = s.outFile(rel)
	}
	check := func(when string) {
		t.Helper()
		for _, rel := range files {
			if got, err := os.ReadFile(out(rel)); err != nil || string(got) != string(want[rel]) {
				t.Errorf("%s: %s holds %q (%v); want %q", when, rel, got, err, want[rel])
			}
		}
	}
	timeMap := "resourcesync/timemaps/b.txt.timemap"
	os.Remove(out("resourcesync/mementos/20240301090000/b.txt"))
	os.RemoveAll(out("resourcesync/patches"))
	if err := os.WriteFile(out(timeMap), []byte(strings.Replace(string(want[timeMap]), "original", "ORIGINAL", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	s.buildWith(generator.Options{Now: last.Add(time.Hour), Verify: true})
	check("after a build with --verify")
	os.RemoveAll(out("resourcesync/mementos"))
	os.Remove(out(timeMap))
	s.build(last.Add(2 * time.Hour))
	check("after a build with the mementos gone")
}

// TestVersionFilesAnOlderStateListed: a state written before format 5
// lists the files of versions among its outputs; the next build keeps
// those it publishes and removes the others, and writes every TimeMap
// again.
func TestVersionFilesAnOlderStateListed(t *testing.T) {
	s := versionedSite(t)
	last := threeVersions(s)
	stray := "resourcesync/mementos/20000101000000/gone.txt"
	if err := os.MkdirAll(filepath.Join(s.Out, "resourcesync/mementos/20000101000000"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Out, filepath.FromSlash(stray)), []byte("gone"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.editState(func(st *snapshot.State) {
		st.Outputs = append(st.Outputs, stray, "resourcesync/timemaps/b.txt.timemap")
	})
	timeMap := filepath.Join(s.Out, "resourcesync", "timemaps", "a.json.timemap")
	good, err := os.ReadFile(timeMap)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(timeMap, []byte(strings.Replace(string(good), "original", "ORIGINAL", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	s.build(last.Add(time.Hour))
	if _, err := os.Stat(filepath.Join(s.Out, filepath.FromSlash(stray))); err == nil {
		t.Errorf("%s, listed by the state and no longer a version, is still published", stray)
	}
	if files := versionFiles(t, s.Out); len(files) != 10 {
		t.Errorf("the output holds %d version files, want 10: %v", len(files), files)
	}
	if got, _ := os.ReadFile(timeMap); string(got) != string(good) {
		t.Errorf("the TimeMap of a.json was not written again: %q", got)
	}
}

// TestIntentOfAFailedBuildWithVersions: a build killed after it put its
// files in place, before it saved its state, leaves a memento that the
// state never knew, kept in the state archive too, and a TimeMap listing
// it. The next build removes the memento from both and writes the TimeMap
// again, as its own versions make it.
func TestIntentOfAFailedBuildWithVersions(t *testing.T) {
	s := versionedSite(t)
	last := threeVersions(s)
	orphan := "resourcesync/mementos/20240301103000/b.txt"
	timeMap := "resourcesync/timemaps/b.txt.timemap"
	good := s.outFile(timeMap)
	for _, dir := range []string{s.Out, filepath.Join(s.State, snapshot.ArchiveDir)} {
		p := filepath.Join(dir, filepath.FromSlash(orphan))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("bbbb"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(s.Out, filepath.FromSlash(timeMap)), []byte(strings.Replace(string(good), "last memento", "memento", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	record := "+ \"" + orphan + "\"\n+ \"" + timeMap + "\"\n"
	if err := os.WriteFile(filepath.Join(s.State, "publishing"), []byte(record), 0o644); err != nil {
		t.Fatal(err)
	}
	s.build(last.Add(time.Hour))
	for _, dir := range []string{s.Out, filepath.Join(s.State, snapshot.ArchiveDir)} {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(orphan))); err == nil {
			t.Errorf("the failed build's memento is still in %s", dir)
		}
	}
	if got := s.outFile(timeMap); string(got) != string(good) {
		t.Errorf("TimeMap %q; want %q", got, good)
	}
}

// TestVersionsOutOfOrderFail: a state whose versions are not in walk
// order, which no rsgen writes, fails the build with a message saying so,
// and the output stays as it was; none of its versions is taken for one no
// longer kept.
func TestVersionsOutOfOrderFail(t *testing.T) {
	s := versionedSite(t)
	last := threeVersions(s)
	before := readTree(t, s.Out)
	s.editState(func(st *snapshot.State) {
		var vs []snapshot.Record
		for v, err := range st.Versions() {
			if err != nil {
				t.Fatal(err)
			}
			vs = append(vs, v)
		}
		f, err := snapshot.NewRecordFile(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		for i := len(vs) - 1; i >= 0; i-- {
			f.Append(&vs[i])
		}
		if err := f.Finish(); err != nil {
			t.Fatal(err)
		}
		st.UseVersions(f)
	})
	_, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: last.Add(time.Hour)})
	if err == nil || !strings.Contains(err.Error(), "kept versions: the state's versions are not in walk order") {
		t.Fatalf("build with versions out of order: %v", err)
	}
	if d := diffBytes(before, readTree(t, s.Out)); len(d) > 0 {
		t.Errorf("the failed build changed the output:\n%v", d)
	}
}

// TestVersionFilesRemovedOnceCounted: the version files of a state that
// lists them among its outputs (before format 5), when the set stops
// keeping versions, are removed once and counted once, though both the
// outputs list and the versions name them.
func TestVersionFilesRemovedOnceCounted(t *testing.T) {
	s := versionedSite(t)
	last := threeVersions(s)
	files := versionFiles(t, s.Out)
	s.editState(func(st *snapshot.State) { st.Outputs = append(st.Outputs, files...) })
	s.Cfg.Sets[0].KeepVersions, s.Cfg.Sets[0].Patches = false, false
	sum := s.build(last.Add(time.Hour))
	if got := sum.Outputs[sink.Version].Removed; got != len(files) {
		t.Errorf("%d version files counted removed, want %d", got, len(files))
	}
	if left := versionFiles(t, s.Out); len(left) != 0 {
		t.Errorf("left %v", left)
	}
}

// TestVersionOfAFileChangedAfterItsScanFails: a new version whose source
// is rewritten (same length) between the scan and its memento's copy
// fails the build, naming the file, and publishes nothing of it; the next
// build keeps the new bytes. A file written just before the build is
// hashed again as it is copied; an older one, whose stat the scan trusts,
// is copied without being hashed, on the strength of that stat, which the
// rewrite moves.
func TestVersionOfAFileChangedAfterItsScanFails(t *testing.T) {
	for _, age := range []time.Duration{0, time.Hour} {
		t.Run(age.String(), func(t *testing.T) {
			s := versionedSite(t)
			s.write("a.json", `{"v": 1}`)
			s.write("b.txt", "bbbb")
			if age != 0 {
				old := time.Now().Add(-age)
				for _, p := range []string{"a.json", "b.txt"} {
					if err := os.Chtimes(s.src(p), old, old); err != nil {
						t.Fatal(err)
					}
				}
			}
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			rewritten := false
			_, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: now, Notify: func(n generator.Note) {
				// The viewer is written before the versions are kept.
				if n.Kind == generator.NoteWritten && !rewritten {
					rewritten = true
					if err := os.WriteFile(s.src("b.txt"), []byte("BBBB"), 0o644); err != nil {
						t.Error(err)
					}
				}
			}})
			if err == nil || !strings.Contains(err.Error(), "b.txt changed since it was scanned") {
				t.Fatalf("build: %v; want a failure naming b.txt as changed since it was scanned", err)
			}
			if files := versionFiles(t, s.Out); len(files) > 0 {
				t.Errorf("the failed build published %q", files)
			}
			s.build(now.Add(time.Hour))
			if got := string(s.outFile("resourcesync/mementos/20260101010000/b.txt")); got != "BBBB" {
				t.Errorf("the next build's memento of b.txt holds %q, want BBBB", got)
			}
		})
	}
}
