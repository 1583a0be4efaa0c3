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
// A build's heap is mostly a few long-lived arrays of file records, which
// the default (100: the heap may double before a collection) lets grow to
// twice their size: at 50, the peak RSS of a build of 1,000,000 files fell
// by a third (971 to 652 MiB cold, 503 to 393 MiB on a rebuild) for no
// measurable time (go run ./bench, 2026-11-24); at 25, by a sixth more
// (420 to 353 MB cold, 316 to 286 MB unchanged) for 2.3 s more CPU in a
// 28 s cold build and none measurable in a 7 s rebuild. At 15 the rebuild
// took 2.5 s more CPU for 25 MB less (2026-11-26, by hand on bench tree b).
const gcPercent = 25

// tuneGC sets the garbage collector's target to gcPercent, unless the
// user set GOGC.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
