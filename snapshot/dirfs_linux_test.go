package snapshot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestLinkIntoAnOpenFolder: a file a Tree opened on Linux links into an
// open folder: the new name is the file opened, even when its name in the
// source now leads to another file; a name taken refuses the link.
func TestLinkIntoAnOpenFolder(t *testing.T) {
	src, out := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "a.txt"), []byte("alpha"), 0o644); err != nil {
		t.Fatal(err)
	}
	tree := openTree(t, src)
	f, err := tree.Open("a.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, ok := f.(FolderLinker)
	if !ok {
		t.Fatalf("%T links into no open folder", f)
	}
	// The name now leads to another file: the one opened is linked.
	if err := os.Rename(filepath.Join(src, "a.txt"), filepath.Join(src, "old.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "a.txt"), []byte("another"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	if err := l.LinkInto(dir, "copy.txt"); err != nil {
		t.Fatal(err)
	}
	linked, _ := os.Stat(filepath.Join(out, "copy.txt"))
	opened, _ := os.Stat(filepath.Join(src, "old.txt"))
	if !os.SameFile(linked, opened) {
		t.Error("the link is not the file opened")
	}
	if err := l.LinkInto(dir, "copy.txt"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("a link over a name taken: %v, want fs.ErrExist", err)
	}
}
