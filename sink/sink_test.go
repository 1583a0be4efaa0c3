package sink

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rsgen/rsgen/internal/chunked"
	"github.com/rsgen/rsgen/layout"
)

// TestCommitOrder: staged files are renamed into place in the order of
// publication, whatever order they were written in; a failed rename stops
// before anything that may reference the file is published.
func TestCommitOrder(t *testing.T) {
	out := t.TempDir()
	s := New(out, nil)
	for _, rel := range []string{layout.SourceDescription, "resourcesync/s/capabilitylist.xml", "resourcesync/s/resourcelist.xml", "a/blocked.txt"} {
		dst := s.Path(rel)
		os.MkdirAll(filepath.Dir(dst), 0o755)
		tmp := dst + ".tmp"
		if err := os.WriteFile(tmp, []byte(rel), 0o644); err != nil {
			t.Fatal(err)
		}
		s.Stage(tmp, dst)
	}
	// The resource cannot be renamed: a non-empty folder is in its way.
	os.MkdirAll(filepath.Join(out, "a", "blocked.txt", "x"), 0o755)
	if err := s.Commit(); err == nil {
		t.Fatal("Commit renamed over a folder")
	}
	for _, rel := range []string{layout.SourceDescription, "resourcesync/s/capabilitylist.xml", "resourcesync/s/resourcelist.xml"} {
		if _, err := os.Stat(s.Path(rel)); err == nil {
			t.Errorf("%s was published before the resource it may list", rel)
		}
	}
}

