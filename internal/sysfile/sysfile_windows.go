package sysfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/windows"
)

// lockOffset is where the byte TryLock locks lies: far past any content,
// as Windows locks are mandatory and a lock on the content would keep
// other processes from reading who holds it.
const lockOffset = 1 << 62

// TryLock locks f exclusively with LockFileEx, without waiting; it
// returns ErrHeld when another handle holds the lock. Closing f releases
// it.
func TryLock(f *os.File) error {
	ol := windows.Overlapped{Offset: uint32(lockOffset & 0xffffffff), OffsetHigh: uint32(lockOffset >> 32)}
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return ErrHeld
	}
	return err
}

// RemoveLocked closes f, which releases its lock, then removes the lock
// file at path. Windows cannot remove a file that a waiting process holds
// open: then the file stays, and that process holds the lock on it.
func RemoveLocked(f *os.File, path string) {
	f.Close()
	os.Remove(path)
}

// Inode returns 0: Windows' stat holds no file index.
func Inode(info fs.FileInfo) uint64 { return 0 }

// Device returns 0: Windows' stat holds no volume.
func Device(info fs.FileInfo) uint64 { return 0 }

// SameDevice reports whether the files a and b lie on one volume.
func SameDevice(a, b string) bool {
	va, errA := volumeOf(a)
	vb, errB := volumeOf(b)
	return errA == nil && errB == nil && strings.EqualFold(va, vb)
}

// volumeOf returns the mount point of the volume of path.
func volumeOf(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	p, err := windows.UTF16PtrFromString(abs)
	if err != nil {
		return "", err
	}
	buf := make([]uint16, windows.MAX_LONG_PATH)
	if err := windows.GetVolumePathName(p, &buf[0], uint32(len(buf))); err != nil {
		return "", err
	}
	return windows.UTF16ToString(buf), nil
}

// OpenShared opens the file path for reading with FILE_SHARE_DELETE, so
// that it may be renamed over or removed while it is open.
func OpenShared(path string) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}

// renameTimeout bounds how long Rename retries a rename that a sharing
// violation refuses: a virus scanner or indexer holds a file it reads
// for moments, a server sending it for as long as the download lasts.
const renameTimeout = 2 * time.Second

// Rename replaces newpath with oldpath, which lies in the same folder,
// through os.Root's rename, which asks for POSIX semantics (Windows 10
// 1809 and later, on NTFS): a file that another handle holds open with
// FILE_SHARE_DELETE, as OpenShared, os.Root and rsgen serve open files,
// is replaced, and its readers read on. Where the file system cannot, or
// a handle holds the file without that share mode, it retries for a
// while, then fails.
func Rename(oldpath, newpath string) error {
	dir := filepath.Dir(newpath)
	if filepath.Dir(oldpath) != dir {
		return os.Rename(oldpath, newpath)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	defer root.Close()
	for wait, start := time.Millisecond, time.Now(); ; wait *= 2 {
		err = root.Rename(filepath.Base(oldpath), filepath.Base(newpath))
		if err == nil || !transient(err) || time.Since(start) > renameTimeout {
			break
		}
		time.Sleep(wait)
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}

// transient reports whether err is a refusal that another process's
// handle on the file causes.
func transient(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
}

// RenameNoReplace renames oldpath to newpath, failing where newpath
// exists: MoveFileEx without MOVEFILE_REPLACE_EXISTING.
func RenameNoReplace(oldpath, newpath string) error {
	from, err := windows.UTF16PtrFromString(oldpath)
	if err != nil {
		return err
	}
	to, err := windows.UTF16PtrFromString(newpath)
	if err != nil {
		return err
	}
	return windows.MoveFileEx(from, to, 0)
}

// SyncDir does nothing: Windows cannot sync a folder, and NTFS journals
// the changes of its entries.
func SyncDir(dir string) error { return nil }

// Dup returns a second handle on f's file.
func Dup(f *os.File) (*os.File, error) {
	proc := windows.CurrentProcess()
	var h windows.Handle
	if err := windows.DuplicateHandle(proc, windows.Handle(f.Fd()), proc, &h, 0, false, windows.DUPLICATE_SAME_ACCESS); err != nil {
		return nil, &os.PathError{Op: "dup", Path: f.Name(), Err: err}
	}
	return os.NewFile(uintptr(h), f.Name()), nil
}
