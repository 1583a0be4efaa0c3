//go:build !unix

package main

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Without getrusage (Windows, Plan 9) the harness measures less: the
// floors report no CPU time (their cores busy read 0), a child's peak RSS
// reads 0, and a rewritten output file is told by its mtime and size
// alone. A child's user and system times come from os.ProcessState
// everywhere (see runChild).

// processCPU returns no time: there is no getrusage here.
func processCPU() cpuTimes { return cpuTimes{} }

// peakRSS returns 0: the child's rusage has no peak RSS here.
func peakRSS(*os.ProcessState) int64 { return 0 }

// inode returns 0: a stat has no inode number here.
func inode(fs.FileInfo) uint64 { return 0 }

// sameFileSystem reports whether the folders a and b are on one volume.
func sameFileSystem(a, b string) (bool, error) {
	for _, p := range []string{a, b} {
		if _, err := os.Stat(p); err != nil {
			return false, err
		}
	}
	absA, err := filepath.Abs(a)
	if err != nil {
		return false, err
	}
	absB, err := filepath.Abs(b)
	if err != nil {
		return false, err
	}
	return filepath.VolumeName(absA) == filepath.VolumeName(absB), nil
}
