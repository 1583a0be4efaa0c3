package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/rsgen/rsgen/rs"
)

// TestDirFSFiles: DirFS opens files as bare descriptors whose stat says
// what os.Lstat says, reads them to the end, and lists folders sorted.
func TestDirFSFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("bravo\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	fsys := openTree(t, dir)
	f, err := fsys.Open("b.txt")
	if err != nil {
		t.Fatal(err)
	}
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.Lstat(filepath.Join(dir, "b.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Name() != "b.txt" || info.Size() != want.Size() || info.Mode() != want.Mode() ||
		!info.ModTime().Equal(want.ModTime()) || inode(info) != inode(want) || info.IsDir() {
		t.Errorf("stat %v %d %v %v %d, want %v %d %v %v %d", info.Name(), info.Size(), info.Mode(), info.ModTime(), inode(info),
			want.Name(), want.Size(), want.Mode(), want.ModTime(), inode(want))
	}
	data, err := io.ReadAll(f)
	if err != nil || string(data) != "bravo\n" {
		t.Errorf("read %q, %v", data, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	err = f.Close()
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrClosed) || !errors.As(err, &pe) || pe.Path != filepath.Join(dir, "b.txt") {
		t.Errorf("second close: %v, want fs.ErrClosed naming the file's full path", err)
	}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil || len(entries) != 2 || entries[0].Name() != "a" || !entries[0].IsDir() || entries[1].Name() != "b.txt" {
		t.Errorf("ReadDir: %v, %v", entries, err)
	}
	if _, err := fsys.Open("../b.txt"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("open ../b.txt: %v, want fs.ErrInvalid", err)
	}
}

// TestFileReplacedByFIFO: a file that became a FIFO after the walk saw a
// regular file is opened without blocking, and its read fails as a file
// that changed while it was read.
func TestFileReplacedByFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	f, err := openTree(t, dir).Open("pipe")
	if err != nil {
		t.Fatal(err)
	}
	info, err := f.Stat()
	f.Close()
	if err != nil || info.Mode().Type() != fs.ModeNamedPipe {
		t.Fatalf("stat: %v, %v; want a named pipe", info, err)
	}
	r := Record{Path: "pipe"}
	err = newHasher([]rs.HashAlgorithm{rs.SHA256}).hashFile(context.Background(), openTree(t, dir), &r, true, nil)
	if !errors.Is(err, ErrChangedWhileReading) {
		t.Errorf("hashFile on a FIFO: %v, want ErrChangedWhileReading", err)
	}
}

// openTree opens dir as a Tree that does not follow links, closed when the
// test ends.
func openTree(t testing.TB, dir string) *Tree {
	t.Helper()
	tree, err := OpenTree(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tree.Close() })
	return tree
}

// TestTreeNeverLeavesTheFolder: a Tree opens nothing through a symbolic
// link unless it follows links, and then only links that stay inside;
// with openat2 and with its per-component fallback for older kernels.
func TestTreeNeverLeavesTheFolder(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644)
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "real"), 0o755)
	os.WriteFile(filepath.Join(dir, "real", "f"), []byte("inside"), 0o644)
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "to-secret"))
	os.Symlink(outside, filepath.Join(dir, "to-outside"))
	os.Symlink("real", filepath.Join(dir, "to-real"))
	for _, follow := range []bool{false, true} {
		tree, err := OpenTree(dir, follow)
		if err != nil {
			t.Fatal(err)
		}
		defer tree.Close()
		for _, tc := range []struct {
			name   string
			inside bool // the name stays inside through links
		}{
			{"real/f", true}, {"to-secret", false}, {"to-outside/secret", false}, {"to-real/f", true},
		} {
			for _, open := range []func(string) (int, error){
				func(n string) (int, error) { return tree.openat(n, syscall.O_RDONLY) },
				func(n string) (int, error) { return tree.openatByComponent(n, syscall.O_RDONLY) },
			} {
				fd, err := open(tc.name)
				if err == nil {
					syscall.Close(fd)
				}
				wantOK := tc.name == "real/f" || follow && tc.inside
				if (err == nil) != wantOK || err != nil && !errors.Is(err, ErrOutside) {
					t.Errorf("follow=%v: open %s: %v, want success %v (or ErrOutside)", follow, tc.name, err, wantOK)
				}
			}
		}
	}
}

// TestEntryInfoStatsBeneathTheTree: an entry's Info stats the file in its
// folder beneath the Tree, as Lstat would: not a link's target, and not a
// file outside through a folder swapped for a link after it was read; Open
// refuses that folder too.
func TestEntryInfoStatsBeneathTheTree(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "docs", "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(dir, "docs", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "a.txt"), []byte("a secret, longer\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys := openTree(t, dir)
	entries, err := fsys.ReadDir("docs")
	if err != nil || len(entries) != 2 {
		t.Fatalf("ReadDir: %v, %v", entries, err)
	}
	info, err := entries[0].Info()
	want, _ := os.Lstat(filepath.Join(dir, "docs", "a.txt"))
	if err != nil || info.Name() != "a.txt" || info.Size() != 6 || inode(info) != inode(want) || !info.ModTime().Equal(want.ModTime()) {
		t.Errorf("a.txt: %v, %v; want size 6, inode %d", info, err, inode(want))
	}
	if info, err := entries[1].Info(); err != nil || info.Mode().Type() != fs.ModeSymlink {
		t.Errorf("link: %v, %v; want the link itself", info, err)
	}

	// The folder is swapped for a link to another folder after it was read.
	fsys.folders.closeAll() // as if other folders had been stat'ed since
	if err := os.Rename(filepath.Join(dir, "docs"), filepath.Join(dir, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "docs")); err != nil {
		t.Fatal(err)
	}
	if info, err := entries[0].Info(); !errors.Is(err, ErrOutside) {
		t.Errorf("a.txt through a swapped folder: %v, %v; want ErrOutside", info, err)
	}
	if f, err := fsys.Open("docs/a.txt"); !errors.Is(err, ErrOutside) {
		t.Errorf("open a.txt through a swapped folder: %v, %v; want ErrOutside", f, err)
	}
	if err := os.Remove(filepath.Join(dir, "docs")); err != nil {
		t.Fatal(err)
	}
	if _, err := entries[0].Info(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a.txt in a folder gone: %v; want fs.ErrNotExist", err)
	}
}

// TestStatsKeepFewFoldersOpen: stat'ing the files of many folders keeps
// at most keptFolders of them open, and Close closes those.
func TestStatsKeepFewFoldersOpen(t *testing.T) {
	dir := t.TempDir()
	const folders = 50
	for i := range folders {
		sub := filepath.Join(dir, fmt.Sprintf("f%02d", i))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, "x"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := openDescriptors(t)
	fsys, err := OpenTree(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	var infos []fs.DirEntry
	for i := range folders {
		entries, err := fsys.ReadDir(fmt.Sprintf("f%02d", i))
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, entries...)
	}
	for _, e := range infos {
		if _, err := e.Info(); err != nil {
			t.Fatal(err)
		}
	}
	if open := openDescriptors(t) - before; open != 1+keptFolders {
		t.Errorf("%d descriptors open after stat'ing files in %d folders, want the Tree's and %d folders'", open, folders, keptFolders)
	}
	if err := fsys.Close(); err != nil {
		t.Fatal(err)
	}
	if open := openDescriptors(t) - before; open != 0 {
		t.Errorf("%d descriptors open after Close", open)
	}
}

func openDescriptors(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(fds)
}
