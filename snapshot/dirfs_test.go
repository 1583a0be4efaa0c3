package snapshot

import (
	"context"
	"errors"
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
	if err := f.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("second close: %v, want fs.ErrClosed", err)
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
