package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// terminal reports whether f is open on a console: whether it has a
// console mode.
func terminal(f *os.File) bool {
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(f.Fd()), &mode) == nil
}
