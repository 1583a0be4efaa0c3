package sink

import "golang.org/x/sys/unix"

// cloneFile makes the file dst share the blocks of the file src (the
// FICLONE ioctl): a copy that takes no room until either side changes,
// on the file systems that clone (Btrfs, XFS, bcachefs, ZFS 2.2). It fails
// on the others, and across file systems.
func cloneFile(dst, src uintptr) error { return unix.IoctlFileClone(int(dst), int(src)) }
