package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/rsgen/rsgen/internal/sysfile"
	"github.com/rsgen/rsgen/rs"
)

// treeResolvers are the ways a Tree resolves names: the system's own
// (openat2 on Linux) and os.Root's, which other systems use; the tests of
// the Tree run against both, so that Linux tests os.Root's too.
var treeResolvers = []struct {
	name string
	open func(*Tree) (resolver, error)
}{{"native", openNative}, {"os.Root", openRooted}}

// forEachResolver runs test once per resolver, with a function that opens
// a Tree that uses it, closed when the test ends.
func forEachResolver(t *testing.T, test func(t *testing.T, open func(dir string, follow bool) *Tree)) {
	for _, r := range treeResolvers {
		t.Run(r.name, func(t *testing.T) {
			test(t, func(dir string, follow bool) *Tree {
				t.Helper()
				tree, err := openTreeWith(dir, follow, r.open)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { tree.Close() })
				return tree
			})
		})
	}
}

// TestDirFSFiles: a Tree opens files whose stat says what os.Lstat says,
// reads them to the end, and lists folders sorted.
func TestDirFSFiles(t *testing.T) {
	forEachResolver(t, testDirFSFiles)
}

func testDirFSFiles(t *testing.T, newTree func(string, bool) *Tree) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("bravo\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	fsys := newTree(dir, false)
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
		!info.ModTime().Equal(want.ModTime()) || sysfile.Inode(info) != sysfile.Inode(want) || info.IsDir() {
		t.Errorf("stat %v %d %v %v %d, want %v %d %v %v %d", info.Name(), info.Size(), info.Mode(), info.ModTime(), sysfile.Inode(info),
			want.Name(), want.Size(), want.Mode(), want.ModTime(), sysfile.Inode(want))
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
	forEachResolver(t, testFileReplacedByFIFO)
}

func testFileReplacedByFIFO(t *testing.T, newTree func(string, bool) *Tree) {
	dir := t.TempDir()
	if err := mkfifo(filepath.Join(dir, "pipe")); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	f, err := newTree(dir, false).Open("pipe")
	if err != nil {
		t.Fatal(err)
	}
	info, err := f.Stat()
	f.Close()
	if err != nil || info.Mode().Type() != fs.ModeNamedPipe {
		t.Fatalf("stat: %v, %v; want a named pipe", info, err)
	}
	r := Record{Path: "pipe"}
	err = newHasher([]rs.HashAlgorithm{rs.SHA256}).hashFile(context.Background(), newTree(dir, false), &r, true, nil)
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
// with openat2 and with os.Root.
func TestTreeNeverLeavesTheFolder(t *testing.T) {
	forEachResolver(t, testTreeNeverLeavesTheFolder)
}

func testTreeNeverLeavesTheFolder(t *testing.T, newTree func(string, bool) *Tree) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644)
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "real"), 0o755)
	os.WriteFile(filepath.Join(dir, "real", "f"), []byte("inside"), 0o644)
	symlink(t, filepath.Join(outside, "secret"), filepath.Join(dir, "to-secret"))
	symlink(t, outside, filepath.Join(dir, "to-outside"))
	symlink(t, "real", filepath.Join(dir, "to-real"))
	symlink(t, "f", filepath.Join(dir, "real", "to-f"))
	for _, follow := range []bool{false, true} {
		tree := newTree(dir, follow)
		for _, tc := range []struct {
			name   string
			inside bool // the name stays inside through links
		}{
			{"real/f", true}, {"to-secret", false}, {"to-outside/secret", false}, {"to-real/f", true}, {"real/to-f", true},
		} {
			f, err := tree.Open(tc.name)
			if err == nil {
				f.Close()
			}
			wantOK := tc.name == "real/f" || follow && tc.inside
			if (err == nil) != wantOK || err != nil && !errors.Is(err, ErrOutside) {
				t.Errorf("follow=%v: open %s: %v, want success %v (or ErrOutside)", follow, tc.name, err, wantOK)
			}
		}
		entries, err := tree.ReadDir("to-real")
		if follow != (err == nil) || err != nil && !errors.Is(err, ErrOutside) {
			t.Errorf("follow=%v: read the folder to-real: %v, %v", follow, entries, err)
		}
	}
}

// symlink makes a symbolic link, or skips the test where the system
// cannot (Windows without the right).
func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
}

// TestEntryInfoStatsBeneathTheTree: an entry's Info stats the file in its
// folder beneath the Tree, as Lstat would: not a link's target, and not a
// file outside through a folder swapped for a link after it was read; Open
// refuses that folder too.
func TestEntryInfoStatsBeneathTheTree(t *testing.T) {
	forEachResolver(t, testEntryInfoStatsBeneathTheTree)
}

