package destination

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrSymlink is returned for a path of DIR that goes through a symbolic
// link: a sync writes, reads and removes nothing through one, so that a
// link in DIR can never lead it elsewhere.
var ErrSymlink = errors.New("a symbolic link is in the way (rsgen sync follows no link in DIR)")

// mirrorDir is DIR, opened as an os.Root so that no path can leave it,
// and checked component by component so that no path goes through a
// symbolic link inside it either.
type mirrorDir struct {
	path string
	root *os.Root

	mu      sync.Mutex
	folders map[string]bool // folders known to be real folders, a bounded cache
}

// maxKnownFolders bounds the cache of folders checked.
const maxKnownFolders = 4096

// openMirror opens the folder path, creating it first with create.
func openMirror(dir string, create bool) (*mirrorDir, error) {
	if create {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &mirrorDir{path: dir, root: root, folders: map[string]bool{}}, nil
}

func (d *mirrorDir) Close() error { return d.root.Close() }

// folder makes sure the folder rel exists as a real folder, creating what
// is missing, and refusing links and files on the way.
func (d *mirrorDir) folder(rel string) error {
	if rel == "." || rel == "" {
		return nil
	}
	d.mu.Lock()
	known := d.folders[rel]
	d.mu.Unlock()
	if known {
		return nil
	}
	if err := d.folder(path.Dir(rel)); err != nil {
		return err
	}
	info, err := d.root.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		err = d.root.Mkdir(rel, 0o755)
		if errors.Is(err, fs.ErrExist) { // made by another worker meanwhile
			return d.folder(rel)
		}
	case err != nil:
	case info.Mode()&fs.ModeSymlink != 0:
		err = ErrSymlink
	case !info.IsDir():
		err = fmt.Errorf("%s is a file, where a folder is needed", rel)
	}
	if err != nil {
		return &fs.PathError{Op: "mkdir", Path: d.join(rel), Err: err}
	}
	d.know(rel)
	return nil
}

// know adds the real folder rel to the cache.
func (d *mirrorDir) know(rel string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.folders) >= maxKnownFolders {
		clear(d.folders)
	}
	d.folders[rel] = true
}

// forget drops the folders under rel (and rel) from the cache.
func (d *mirrorDir) forget(rel string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for f := range d.folders {
		if f == rel || strings.HasPrefix(f, rel+"/") {
			delete(d.folders, f)
		}
	}
}

func (d *mirrorDir) join(rel string) string { return d.path + string(os.PathSeparator) + rel }

// tempFile is a file being written beside its place in DIR, under a
// temporary name, so that it lands by a rename within its folder.
type tempFile struct {
	*os.File
	dir  *os.File // its folder
	name string   // in its folder
}

// createTemp creates a temporary file in the folder of rel, making the
// folder first. The folder is opened through the root, after folder has
// checked that no link is on the way, and the file created in it with
// openat, so that it costs no walk from DIR.
func (d *mirrorDir) createTemp(rel string) (*tempFile, error) {
	parent := path.Dir(rel)
	if err := d.folder(parent); err != nil {
		return nil, err
	}
	dir, err := d.root.OpenFile(parent, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	var b [8]byte
	rand.Read(b[:])
	name := tempPrefix + hex.EncodeToString(b[:])
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		dir.Close()
		return nil, &fs.PathError{Op: "create", Path: d.join(path.Join(parent, name)), Err: err}
	}
	return &tempFile{File: os.NewFile(uintptr(fd), d.join(path.Join(parent, name))), dir: dir, name: name}, nil
}

// setMtime sets the file's modification time.
func (t *tempFile) setMtime(mtime time.Time) error {
	ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, unix.NsecToTimespec(mtime.UnixNano())}
	if err := unix.UtimesNanoAt(int(t.Fd()), "", ts, unix.AT_EMPTY_PATH); err != nil {
		return &fs.PathError{Op: "utimensat", Path: t.Name(), Err: err}
	}
	return nil
}

// discard closes and removes the temporary file.
func (d *mirrorDir) discard(t *tempFile) {
	t.Close()
	unix.Unlinkat(int(t.dir.Fd()), t.name, 0)
	t.dir.Close()
}

