package destination

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/rsgen/rsgen/internal/sysfile"
)

// ErrSymlink is returned for a path of DIR that goes through a symbolic
// link: a sync writes, reads and removes nothing through one, so that a
// link in DIR can never lead it elsewhere.
var ErrSymlink = errors.New("a symbolic link is in the way (rsgen sync follows no link in DIR)")

// The other type of a path stands in the way of a resource: a Source that
// changed the path between file and folder left it, until the changes
// delete it.
var (
	errFolderThere = errors.New("a folder is there (another resource's path goes through it)")
	errFileThere   = errors.New("a file is there, where a folder is needed")
)

// mirrorDir is DIR, opened as an os.Root so that no path can leave it,
// and checked component by component so that no path goes through a
// symbolic link inside it either.
type mirrorDir struct {
	path string
	root *os.Root

	fd      int  // DIR, for openat2 (Linux); -1 elsewhere
	unnamed bool // files are written unnamed (O_TMPFILE) and linked into place

	noOpenat2 atomic.Bool // the kernel has no openat2, or the system no kernel with one

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
	fd, err := openDirFD(dir)
	if err != nil {
		root.Close()
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	d := &mirrorDir{path: dir, root: root, fd: fd, folders: map[string]bool{}}
	d.noOpenat2.Store(fd < 0)
	d.unnamed = create && d.canLinkUnnamed()
	return d, nil
}

func (d *mirrorDir) Close() error {
	closeDirFD(d.fd)
	return d.root.Close()
}

// openFolder opens the folder rel for reading, through no link.
func (d *mirrorDir) openFolder(rel string) (*os.File, error) {
	if f, err, ok := d.openFolderBeneath(rel); ok {
		return f, err
	}
	return d.root.OpenFile(rel, os.O_RDONLY|openDirectory|openNoFollow, 0)
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
		err = errFileThere
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

// stat returns the stamp of the regular file rel; false when there is
// none (not there, behind or as a link, or something else than a regular
// file).
func (d *mirrorDir) stat(rel string) (stamp, bool, error) {
	if st, present, err, ok := d.statBeneath(rel); ok {
		return st, present, err
	}
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
	if f, err, ok := d.openFileBeneath(rel); ok {
		return f, err
	}
	if err := d.realParents(rel); err != nil {
		return nil, err
	}
	return d.root.OpenFile(rel, os.O_RDONLY|openNoFollow, 0)
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
	return stamp{size: info.Size(), mtime: info.ModTime().UnixNano(), ctime: sysfile.Ctime(info), ino: sysfile.Inode(info)}
}
