package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

var versionCommand = &command{
	name:     "version",
	summary:  "print rsgen's version (also: rsgen --version)",
	synopsis: "",
	about:    "Prints the version of rsgen and of the Go toolchain that built it.",
	flags:    noFlags("version"),
	run: func(_ context.Context, cio cliIO, _ any, _ []string) int {
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
