package sink

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncOutput writes to disk everything written to the file system of
// the open folder d, and reports the write-back errors since d was opened
// (syncfs reports them since Linux 5.8).
func syncOutput(d *os.File) error { return unix.Syncfs(int(d.Fd())) }
