package sysfile

import (
	"io/fs"
	"syscall"
)

// Ctime returns the status change time of a file's stat, in nanoseconds
// since the epoch, or 0.
func Ctime(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}
