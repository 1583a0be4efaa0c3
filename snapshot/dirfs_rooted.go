package snapshot

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
)

// rooted resolves names with os.Root, which opens them one component at a
// time and follows a link only to a place inside the root, on every
// system: the Tree's resolver where the kernel cannot confine a lookup
// itself (every system but Linux 5.6 and later).
//
// os.Root follows links inside the root. When the Tree does not follow
// links, rooted refuses a link anywhere on the way: it opens the folders
// of a name one by one, each checked to be the folder an lstat of its name
// saw (not a link, and not swapped for one since), and checks the file it
// opens the same way.
type rooted struct {
	t       *Tree
	root    *os.Root
	folders openFolders[*os.Root]
}

// openRooted opens the Tree's folder as an os.Root.
func openRooted(t *Tree) (resolver, error) {
	root, err := os.OpenRoot(t.dir)
	if err != nil {
		return nil, err
	}
	r := &rooted{t: t, root: root}
	r.folders.open = r.openFolder
	r.folders.close = func(f *os.Root) {
		if f != root {
			f.Close()
		}
	}
	return r, nil
}

func (r *rooted) close() error {
	r.folders.closeAll()
	return r.root.Close()
}

// openFlags open a file for reading; O_NONBLOCK: a file replaced by a FIFO
// after the walk saw a regular file must not block the scan (regular
// files ignore the flag, and Windows has no FIFOs).
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK

func (r *rooted) open(name string) (fs.File, error) {
	if r.t.follow || name == "." {
		return r.openIn(r.root, name)
	}
	folder, err := r.folders.acquire(path.Dir(name))
	if err != nil {
		return nil, err
	}
	defer r.folders.release(folder)
	return r.openIn(folder.h, name)
}

// openIn opens the file name in the open folder, by its base name, checked
// to be no link (isNamed), or by its whole name beneath the Tree when
// links are followed (or name is the Tree's folder).
func (r *rooted) openIn(folder *os.Root, name string) (fs.File, error) {
	if r.t.follow || name == "." {
		f, err := r.root.OpenFile(name, openFlags, 0)
		if err != nil {
			return nil, r.pathError("open", name, err)
		}
		return rootedFile{f}, nil
	}
	base := path.Base(name)
	f, err := folder.OpenFile(base, openFlags, 0)
	if err == nil {
		err = isNamed(folder, base, f.Stat)
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		return nil, r.pathError("open", name, err)
	}
	return rootedFile{f}, nil
}

// openDir opens the folder dir for the files of one read job (see
// Tree.openDir), as openFolder opens it; when links are followed every
// name is resolved whole, beneath the root.
func (r *rooted) openDir(dir string) (dirFiles, error) {
	if r.t.follow {
		return rootedDir{r: r, folder: r.root}, nil
	}
	folder, err := r.openFolder(dir)
	if err != nil {
		return nil, err
	}
	return rootedDir{r: r, folder: folder}, nil
}

// rootedDir is a folder opened by openDir.
type rootedDir struct {
	r      *rooted
	folder *os.Root
}

func (d rootedDir) open(name string) (fs.File, error) { return d.r.openIn(d.folder, name) }

func (d rootedDir) close() {
	if d.folder != d.r.root {
		d.folder.Close()
	}
}

func (r *rooted) readDir(name string) ([]fs.DirEntry, error) {
	folder, err := r.folders.acquire(name)
	if err != nil {
		return nil, err
	}
	defer r.folders.release(folder)
	d, err := folder.h.Open(".")
	if err != nil {
		return nil, r.pathError("open", name, err)
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, r.pathError("readdirent", name, err)
	}
	return entries, nil
}

// list opens the folder name as openFolder does, not through the folders
// kept open for the reads (a folder is listed once), and lstats its
// entries beneath it.
func (r *rooted) list(name string, stat bool) ([]folderEntry, error) {
	folder, err := r.openFolder(name)
	if err != nil {
		return nil, err
	}
	if folder != r.root {
		defer folder.Close()
	}
	d, err := folder.Open(".")
	if err != nil {
		return nil, r.pathError("open", name, err)
	}
	defer d.Close()
	read, err := d.ReadDir(-1)
	if err != nil {
		return nil, r.pathError("readdirent", name, err)
	}
	entries := make([]folderEntry, 0, len(read))
	for _, de := range read {
		e := folderEntry{path: inFolder(name, de.Name()), mode: de.Type()}
		if stat && e.mode.IsRegular() {
			e.statted = true
			if info, err := folder.Lstat(de.Name()); err != nil {
				e.statErr = r.pathError("lstat", e.path, err)
			} else {
				e.stat = StatOf(info)
			}
		}
		entries = append(entries, e)
	}
	return entries, nil
}

func (r *rooted) lstat(dir, base string) (fs.FileInfo, error) {
	folder, err := r.folders.acquire(dir)
	if err != nil {
		return nil, err
	}
	defer r.folders.release(folder)
	info, err := folder.h.Lstat(base)
	if err != nil {
		return nil, r.pathError("lstat", path.Join(dir, base), err)
	}
	return info, nil
}

// openFolder opens the folder dir: through links inside the Tree when
// it follows them, else component by component, refusing any link. The
// Tree's folder is its root, which stays open.
func (r *rooted) openFolder(dir string) (*os.Root, error) {
	if dir == "." {
		return r.root, nil
	}
	if r.t.follow {
		f, err := r.root.OpenRoot(dir)
		if err != nil {
			return nil, r.pathError("open", dir, err)
		}
		return f, nil
	}
	parent := r.root
	for _, elem := range strings.Split(dir, "/") {
		f, err := parent.OpenRoot(elem)
		if err == nil {
			if err = isNamed(parent, elem, func() (fs.FileInfo, error) { return f.Stat(".") }); err != nil {
				f.Close()
			}
		}
		if parent != r.root {
			parent.Close()
		}
		if err != nil {
			return nil, r.pathError("open", dir, err)
		}
		parent = f
	}
	return parent, nil
}

// isNamed checks that the file opened as name in the folder parent, whose
// stat is opened, is what name is now: not a symbolic link (which os.Root
// would have followed), and the same file, not one swapped in since.
func isNamed(parent *os.Root, name string, opened func() (fs.FileInfo, error)) error {
	info, err := opened()
	if err != nil {
		return err
	}
	named, err := parent.Lstat(name)
	if err != nil {
		return err
	}
	if named.Mode()&fs.ModeSymlink != 0 || !os.SameFile(info, named) {
		return ErrOutside
	}
	return nil
}

// pathError names the file at fault by its path, and reports a name that
// os.Root refused for leaving it as ErrOutside.
func (r *rooted) pathError(op, name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // os.Root names the file relative to a folder
	}
	if err != nil && err.Error() == "path escapes from parent" { // os.Root's, not exported
		err = ErrOutside
	}
	return &fs.PathError{Op: op, Path: r.t.join(name), Err: err}
}

// rootedFile is a file opened through os.Root, which can be hard-linked.
type rootedFile struct{ *os.File }

// LinkTo hard-links the open file at dst, which must not exist.
func (f rootedFile) LinkTo(dst string) error { return linkOpenFile(f.File, dst) }
