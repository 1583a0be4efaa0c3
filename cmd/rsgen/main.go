// Command rsgen generates a static ResourceSync site from a source tree.
// This package is the command line only: it parses flags, renders events and
// maps errors to exit codes; everything else lives in the packages it calls.
package main

import (
	"os"
	"runtime/debug"
)

func main() {
	tuneGC(os.Getenv)
	os.Exit(Main())
}

// gcPercent is the garbage collector's target unless GOGC says otherwise.
// Until a large scan spilled its records, a build's heap was mostly a few
// long-lived arrays of file records, which the default (100: the heap may
// double before a collection) let grow to twice their size, and rsgen ran
// at 25. Now a rebuild of 1,000,000 files holds about 12 MB, and at 25
// its collector ran every 3 MB allocated: 1.4 s of CPU in an 8.4 s
// rebuild. A cold build still holds the list of the resources it added
// (54 bytes each). Measured by hand on bench tree b (2026-11-26), rebuild
// and cold build: at 25, 8.4-8.5 s and 30 MB, 33.5 s and 118 MB; at 50,
// 7.7 s and 32 MB, 29.7 s and 119 MB; at 100, 7.5 s and 35 MB, 29.2 s and
// 163 MB, past the 150 MB the cold build is held to.
const gcPercent = 50

// tuneGC sets the garbage collector's target to gcPercent, unless the
// user set GOGC.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
