//go:build !linux || rsgen_portable

package destination

import (
	"io/fs"
	"os"
	"path"
	"time"
)

// tempFile is a file being written under a temporary name beside its
// place.
type tempFile struct {
	*os.File
	root *os.Root
	rel  string // its temporary name, relative to DIR
}

// createTemp creates the file to write rel with, making rel's folder
// first, under a temporary name in that folder.
func (d *mirrorDir) createTemp(rel string, _ bool) (*tempFile, error) {
	parent := path.Dir(rel)
	if err := d.folder(parent); err != nil {
		return nil, err
	}
	name := path.Join(parent, tempName())
	f, err := d.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: d.join(rel), Err: err}
	}
	return &tempFile{File: f, root: d.root, rel: name}, nil
}

// setMtime sets the file's modification time, leaving its access time.
func (t *tempFile) setMtime(mtime time.Time) error {
	return t.root.Chtimes(t.rel, time.Time{}, mtime)
}

// discard closes the file and removes it.
func (d *mirrorDir) discard(t *tempFile) {
	t.Close()
	d.root.Remove(t.rel)
}

// place renames the file t to rel, closed first (Windows renames no file
// open without FILE_SHARE_DELETE), and returns its stamp. A link at rel
// is replaced, never followed; a folder there is an error.
func (d *mirrorDir) place(t *tempFile, rel string) (stamp, error) {
	err := t.Close()
	if info, lerr := d.root.Lstat(rel); err == nil && lerr == nil && info.IsDir() {
		err = errFolderThere
	}
	if err == nil {
		err = d.root.Rename(t.rel, rel)
	}
	if err != nil {
		d.root.Remove(t.rel)
		return stamp{}, &fs.PathError{Op: "write", Path: d.join(rel), Err: err}
	}
	info, err := d.root.Lstat(rel)
	if err != nil {
		return stamp{}, err
	}
	return stampOf(info), nil
}

// canLinkUnnamed is false: only Linux creates unnamed files.
func (d *mirrorDir) canLinkUnnamed() bool { return false }