// TestUnchangedFileIsNotRewritten: writing the bytes a file already holds
// stages nothing and leaves the file (its inode) alone; other bytes are
// staged, and published only by Commit.
func TestUnchangedFileIsNotRewritten(t *testing.T) {
	out := t.TempDir()
	rel := "resourcesync/s/resourcelist.xml"
	var written []string
	s := New(out, func(rel string) { written = append(written, rel) })
	if err := s.WriteBytes(rel, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(s.Path(rel))

	s = New(out, func(rel string) { written = append(written, rel) })
	if err := s.WriteBytes(rel, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if staged := stagedPaths(t, s); len(staged) != 0 {
		t.Errorf("the same bytes were staged: %v", staged)
	}
	after, _ := os.Stat(s.Path(rel))
	if !os.SameFile(before, after) {
		t.Error("an unchanged file was replaced")
	}
	if c := s.Counts()[Document]; c.Written != 0 || c.Unchanged != 1 {
		t.Errorf("counts %+v, want 1 unchanged", c)
	}

	if err := s.WriteBytes(rel, []byte("one and more")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(s.Path(rel)); string(got) != "one" {
		t.Errorf("published %q before Commit", got)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(s.Path(rel)); string(got) != "one and more" {
		t.Errorf("published %q after Commit", got)
	}
	if len(written) != 1 {
		t.Errorf("told of %v written, want the first write only (a path is recorded once per build)", written)
	}
}

// TestFailedWriteLeavesNothing: a write that fails leaves no temporary
// file and stages nothing, and Discard removes what was staged.
func TestFailedWriteLeavesNothing(t *testing.T) {
	out := t.TempDir()
	s := New(out, nil)
	boom := errors.New("boom")
	if err := s.WriteNew("resourcesync/s/resourcedump/p.zip", func(w io.Writer) error {
		w.Write([]byte("half a package"))
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("WriteNew: %v, want boom", err)
	}
	if err := s.WriteBytes("resourcesync/s/resourcelist.xml", []byte("list")); err != nil {
		t.Fatal(err)
	}
	s.Discard()
	var left []string
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

func TestKindOf(t *testing.T) {
	for rel, want := range map[string]Kind{
		layout.SourceDescription:                                     Document,
		"resourcesync/s/capabilitylist.xml":                          Document,
		"resourcesync/s/changelists/changelist-20260101T000000Z.xml": Document,
		"resourcesync/s/resourcedump/abc-manifest.xml":               Document,
		"resourcesync/s/resourcedump/abc.zip":                        Package,
		"resourcesync/mementos/20260101000000/a.xml":                 Version,
		"resourcesync/timemaps/a.xml.timemap":                        Version,
		"resourcesync/patches/20260101000000/a.json":                 Version,
		layout.ViewerPage:                                            SideFile,
		"resourcesync/_viewer/viewer.js":                             SideFile,
		"resourcesync/_stylesheet.xsl":                               SideFile,
		layout.NginxFile:                                             SideFile,
		"robots.txt":                                                 SideFile,
	} {
		if got := KindOf(rel); got != want {
			t.Errorf("KindOf(%q) = %d, want %d", rel, got, want)
		}
	}
}

// TestCommitSyncsOnceBeforeRenaming: the first syncEach files are synced
// as they are written; past them, the staged files are made durable by
// one sync of the output's file system, before the first of them is
// renamed into place. A build that writes few files, and a Commit with
// nothing staged, do not sync the file system, and a failed sync
// publishes nothing.
func TestCommitSyncsOnceBeforeRenaming(t *testing.T) {
	stage := func(s *Sink, n int) []string {
		t.Helper()
		var rels []string
		for i := range n {
			rel := fmt.Sprintf("resourcesync/mementos/20260101000000/f%03d.txt", i)
			if err := s.WriteNew(rel, func(w io.Writer) error { _, err := io.WriteString(w, rel); return err }); err != nil {
				t.Fatal(err)
			}
			rels = append(rels, rel)
		}
		if err := s.WriteBytes("resourcesync/s/resourcelist.xml", []byte("list")); err != nil {
			t.Fatal(err)
		}
		return append(rels, "resourcesync/s/resourcelist.xml")
	}
	published := func(s *Sink, rels []string) (n int) {
		for _, rel := range rels {
			if _, err := os.Stat(s.Path(rel)); err == nil {
				n++
			}
		}
		return n
	}
	for _, n := range []int{2, syncEach + 1} {
		out := t.TempDir()
		s := New(out, nil)
		var rels []string
		syncs := 0
		s.syncFS = func(d *os.File) error {
			syncs++
			if n := published(s, rels); n != 0 {
				t.Errorf("synced after %d staged files were renamed into place", n)
			}
			if d.Name() != out {
				t.Errorf("synced %s, want the output folder %s", d.Name(), out)
			}
			return nil
		}
		rels = stage(s, n)
		if err := s.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(); err != nil {
			t.Fatal(err)
		}
		want := 0
		if n+1 > syncEach {
			want = 1
		}
		if syncs != want || published(s, rels) != len(rels) {
			t.Errorf("%d files: %d syncs of the file system and %d files published, want %d and %d", len(rels), syncs, published(s, rels), want, len(rels))
		}
	}

	out := t.TempDir()
	s := New(out, nil)
	s.syncFS = func(*os.File) error { return errors.New("input/output error") }
	rels := stage(s, syncEach)
	if err := s.Commit(); err == nil || !strings.Contains(err.Error(), "input/output error") {
		t.Errorf("Commit after a failed sync: %v", err)
	}
	s.Discard()
	if n := published(s, rels); n != 0 {
		t.Errorf("a failed sync published %d files", n)
	}
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), layout.TempPrefix) {
			t.Errorf("Discard left %s", p)
		}
		return nil
	})
}

// TestVersionsAreCountedNotListed: the files of versions are counted as
// any output, and told to written, but not listed among the outputs the
// state keeps (it keeps the versions apart); a document recorded twice is
// listed and counted once.
func TestVersionsAreCountedNotListed(t *testing.T) {
	var told []string
	s := New(t.TempDir(), func(rel string) { told = append(told, rel) })
	memento := "resourcesync/mementos/20240301080000/a.txt"
	s.Record(memento, true)
	s.Record("resourcesync/timemaps/a.txt.timemap", false)
	s.Record("resourcesync/s/resourcelist.xml", true)
	s.Record("resourcesync/s/resourcelist.xml", true)
	if got := strings.Join(s.Outputs(), " "); got != "resourcesync/s/resourcelist.xml" {
		t.Errorf("outputs %q; want the Resource List alone", got)
	}
	c := s.Counts()
	if c[Version] != (Counts{Written: 1, Unchanged: 1}) || c[Document] != (Counts{Written: 1}) {
		t.Errorf("counts %+v", c)
	}
	if strings.Join(told, " ") != memento+" resourcesync/s/resourcelist.xml" {
		t.Errorf("written told of %q", told)
	}
}

// TestRemoveCountsWhatItRemoved: a removed file is counted once, however
// often it is named; one already gone is not counted, and its empty folder
// goes.
func TestRemoveCountsWhatItRemoved(t *testing.T) {
	out := t.TempDir()
	s := New(out, nil)
	rel := "resourcesync/mementos/20240301080000/a.txt"
	os.MkdirAll(filepath.Dir(s.Path(rel)), 0o755)
	if err := os.WriteFile(s.Path(rel), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.Remove(rel); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.Counts()[Version].Removed; got != 1 {
		t.Errorf("removed %d, want 1", got)
	}
	gone := "resourcesync/mementos/20240301090000/b.txt"
	os.MkdirAll(filepath.Dir(s.Path(gone)), 0o755)
	if err := s.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "resourcesync")); err == nil {
		t.Error("the empty folders stay")
	}
	if got := s.Counts()[Version].Removed; got != 1 {
		t.Errorf("removed %d after a file already gone, want 1", got)
	}
}

// stagedPaths returns the output paths of s's staged files.
func stagedPaths(t *testing.T, s *Sink) []string {
	t.Helper()
	var rels []string
	if err := s.Staged(func(rel string) error { rels = append(rels, rel); return nil }); err != nil {
		t.Fatal(err)
	}
	return rels
}

// TestStagedFilesSpill: with lists of staged files that spill into a file
// past blocks of 16 bytes, every staged file is still listed in the order
// of publication, found by Current (a version file only until
// ForgetVersions), and renamed into place by Commit, or removed by
// Discard; a list that cannot be read back fails Commit and publishes
// nothing of its step, and Discard then removes every temporary file.
func TestStagedFilesSpill(t *testing.T) {
	var spills []*os.File
	spill := func() (chunked.File, error) {
		f, err := os.CreateTemp(t.TempDir(), "spill")
		spills = append(spills, f)
		return f, err
	}
	stage := func(s *Sink) (rels []string) {
		t.Helper()
		for i := range 40 {
			rel := fmt.Sprintf("resourcesync/mementos/20260101000000/dir %02d/f%03d.txt", i/10, i)
			if i%4 == 0 {
				rel = fmt.Sprintf("resourcesync/s%d/resourcelist.xml", i)
			}
			if err := s.WriteNew(rel, func(w io.Writer) error { _, err := io.WriteString(w, rel); return err }); err != nil {
				t.Fatal(err)
			}
			rels = append(rels, rel)
		}
		return rels
	}
	byStep := func(rels []string) []string {
		rels = slices.Clone(rels)
		slices.SortStableFunc(rels, func(x, y string) int { return cmp.Compare(layout.PublishStep(x), layout.PublishStep(y)) })
		return rels
	}

	out := t.TempDir()
	s := New(out, nil)
	s.SpillInto(spill, 16)
	rels := stage(s)
	if got := stagedPaths(t, s); !slices.Equal(got, byStep(rels)) {
		t.Fatalf("staged %q, want %q", got, byStep(rels))
	}
	if len(spills) == 0 {
		t.Fatal("the lists of staged files did not spill")
	}
	memento, list := s.Path(rels[1]), s.Path(rels[0])
	if s.Current(memento) == memento || s.Current(list) == list {
		t.Error("Current does not find a staged file")
	}
	s.ForgetVersions()
	if s.Current(memento) != memento || s.Current(list) == list {
		t.Error("ForgetVersions forgot other than the version files")
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, rel := range rels {
		if got, err := os.ReadFile(s.Path(rel)); err != nil || string(got) != rel {
			t.Errorf("%s holds %q (%v) after Commit", rel, got, err)
		}
	}
	if left := stagedPaths(t, s); len(left) != 0 || s.Current(list) != list {
		t.Errorf("after Commit, %d files are still staged", len(left))
	}

	t.Run("discard", func(t *testing.T) {
		out := t.TempDir()
		s := New(out, nil)
		s.SpillInto(spill, 16)
		stage(s)
		s.Discard()
		filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				t.Errorf("Discard left %s", p)
			}
			return nil
		})
	})

	t.Run("unreadable", func(t *testing.T) {
		out := t.TempDir()
		s := New(out, nil)
		s.SpillInto(spill, 16)
		rels := stage(s)
		for _, f := range spills[len(spills)-4:] {
			f.Truncate(1) // the lists of the last steps staged lose their spilled blocks
		}
		if err := s.Commit(); err == nil || !strings.Contains(err.Error(), "the files this build staged") {
			t.Fatalf("Commit with lists it cannot read back: %v", err)
		}
		if _, err := os.Stat(s.Path(rels[0])); err == nil {
			t.Error("a list was published from a list of staged files that could not be read back")
		}
		s.Discard()
		filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				t.Errorf("Discard, unable to read its lists back, left %s", p)
			}
			return nil
		})
	})
}

