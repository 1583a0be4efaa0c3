//go:build unix

package sysfile

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// TryLock takes an exclusive flock on f without waiting; it returns
// ErrHeld when another open file holds one. Closing f releases it.
func TryLock(f *os.File) error {
	err := ignoringEINTR(func() error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) })
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrHeld
	}
	return err
}

// RemoveLocked removes the lock file at path, whose lock f holds, and
// closes f. Removing before unlocking means that a waiting process that
// opened the old file gets its lock only once the file is gone, so that it
// can notice and start again on a fresh one.
func RemoveLocked(f *os.File, path string) {
	os.Remove(path)
	f.Close()
}

// Inode returns the inode number of a file's stat, or 0.
func Inode(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// Device returns the device number of a file's stat, or 0.
func Device(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev)
	}
	return 0
}

// SameDevice reports whether the files a and b lie on one file system.
func SameDevice(a, b string) bool {
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	if errA != nil || errB != nil {
		return false
	}
	sa, okA := ia.Sys().(*syscall.Stat_t)
	sb, okB := ib.Sys().(*syscall.Stat_t)
	return okA && okB && sa.Dev == sb.Dev
}

// OpenShared opens the file path for reading; on Unix, any open file may
// be renamed over or removed.
func OpenShared(path string) (*os.File, error) { return os.Open(path) }

// Rename is os.Rename.
func Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// SyncDir makes the entries of the folder dir durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Dup returns a second open file for f's open file description.
func Dup(f *os.File) (*os.File, error) {
	fd, err := dupCloexec(int(f.Fd()))
	if err != nil {
		return nil, &os.PathError{Op: "dup", Path: f.Name(), Err: err}
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}

func ignoringEINTR(call func() error) error {
	for {
		if err := call(); err != syscall.EINTR {
			return err
		}
	}
}
