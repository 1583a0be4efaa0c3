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
	temp    *os.Root        // the temporary folder, once made
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

func (d *mirrorDir) Close() error {
	d.closeTemp()
	return d.root.Close()
}

func (d *mirrorDir) closeTemp() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.temp != nil {
		d.temp.Close()
		d.temp = nil
	}
}

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
	d.mu.Lock()
	if len(d.folders) >= maxKnownFolders {
		clear(d.folders)
	}
	d.folders[rel] = true
	d.mu.Unlock()
	return nil
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

// tempFile is a file being written in DIR's temporary folder.
type tempFile struct {
	*os.File
	name string // in the temporary folder
}

// createTemp creates a new file in DIR's temporary folder, which it
// opens once, as a root of its own, so that a file costs one openat.
func (d *mirrorDir) createTemp() (*tempFile, error) {
	d.mu.Lock()
	tmp := d.temp
	d.mu.Unlock()
	if tmp == nil {
		if err := d.folder(tempDir); err != nil {
			return nil, err
		}
		r, err := d.root.OpenRoot(tempDir)
		if err != nil {
			return nil, err
		}
		d.mu.Lock()
		if d.temp == nil {
			d.temp = r
		} else {
			r.Close()
		}
		tmp = d.temp
		d.mu.Unlock()
	}
	var b [8]byte
	rand.Read(b[:])
	name := hex.EncodeToString(b[:])
	f, err := tmp.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, err
	}
	return &tempFile{File: f, name: name}, nil
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
	d.root.Remove(tempDir + "/" + t.name)
}

// place renames the temporary file t to rel, closes it and returns its
// stamp, taken after the rename (which changes its ctime). A link at rel
// is replaced, never followed; a folder there is an error.
func (d *mirrorDir) place(t *tempFile, rel string) (stamp, error) {
	err := d.folder(path.Dir(rel))
	if err == nil {
		err = d.root.Rename(tempDir+"/"+t.name, rel)
		if errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
			err = &fs.PathError{Op: "write", Path: d.join(rel), Err: errors.New("a folder is there (another resource's path goes through it)")}
		}
	}
	if err != nil {
		d.discard(t)
		return stamp{}, err
	}
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
// creates nothing.
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

// removeTemp removes DIR's temporary folder and all it holds: the files
// of fetches that a kill or a failure cut short.
func (d *mirrorDir) removeTemp() error {
	d.closeTemp()
	d.forget(tempDir)
	if info, err := d.root.Lstat(tempDir); err != nil || info.Mode()&fs.ModeSymlink != 0 {
		if err == nil {
			return d.root.Remove(tempDir)
		}
		return nil
	}
	return d.root.RemoveAll(tempDir)
}

// walk calls fn with every entry of DIR but its temporary folder and the
// folders themselves, in walk order (layout.ComparePaths), without
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
		if rel == tempDir {
			continue
		}
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
