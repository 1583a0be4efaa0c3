package main

import "os"

// stress reports whether the long versions of the heavy tests run
// (RSGEN_STRESS=1, which CI sets): more kills, every injection point. By
// default they run in a short form that still exercises every path.
func stress() bool { return os.Getenv("RSGEN_STRESS") == "1" }
