package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary run as the rsgen command inside scripts.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"rsgen": func() { os.Exit(Main()) },
	})
}

// TestScripts runs the end-to-end CLI scripts in testscripts/. Set
// RSGEN_UPDATE_SCRIPTS=1 to rewrite their expected output in place.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "../../testscripts",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("RSGEN_UPDATE_SCRIPTS") != "",
		Cmds:                scriptCmds,
		Setup: func(env *testscript.Env) error {
			// Builds in scripts must not depend on the machine's clock.
			env.Setenv("SOURCE_DATE_EPOCH", "1767225600") // 2026-01-01T00:00:00Z
			return nil
		},
	})
}