func testEntryInfoStatsBeneathTheTree(t *testing.T, newTree func(string, bool) *Tree) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "docs", "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, "a.txt", filepath.Join(dir, "docs", "link"))
	for i := range keptFolders {
		other := filepath.Join(dir, fmt.Sprintf("other%d", i))
		if err := os.Mkdir(other, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(other, "x"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "a.txt"), []byte("a secret, longer\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys := newTree(dir, false)
	entries, err := fsys.ReadDir("docs")
	if err != nil || len(entries) != 2 {
		t.Fatalf("ReadDir: %v, %v", entries, err)
	}
	info, err := entries[0].Info()
	want, _ := os.Lstat(filepath.Join(dir, "docs", "a.txt"))
	if err != nil || info.Name() != "a.txt" || info.Size() != 6 || sysfile.Inode(info) != sysfile.Inode(want) || !info.ModTime().Equal(want.ModTime()) {
		t.Errorf("a.txt: %v, %v; want size 6, inode %d", info, err, sysfile.Inode(want))
	}
	if info, err := entries[1].Info(); err != nil || info.Mode().Type() != fs.ModeSymlink {
		t.Errorf("link: %v, %v; want the link itself", info, err)
	}

	// The folder is swapped for a link to another folder after it was read.
	// Files of other folders are stat'ed, so that docs is no longer kept
	// open.
	for i := range keptFolders {
		others, err := fsys.ReadDir(fmt.Sprintf("other%d", i))
		if err != nil || len(others) != 1 {
			t.Fatalf("ReadDir: %v, %v", others, err)
		}
		if _, err := others[0].Info(); err != nil {
			t.Fatal(err)
		}
	}
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
	for _, r := range treeResolvers {
		t.Run(r.name, func(t *testing.T) { testStatsKeepFewFoldersOpen(t, r.open) })
	}
}

func testStatsKeepFewFoldersOpen(t *testing.T, open func(*Tree) (resolver, error)) {
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
	fsys, err := openTreeWith(dir, false, open)
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

// TestListStatsEntriesBeneathTheFolder: a Tree lists a folder sorted by
// name, with each entry's type, and stats its regular files (and only
// those: not a link's target) as os.Lstat does; a folder reached through
// a link is refused, as Open refuses it, unless links are followed.
func TestListStatsEntriesBeneathTheFolder(t *testing.T) {
	forEachResolver(t, testListStatsEntriesBeneathTheFolder)
}

func testListStatsEntriesBeneathTheFolder(t *testing.T, newTree func(string, bool) *Tree) {
	dir := t.TempDir()
	names := []string{"z.txt", "a b.txt", "été.txt", "sub"}
	if runtime.GOOS == "linux" {
		names = append(names, "bad\xffname")
	}
	for _, name := range names {
		p := filepath.Join(dir, "docs", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if name == "sub" {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	symlink(t, "z.txt", filepath.Join(dir, "docs", "link"))
	symlink(t, "docs", filepath.Join(dir, "through"))
	fsys := newTree(dir, false)
	for _, stat := range []bool{false, true} {
		entries, err := fsys.list("docs", stat)
		if err != nil {
			t.Fatal(err)
		}
		want, err := fs.ReadDir(os.DirFS(dir), "docs")
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != len(want) {
			t.Fatalf("stat %v: %d entries, want %d", stat, len(entries), len(want))
		}
		for i, e := range entries {
			w := want[i]
			if e.path != "docs/"+w.Name() || e.name() != w.Name() || e.mode != w.Type() {
				t.Errorf("stat %v: entry %d is %q (%v), want docs/%s (%v)", stat, i, e.path, e.mode, w.Name(), w.Type())
			}
			if e.statted != (stat && w.Type().IsRegular()) {
				t.Errorf("stat %v: %s stat'ed %v", stat, e.path, e.statted)
			}
			if !e.statted {
				continue
			}
			info, _ := os.Lstat(filepath.Join(dir, "docs", w.Name()))
			if e.statErr != nil || e.stat != StatOf(info) {
				t.Errorf("%s: stat %+v, %v; want %+v", e.path, e.stat, e.statErr, StatOf(info))
			}
		}
	}
	if entries, err := fsys.list(".", true); err != nil || len(entries) != 2 || entries[0].path != "docs" || entries[1].path != "through" {
		t.Errorf("list .: %v, %v; want docs and through", entries, err)
	}
	if _, err := fsys.list("through", true); !errors.Is(err, ErrOutside) {
		t.Errorf("list through a link: %v, want ErrOutside", err)
	}
	if entries, err := newTree(dir, true).list("through", true); err != nil || len(entries) != len(names)+1 {
		t.Errorf("list through a link followed: %d entries, %v; want %d", len(entries), err, len(names)+1)
	}
	if _, err := fsys.list("docs/z.txt", false); err == nil {
		t.Error("a file listed as a folder")
	}
}
