//go:build unix && !linux && !darwin

package sysfile

import "os"

// RenameNoReplace renames oldpath to newpath, failing where newpath
// exists: a hard link, which never replaces, then the removal of the old
// name. It fails on a file system without hard links.
func RenameNoReplace(oldpath, newpath string) error {
	if err := os.Link(oldpath, newpath); err != nil {
		return err
	}
	return os.Remove(oldpath)
}
