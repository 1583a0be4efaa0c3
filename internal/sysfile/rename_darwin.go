package sysfile

import "golang.org/x/sys/unix"

// RenameNoReplace renames oldpath to newpath, failing where newpath exists.
func RenameNoReplace(oldpath, newpath string) error {
	return unix.RenamexNp(oldpath, newpath, unix.RENAME_EXCL)
}
