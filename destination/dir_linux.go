//go:build linux && !rsgen_portable

package destination

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// On Linux, paths of DIR are opened and stat'ed with openat2 relative to
// DIR opened once (O_PATH): one system call that the kernel keeps below
// DIR and off links. Kernels before 5.6 have no openat2; there the
// portable way of dir.go takes over.

// openDirFD opens DIR for openat2.
func openDirFD(dir string) (int, error) {
	return unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

func closeDirFD(fd int) { unix.Close(fd) }

// openat2 opens rel below DIR in one system call, through no symbolic
// link (openat2 with RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS: the
// kernel's guarantee). ok is false on kernels without openat2 (before
// Linux 5.6), where the callers go through the root and check the folders
// themselves.
func (d *mirrorDir) openat2(rel string, flags int) (fd int, err error, ok bool) {
	if d.noOpenat2.Load() {
		return -1, nil, false
	}
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	for {
		fd, err = unix.Openat2(d.fd, rel, &how)
		if !errors.Is(err, syscall.EINTR) && !errors.Is(err, syscall.EAGAIN) {
			break
		}
	}
	switch {
	case errors.Is(err, syscall.ENOSYS):
		d.noOpenat2.Store(true)
		return -1, nil, false
	case errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EXDEV):
		err = ErrSymlink
	}
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: d.join(rel), Err: err}, true
	}
	return fd, nil, true
}

// openFolderBeneath opens the folder rel for reading with openat2.
func (d *mirrorDir) openFolderBeneath(rel string) (*os.File, error, bool) {
	return d.openBeneath(rel, unix.O_RDONLY|unix.O_DIRECTORY)
}

// openFileBeneath opens the file rel for reading with openat2.
func (d *mirrorDir) openFileBeneath(rel string) (*os.File, error, bool) {
	return d.openBeneath(rel, unix.O_RDONLY|unix.O_NOFOLLOW)
}

func (d *mirrorDir) openBeneath(rel string, flags int) (*os.File, error, bool) {
	fd, err, ok := d.openat2(rel, flags)
	if !ok || err != nil {
		return nil, err, ok
	}
	return os.NewFile(uintptr(fd), d.join(rel)), nil, true
}

// statBeneath is stat's way with openat2: the stamp of the regular file
// rel, opened O_PATH and fstat'ed.
func (d *mirrorDir) statBeneath(rel string) (st stamp, present bool, err error, ok bool) {
	fd, err, ok := d.openat2(rel, unix.O_PATH|unix.O_NOFOLLOW)
	if !ok {
		return stamp{}, false, nil, false
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, ErrSymlink) {
			return stamp{}, false, nil, true
		}
		return stamp{}, false, err, true
	}
	defer unix.Close(fd)
	var sys unix.Stat_t
	if err := unix.Fstat(fd, &sys); err != nil {
		return stamp{}, false, &fs.PathError{Op: "stat", Path: d.join(rel), Err: err}, true
	}
	if sys.Mode&unix.S_IFMT != unix.S_IFREG {
		return stamp{}, false, nil, true
	}
	return stamp{size: sys.Size, mtime: sys.Mtim.Nano(), ctime: sys.Ctim.Nano(), ino: sys.Ino}, true, nil, true
}
