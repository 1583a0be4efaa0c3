// Package sysfile holds the few file operations whose system calls differ
// between the systems rsgen runs on (Linux, macOS, FreeBSD and Windows),
// each behind one function with a file per system, so that the packages
// that use them stay free of build tags:
//
//   - TryLock takes an exclusive lock on an open file without waiting: a
//     flock on Unix, LockFileEx on Windows. The system drops either when the
//     process dies, however it dies.
//   - Inode, Device and SameDevice identify a file and its file system where
//     the system says (Windows' stat does not: there they are 0, and callers
//     fall back on size and modification time).
//   - OpenShared opens a file for reading that others may rename over or
//     remove meanwhile, as Unix always allows and Windows allows only to a
//     handle opened with FILE_SHARE_DELETE.
//   - Rename replaces a file as os.Rename does, and on Windows also a file
//     that another handle holds open for reading (POSIX rename semantics),
//     retrying while a scanner or indexer holds it briefly.
//   - RenameNoReplace renames only where nothing is in the way.
//   - SyncDir makes a folder's entries durable (Windows has no such call;
//     NTFS journals them).
//   - Dup duplicates an open file.
//
// # Caveats
//
// Windows does not let a file open without FILE_SHARE_DELETE be renamed over
// or removed; the os package opens files so. A caller that keeps a file open
// while it may be replaced opens it with OpenShared.
package sysfile

import "errors"

// ErrHeld is returned by TryLock when another process holds the lock.
var ErrHeld = errors.New("held by another process")
