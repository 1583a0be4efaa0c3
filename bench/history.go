package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The history step (--history N) measures what issue 16 asks of a build's
// memory beside the collection's size: that it does not grow with the
// number of past change events, archives and kept versions. It builds the
// tree afresh with every capability whose output accumulates over builds,
// then N times more with 1% of the files changed before each, an hour
// apart, and reports how the peak RSS grows with the events published
// before each build.
const historyConfig = `# written by go run ./bench --history
source = %q
out = %q
state = %q
base_url = %q

[changelist]
rotate = "6h"

[dumps]
change_dump = true

[archives]
change_lists = true
change_dumps = true

[[set]]
name = "all"
path = ""
keep_versions = true
`

// historyResult is the history step of one tree.
type historyResult struct {
	// Builds are the cold build, then the N rebuilds.
	Builds []historyBuild `json:"builds"`
	// BytesPerPastEvent is the growth of the peak RSS from the first
	// rebuild to the last over the events published between them (0 with
	// fewer than two rebuilds).
	BytesPerPastEvent float64 `json:"rss_bytes_per_past_event"`
}

// historyBuild is one build of the history step.
type historyBuild struct {
	Seconds float64 `json:"seconds"`
	cpuUse
	PeakRSS int64 `json:"peak_rss_bytes"`
	Events  int   `json:"events"` // -1: rsgen did not say
}

// newHistoryBuild returns the measurements of one build of r.
func newHistoryBuild(r childRun) historyBuild {
	_, events := buildCounts(r.Stdout)
	wall := r.Wall.Seconds()
	return historyBuild{Seconds: wall, cpuUse: newCPUUse(r.User.Seconds(), r.Sys.Seconds(), wall), PeakRSS: r.PeakRSS, Events: events}
}

// measureHistory runs the history step on t with n rebuilds, whose edits
// are those of rounds firstRound ... firstRound+n-1 (restore undoes them),
// with GOMAXPROCS=procs, and removes its output, state and configuration
// afterwards.
func measureHistory(t *tree, rsgen *launcher, procs, firstRound, n int, logf func(string, ...any)) (*historyResult, error) {
	out, state := filepath.Join(t.root, "history-out"), filepath.Join(t.root, "history-state")
	cfg := filepath.Join(t.root, "history.toml")
	defer func() {
		for _, p := range []string{out, state, cfg} {
			os.RemoveAll(p)
		}
	}()
	for _, d := range []string{out, state} {
		if err := os.RemoveAll(d); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(cfg, fmt.Appendf(nil, historyConfig, t.src, out, state, benchBaseURL), 0o644); err != nil {
		return nil, err
	}
	h := &historyResult{}
	for k := range n + 1 {
		if k > 0 {
			if err := t.apply(changeFiles, firstRound+k-1); err != nil {
				return nil, err
			}
		}
		logf("tree %s: history build %d of %d", t.spec.Name, k+1, n+1)
		r, err := rsgen.run(procs, "build", "--config", cfg, "--now", buildEpoch.Add(time.Duration(k)*time.Hour).Format(time.RFC3339))
		if err != nil {
			return nil, fmt.Errorf("history build %d: %w", k+1, err)
		}
		h.Builds = append(h.Builds, newHistoryBuild(r))
	}
	h.derive()
	return h, nil
}

// derive computes BytesPerPastEvent.
func (h *historyResult) derive() {
	if len(h.Builds) < 3 {
		return
	}
	first, last := h.Builds[1], h.Builds[len(h.Builds)-1]
	past := 0
	for _, b := range h.Builds[1 : len(h.Builds)-1] {
		past += max(b.Events, 0)
	}
	if past > 0 {
		h.BytesPerPastEvent = float64(last.PeakRSS-first.PeakRSS) / float64(past)
	}
}
