package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSyncTiny runs the sync benchmark on the tiny tree end to end, so
// that it cannot rot: it asserts only that the harness completes, mirrors
// every file and writes its report, never a time.
func TestSyncTiny(t *testing.T) {
	if testing.Short() || os.Getenv("RSGEN_STRESS") != "1" {
		t.Skip("builds rsgen and mirrors 2,000 files: runs with RSGEN_STRESS=1, as CI does, to keep the default tests short")
	}
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "sync.json")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--sync", "--tiny", "--sync-jobs", "4", "--dir", dir, "--json", jsonPath}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "rsgen sync, baseline") {
		t.Errorf("no table:\n%s", stdout.String())
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var results []syncResult
	if err := json.Unmarshal(data, &results); err != nil || len(results) != 1 {
		t.Fatalf("report %s: %v", data, err)
	}
	r := results[0]
	if r.SyncBaseline.Files != treeTiny.Files || r.FloorChanged.Files != treeTiny.Files/100 || r.SyncBaseline.PeakRSS == 0 {
		t.Errorf("report: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "tree-tiny", "sync")); !os.IsNotExist(err) {
		t.Errorf("the sync folder is left: %v", err)
	}
}