// place renames the temporary file t to rel, in the same folder, closes
// it and returns its stamp, taken after the rename (which changes its
// ctime). A link at rel is replaced, never followed; a folder there is an
// error.
func (d *mirrorDir) place(t *tempFile, rel string) (stamp, error) {
	err := unix.Renameat(int(t.dir.Fd()), t.name, int(t.dir.Fd()), path.Base(rel))
	switch {
	case errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST):
		err = &fs.PathError{Op: "write", Path: d.join(rel), Err: errors.New("a folder is there (another resource's path goes through it)")}
	case err != nil:
		err = &fs.PathError{Op: "rename", Path: d.join(rel), Err: err}
	}
	if err != nil {
		d.discard(t)
		return stamp{}, err
	}
	t.dir.Close()
	info, err := t.Stat()
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return stamp{}, err
	}
	return stampOf(info), nil
}

// stat returns the stamp of the regular file rel; false when there is
// none (not there, or something else than a regular file).
func (d *mirrorDir) stat(rel string) (stamp, bool, error) {
	if err := d.realParents(rel); err != nil {
		return stamp{}, false, nil
	}
	info, err := d.root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return stamp{}, false, nil
	}
	if err != nil {
		return stamp{}, false, err
	}
	if !info.Mode().IsRegular() {
		return stamp{}, false, nil
	}
	return stampOf(info), true, nil
}

// realParents checks that no folder on the way to rel is a link; it
// creates nothing. The folders it finds real join the cache that folder
// keeps.
func (d *mirrorDir) realParents(rel string) error {
	dir := path.Dir(rel)
	if dir == "." {
		return nil
	}
	d.mu.Lock()
	known := d.folders[dir]
	d.mu.Unlock()
	if known {
		return nil
	}
	if err := d.realParents(dir); err != nil {
		return err
	}
	info, err := d.root.Lstat(dir)
	switch {
	case err != nil:
		return err
	case info.Mode()&fs.ModeSymlink != 0:
		return &fs.PathError{Op: "open", Path: d.join(dir), Err: ErrSymlink}
	case !info.IsDir():
		return &fs.PathError{Op: "open", Path: d.join(dir), Err: syscall.ENOTDIR}
	}
	d.know(dir)
	return nil
}

// open opens the regular file rel for reading, through no link.
func (d *mirrorDir) open(rel string) (*os.File, error) {
	if err := d.realParents(rel); err != nil {
		return nil, err
	}
	return d.root.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}

// remove removes the file rel (a link there is removed itself), then the
// folders it leaves empty, up to DIR. A file that is not there is no
// error.
func (d *mirrorDir) remove(rel string) error {
	if err := d.realParents(rel); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if info, err := d.root.Lstat(rel); err == nil && info.IsDir() {
		return &fs.PathError{Op: "remove", Path: d.join(rel), Err: errors.New("a folder is there, not the file the Source deleted")}
	}
	if err := d.root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for dir := path.Dir(rel); dir != "."; dir = path.Dir(dir) {
		d.forget(dir)
		if err := d.root.Remove(dir); err != nil {
			break // not empty: the folder stays, and those above it
		}
	}
	return nil
}

// removeTemps removes the temporary files a killed sync left in DIR, and
// the folders they leave empty.
func (d *mirrorDir) removeTemps() error {
	return d.walk(func(rel string, info fs.FileInfo) error {
		if !strings.HasPrefix(path.Base(rel), tempPrefix) {
			return nil
		}
		return d.remove(rel)
	})
}

// walk calls fn with every entry of DIR but the folders themselves, in
// walk order (layout.ComparePaths), without
// following links. It holds one folder's names at a time per level.
func (d *mirrorDir) walk(fn func(rel string, info fs.FileInfo) error) error {
	return d.walkFolder(".", fn)
}

func (d *mirrorDir) walkFolder(dir string, fn func(rel string, info fs.FileInfo) error) error {
	f, err := d.root.Open(dir)
	if err != nil {
		return err
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return err
	}
	key := func(e fs.DirEntry) string {
		if e.IsDir() {
			return e.Name() + "/"
		}
		return e.Name()
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return comparePaths(key(a), key(b)) })
	for _, e := range entries {
		rel := path.Join(dir, e.Name())
		if e.IsDir() {
			if err := d.walkFolder(rel, fn); err != nil {
				return err
			}
			continue
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		if err := fn(rel, info); err != nil {
			return err
		}
	}
	return nil
}

// stampOf returns the stamp of a file's stat.
func stampOf(info fs.FileInfo) stamp {
	st := stamp{size: info.Size(), mtime: info.ModTime().UnixNano()}
	if sys, ok := info.Sys().(*syscall.Stat_t); ok {
		st.ino = sys.Ino
		st.ctime = sys.Ctim.Nano()
	}
	return st
}
