//go:build !linux && !darwin && !freebsd && !netbsd

package sysfile

import "io/fs"

// Ctime returns 0: this system's stat gives no status change time that
// rsgen reads.
func Ctime(fs.FileInfo) int64 { return 0 }
