//go:build linux && !rsgen_portable

package destination

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// tempFile is a file being written in the folder of its place.
type tempFile struct {
	*os.File
	dir  *os.File // its folder
	name string   // its temporary name, "" while it has none
}

// createTemp creates the file to write rel with, making rel's folder
// first: unnamed, unless it is to replace a file there. The folder is
// opened through no link (openFolder), and the file created in it with
// openat, so that it costs no walk from DIR.
func (d *mirrorDir) createTemp(rel string, replace bool) (*tempFile, error) {
	parent := path.Dir(rel)
	if err := d.folder(parent); err != nil {
		return nil, err
	}
	dir, err := d.openFolder(parent)
	if err != nil {
		return nil, err
	}
	t := &tempFile{dir: dir}
	var fd int
	if d.unnamed && !replace {
		fd, err = unix.Openat(int(dir.Fd()), ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	} else {
		t.name = tempName()
		fd, err = unix.Openat(int(dir.Fd()), t.name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	}
	if err != nil {
		dir.Close()
		return nil, &fs.PathError{Op: "create", Path: d.join(rel), Err: err}
	}
	t.File = os.NewFile(uintptr(fd), d.join(rel))
	return t, nil
}

// link gives the file the name name in its folder.
func (t *tempFile) link(name string) error {
	return unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(t.Fd())), int(t.dir.Fd()), name, unix.AT_SYMLINK_FOLLOW)
}

// setMtime sets the file's modification time.
func (t *tempFile) setMtime(mtime time.Time) error {
	ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, unix.NsecToTimespec(mtime.UnixNano())}
	if err := unix.UtimesNanoAt(int(t.Fd()), "", ts, unix.AT_EMPTY_PATH); err != nil {
		return &fs.PathError{Op: "utimensat", Path: t.Name(), Err: err}
	}
	return nil
}

// discard closes the file and removes its temporary name, if it has one.
func (d *mirrorDir) discard(t *tempFile) {
	t.Close()
	if t.name != "" {
		unix.Unlinkat(int(t.dir.Fd()), t.name, 0)
	}
	t.dir.Close()
}

// place puts the file t at rel, closes it and returns its stamp, taken
// after (a rename changes the ctime). A link at rel is replaced, never
// followed; a folder there is an error.
func (d *mirrorDir) place(t *tempFile, rel string) (stamp, error) {
	base := path.Base(rel)
	var err error
	if t.name == "" {
		err = t.link(base) // a new file lands in one step
		if errors.Is(err, syscall.EEXIST) {
			t.name = tempName()
			err = t.link(t.name)
		} else if err == nil {
			return d.landed(t)
		}
	}
	if err == nil {
		err = unix.Renameat(int(t.dir.Fd()), t.name, int(t.dir.Fd()), base)
	}
	switch {
	case errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST):
		err = &fs.PathError{Op: "write", Path: d.join(rel), Err: errFolderThere}
	case err != nil:
		err = &fs.PathError{Op: "write", Path: d.join(rel), Err: err}
	}
	if err != nil {
		d.discard(t)
		return stamp{}, err
	}
	return d.landed(t)
}

// landed closes a file in its place and returns its stamp.
func (d *mirrorDir) landed(t *tempFile) (stamp, error) {
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

// canLinkUnnamed reports whether DIR's file system creates unnamed files
// and /proc links them: it tries, at DIR's top.
func (d *mirrorDir) canLinkUnnamed() bool {
	dir, err := d.root.OpenFile(".", os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return false
	}
	t := &tempFile{dir: dir}
	fd, err := unix.Openat(int(dir.Fd()), ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	if err != nil {
		dir.Close()
		return false
	}
	t.File = os.NewFile(uintptr(fd), "probe")
	t.name = tempName()
	ok := t.link(t.name) == nil
	d.discard(t)
	return ok
}
