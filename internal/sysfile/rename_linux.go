package sysfile

import "golang.org/x/sys/unix"

// RenameNoReplace renames oldpath to newpath, failing where newpath exists.
func RenameNoReplace(oldpath, newpath string) error {
	return unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
}
