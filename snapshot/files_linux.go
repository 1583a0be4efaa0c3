package snapshot

import (
	"os"

	"golang.org/x/sys/unix"
)

// unnamedFile makes a file with no name in the folder dir, with
// O_TMPFILE, which some file systems lack.
func unnamedFile(dir string) (*os.File, error) {
	return os.OpenFile(dir, os.O_RDWR|unix.O_TMPFILE, 0o600)
}
