// Command rsgen generates a static ResourceSync site from a source tree.
// This package is the command line only: it parses flags, renders events and
// maps errors to exit codes; everything else lives in the packages it calls.
//
// The garbage collector runs at Go's default (GOGC=100). Until a large
// scan spilled its records into the state folder, a build's heap was mostly
// its records, long-lived, which that default let grow to twice their
// size, and rsgen ran at 25; now a build of a million files holds about
// 12 MB, and at 25 its collector ran every 3 MB allocated (1.4 s of CPU in
// an 8.4 s rebuild). On bench tree b, by hand (2026-11-26), the rebuild
// took 8.4 s at 25, 8.3 s at 50, 7.7 s at 100; the cold build peaked at
// 43 MB at 50 and 54 MB at 100.
package main

import "os"

func main() { os.Exit(Main()) }