// TestKeepWithoutHardLinks: where the file system has no hard links, Keep
// copies, with src's bytes and mtime, replaces what dst held, and leaves
// no temporary file (the deploy's hash cache and the state archive rely
// on it).
func TestKeepWithoutHardLinks(t *testing.T) {
	link = func(oldname, newname string) error {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: errors.ErrUnsupported}
	}
	t.Cleanup(func() { link = os.Link })
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	if err := os.WriteFile(src, []byte("the list"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, []byte("older"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Keep(src, dst); err != nil {
		t.Fatal(err)
	}
	si, _ := os.Stat(src)
	di, err := os.Stat(dst)
	if got, _ := os.ReadFile(dst); err != nil || string(got) != "the list" || os.SameFile(si, di) || !di.ModTime().Equal(si.ModTime()) {
		t.Errorf("kept %q (%v); want a copy of src with its mtime", got, err)
	}
	if names, _ := filepath.Glob(filepath.Join(dir, layout.TempPrefix+"*")); len(names) != 0 {
		t.Errorf("temporary files left: %v", names)
	}
}

// TestFoldsCase: a folder of a file system that tells names apart by case
// (Linux's) is found not to fold it, and the probe leaves nothing behind;
// a folder that cannot be made is an error naming it.
func TestFoldsCase(t *testing.T) {
	defer func(was bool) { probeCase = was }(probeCase)
	probeCase = true
	dir := filepath.Join(t.TempDir(), "out")
	folds, err := FoldsCase(dir)
	if err != nil {
		t.Fatal(err)
	}
	if folds {
		t.Skip("this file system folds case")
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 0 {
		t.Errorf("the probe left %v, %v", entries, err)
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := FoldsCase(filepath.Join(file, "out")); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("FoldsCase under a file: %v, want an error naming it", err)
	}
}

// TestDisplace: a file written where an earlier build published a file of
// the other type is staged (beside it, or in the folder above when a file
// is in the way of its own), and Commit removes the displaced files, and
// the folders they leave empty, before it renames anything into place;
// RemoveInFolder then leaves the new type alone. Discard leaves both the
// old files and no temporary file.
func TestDisplace(t *testing.T) {
	publish := func(t *testing.T, out string, files ...string) {
		for _, rel := range files {
			p := filepath.Join(out, filepath.FromSlash(rel))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte("old "+rel), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name            string
		old             []string // published by the earlier build
		newRel, gone    string
		keepAfterRemove string // a path RemoveInFolder is asked to remove afterwards, and must leave
	}{
		{"folder to file", []string{"dir/b.txt", "dir/sub/c.txt"}, "dir", "dir/b.txt", "dir/sub/c.txt"},
		{"file to folder", []string{"a/thing"}, "a/thing/x/c.txt", "a/thing", "a/thing"},
	} {
		for _, commit := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, commit %v", tc.name, commit), func(t *testing.T) {
				out := t.TempDir()
				publish(t, out, tc.old...)
				s := New(out, nil)
				if err := s.WriteNew(tc.newRel, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
					t.Fatal(err)
				}
				for _, rel := range tc.old {
					s.Displace(rel)
				}
				if !commit {
					s.Discard()
					for _, rel := range tc.old {
						if _, err := os.Stat(s.Path(rel)); err != nil {
							t.Errorf("Discard lost %s: %v", rel, err)
						}
					}
					filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
						if err == nil && strings.HasPrefix(d.Name(), layout.TempPrefix) {
							t.Errorf("Discard left %s", p)
						}
						return nil
					})
					return
				}
				if err := s.Commit(); err != nil {
					t.Fatal(err)
				}
				if got, err := os.ReadFile(s.Path(tc.newRel)); err != nil || string(got) != "new" {
					t.Errorf("%s holds %q, %v; want the new file", tc.newRel, got, err)
				}
				for _, rel := range []string{tc.gone, tc.keepAfterRemove} {
					if removed, err := RemoveInFolder(out, s.Path(rel)); removed || err != nil {
						t.Errorf("RemoveInFolder(%s) = %v, %v; want the new type left alone", rel, removed, err)
					}
				}
				if got, err := os.ReadFile(s.Path(tc.newRel)); err != nil || string(got) != "new" {
					t.Errorf("after the removals, %s holds %q, %v", tc.newRel, got, err)
				}
			})
		}
	}
}

