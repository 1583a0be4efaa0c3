package main

import (
	"context"
	"fmt"
)

// checkCommand is being written in parallel (issue 3); until then it says so.
var checkCommand = &command{
	summary: "check a ResourceSync site or document for conformance",
	usage:   "usage: rsgen check PATH|URL [flags]",
	run: func(_ context.Context, cio cliIO, _ []string) int {
		fmt.Fprintln(cio.stderr, "rsgen check: not available in this build")
		return exitFailure
	},
}
