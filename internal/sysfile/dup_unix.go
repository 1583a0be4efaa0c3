//go:build unix

package sysfile

import "golang.org/x/sys/unix"

// dupCloexec duplicates fd, closed on exec as every descriptor Go opens.
func dupCloexec(fd int) (int, error) { return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0) }
