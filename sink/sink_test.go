package sink

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if len(s.Staged()) != 0 {
		t.Errorf("the same bytes were staged: %v", s.Staged())
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

// TestCommitSyncsOnceBeforeRenaming: the staged files are made durable by
// one sync of the output's file system, before the first of them is
// renamed into place; a Commit with nothing staged does not sync, and a
// failed sync publishes nothing.
func TestCommitSyncsOnceBeforeRenaming(t *testing.T) {
	out := t.TempDir()
	rels := []string{"resourcesync/s/resourcelist.xml", "resourcesync/mementos/20260101000000/a.txt"}
	stage := func(s *Sink) {
		t.Helper()
		if err := s.WriteBytes(rels[0], []byte("list")); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteNew(rels[1], func(w io.Writer) error { _, err := w.Write([]byte("a")); return err }); err != nil {
			t.Fatal(err)
		}
	}
	published := func(s *Sink) (n int) {
		for _, rel := range rels {
			if _, err := os.Stat(s.Path(rel)); err == nil {
				n++
			}
		}
		return n
	}

	s := New(out, nil)
	syncs := 0
	s.syncFS = func(d *os.File) error {
		syncs++
		if n := published(s); n != 0 {
			t.Errorf("synced after %d staged files were renamed into place", n)
		}
		if d.Name() != out {
			t.Errorf("synced %s, want the output folder %s", d.Name(), out)
		}
		return nil
	}
	stage(s)
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	if syncs != 1 || published(s) != 2 {
		t.Errorf("%d syncs and %d files published, want 1 and 2", syncs, published(s))
	}

	out = t.TempDir()
	s = New(out, nil)
	s.syncFS = func(*os.File) error { return errors.New("input/output error") }
	stage(s)
	if err := s.Commit(); err == nil || !strings.Contains(err.Error(), "input/output error") {
		t.Errorf("Commit after a failed sync: %v", err)
	}
	s.Discard()
	if n := published(s); n != 0 {
		t.Errorf("a failed sync published %d files", n)
	}
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), layout.TempPrefix) {
			t.Errorf("Discard left %s", p)
		}
		return nil
	})
}
