//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// terminal reports whether f is open on a terminal: whether it has a
// terminal's settings.
func terminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	return err == nil
}
