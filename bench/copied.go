package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rsgen/rsgen/internal/sysfile"
)

// The copied step (--copied-out DIR) builds each tree into a folder on
// another file system than the tree's, where rsgen copies the resources
// instead of hard-linking them, as it must when the source and the output
// are on two disks or volumes: a cold build, then a --verify rebuild, which
// reads every file and compares it with its copy. The usual steps all link;
// until 2026-11-27 a cold build that copied held a pending copy per
// resource (587 MB for tree b, where linking held 38 MiB), which no step
// measured.

// copiedResult is the copied step of one tree.
type copiedResult struct {
	Cold   historyBuild `json:"cold"`
	Verify historyBuild `json:"verify"`
}

// checkCopiedOut reports why dir cannot take the copied step's outputs for
// trees under work: it must be a folder on another file system, or rsgen
// would link, not copy. The harness asks before it measures anything.
func checkCopiedOut(dir, work string) error {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	same, err := sameFileSystem(dir, work)
	if err == nil && same {
		err = fmt.Errorf("%s is on the file system of %s: rsgen would link, not copy", dir, work)
	}
	return err
}

// measureCopied runs the copied step of t with the output in a new folder
// of dir (see checkCopiedOut), with GOMAXPROCS=procs, and removes its
// output and state afterwards.
func measureCopied(t *tree, rsgen *launcher, procs int, dir string, logf func(string, ...any)) (*copiedResult, error) {
	out, err := os.MkdirTemp(dir, "rsgen-bench-copied-")
	if err != nil {
		return nil, err
	}
	state := filepath.Join(t.root, "copied-state")
	defer func() {
		os.RemoveAll(out)
		os.RemoveAll(state)
	}()
	if err := os.RemoveAll(state); err != nil {
		return nil, err
	}
	c := &copiedResult{}
	for k, step := range []struct {
		name  string
		extra []string
		into  *historyBuild
	}{{"cold", nil, &c.Cold}, {"--verify", []string{"--verify"}, &c.Verify}} {
		logf("tree %s: copied, %s build", t.spec.Name, step.name)
		args := []string{"build", "--source", t.src, "--out", out, "--state", state, "--base-url", benchBaseURL,
			"--now", buildEpoch.Add(time.Duration(k) * time.Hour).Format(time.RFC3339)}
		r, err := rsgen.run(procs, append(args, step.extra...)...)
		if err != nil {
			return nil, fmt.Errorf("copied %s build: %w", step.name, err)
		}
		*step.into = newHistoryBuild(r)
	}
	return c, nil
}

// sameFileSystem reports whether the folders a and b are on one file
// system.
func sameFileSystem(a, b string) (bool, error) {
	for _, dir := range []string{a, b} {
		if _, err := os.Stat(dir); err != nil {
			return false, err
		}
	}
	return sysfile.SameDevice(a, b), nil
}
