//go:build !unix && !windows

package main

import "os"

// Without getrusage or its like (Plan 9, WebAssembly) the floors report no
// CPU time (their cores busy read 0) and a child's peak RSS reads 0. A
// child's user and system times come from os.ProcessState everywhere (see
// runChild).

// processCPU returns no time: there is no getrusage here.
func processCPU() cpuTimes { return cpuTimes{} }

// peakRSS returns 0: the child's rusage has no peak RSS here.
func peakRSS(*os.ProcessState) int64 { return 0 }
