package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestWatchLatency measures, for rsgen watch, the time from a file write
// to the Change List on disk that publishes it: 100 edits, one at a time,
// in a source of RSGEN_LATENCY_FILES files (default 1,000), with the
// default debounce and with a short one. It reports and asserts nothing
// about time; set RSGEN_LATENCY=1 to run it:
//
//	RSGEN_LATENCY=1 go test -run TestWatchLatency -v ./cmd/rsgen/
func TestWatchLatency(t *testing.T) {
	if os.Getenv("RSGEN_LATENCY") == "" {
		t.Skip("set RSGEN_LATENCY=1 to measure the write-to-Change-List latency of rsgen watch")
	}
	files := 1000
	if s := os.Getenv("RSGEN_LATENCY_FILES"); s != "" {
		var err error
		if files, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, debounce := range []string{"300ms", "50ms"} {
		t.Run("debounce="+debounce, func(t *testing.T) {
			lat := measureLatency(t, files, debounce, 100)
			slices.Sort(lat)
			t.Logf("%d files, --debounce %s: %d edits, median %s, worst %s (best %s)",
				files, debounce, len(lat), lat[len(lat)/2].Round(time.Millisecond),
				lat[len(lat)-1].Round(time.Millisecond), lat[0].Round(time.Millisecond))
		})
	}
}

// measureLatency runs rsgen watch in-process over a fresh site and returns
// the latency of each of n edits.
func measureLatency(t *testing.T, files int, debounce string, n int) []time.Duration {
	dir := t.TempDir()
	src := filepath.Join(dir, "site")
	for i := range files {
		p := filepath.Join(src, fmt.Sprintf("d%02d", i%50), fmt.Sprintf("f%05d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	config := filepath.Join(dir, "rsgen.toml")
	if err := os.WriteFile(config, []byte("base_url = \"https://data.example.org/\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ready := filepath.Join(dir, "ready")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		cio := cliIO{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
		done <- run(ctx, cio, []string{"watch", "--config", config, "--debounce", debounce, "--ready-file", ready})
	}()
	defer func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("rsgen watch exited %d", code)
		}
	}()
	waitFor(t, func() bool { _, err := os.Stat(ready); return err == nil })
	changelists := filepath.Join(dir, "public", "resourcesync", "default", "changelists")
	var lat []time.Duration
	for i := range n {
		name := fmt.Sprintf("edit-%03d.txt", i)
		loc := []byte("/" + name + "</loc>")
		start := time.Now()
		if err := os.WriteFile(filepath.Join(src, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool {
			lists, _ := filepath.Glob(filepath.Join(changelists, "*.xml"))
			for _, l := range lists {
				if data, err := os.ReadFile(l); err == nil && bytes.Contains(data, loc) {
					return true
				}
			}
			return false
		})
		lat = append(lat, time.Since(start))
	}
	return lat
}

// waitFor polls cond every millisecond for at most a minute.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within a minute")
		}
	}
}
