package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

var versionCommand = &command{
	summary: "print rsgen's version",
	usage:   "usage: rsgen version\n\nPrints the version of rsgen and of the Go toolchain that built it.",
	run: func(_ context.Context, cio cliIO, args []string) int {
		if len(args) > 0 {
			fmt.Fprintln(cio.stderr, "usage: rsgen version")
			return exitUsage
		}
		fmt.Fprintf(cio.stdout, "rsgen %s (%s)\n", version(), runtime.Version())
		return exitOK
	},
}

// version is the module version when rsgen was installed with go install,
// else "devel".
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}
