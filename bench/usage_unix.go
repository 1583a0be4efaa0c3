//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
	"time"
)

// processCPU returns the user and system time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS returns the peak resident set of an ended child, in bytes:
// Linux counts ru_maxrss in kibibytes, macOS in bytes.
func peakRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	switch {
	case !ok:
		return 0
	case runtime.GOOS == "darwin":
		return ru.Maxrss
	}
	return ru.Maxrss * 1024
}