// TestLazyWritesAtOnceStagedInOrder: files written at once by WriteLazy
// and staged by StageLazy in an order of the caller's are recorded and
// renamed into place in that order, whichever finished first; one whose
// bytes are the file's stages nothing and leaves it alone.
func TestLazyWritesAtOnceStagedInOrder(t *testing.T) {
	out := t.TempDir()
	rels := make([]string, 8)
	for k := range rels {
		rels[k] = fmt.Sprintf("resourcesync/s/resourcelist-%05d.xml", k+1)
	}
	s := New(out, nil)
	if err := s.WriteBytes(rels[3], []byte("part 3")); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(s.Path(rels[3]))

	s = New(out, nil)
	tmps := make([]string, len(rels))
	errs := make(chan error, len(rels))
	for k := len(rels) - 1; k >= 0; k-- { // the last started first
		go func() {
			var err error
			tmps[k], err = s.WriteLazy(rels[k], func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "part %d", k)
				return err
			})
			errs <- err
		}()
	}
	for range rels {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for k, rel := range rels {
		s.StageLazy(rel, tmps[k])
	}
	if tmps[3] != "" {
		t.Errorf("the unchanged part left %s", tmps[3])
	}
	if got := stagedPaths(t, s); !slices.Equal(got, slices.Delete(slices.Clone(rels), 3, 4)) {
		t.Errorf("staged %v, want the changed parts in order", got)
	}
	if !slices.Equal(s.Outputs(), rels) {
		t.Errorf("outputs %v, want %v", s.Outputs(), rels)
	}
	if c := s.Counts()[Document]; c.Written != 7 || c.Unchanged != 1 {
		t.Errorf("counts %+v, want 7 written, 1 unchanged", c)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	for k, rel := range rels {
		if got, _ := os.ReadFile(s.Path(rel)); string(got) != fmt.Sprintf("part %d", k) {
			t.Errorf("%s holds %q", rel, got)
		}
	}
	if after, _ := os.Stat(s.Path(rels[3])); !os.SameFile(before, after) {
		t.Error("the unchanged part was replaced")
	}
}
