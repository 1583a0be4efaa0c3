package snapshot

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRunRecordGivesTheStateItsTimes: a run record gives the state it
// vouches for the times of the build that left it as it was; Save removes
// it, and one that names another state file (a build killed between the
// save and the removal), one older than the state, or a damaged one, is
// ignored.
func TestRunRecordGivesTheStateItsTimes(t *testing.T) {
	dir := t.TempDir()
	st := sampleState()
	if err := Save(dir, st); err != nil {
		t.Fatal(err)
	}
	load := func() *State {
		t.Helper()
		got, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { got.Close() })
		return got
	}
	loaded := load()
	later, scanned := st.LastBuild+3600, st.ScanStart+3600e9
	if err := SaveRun(dir, loaded, later, scanned); err != nil {
		t.Fatal(err)
	}
	if got := load(); got.LastBuild != later || got.ScanStart != scanned || got.Files.Len()+got.NumFiles() == 0 {
		t.Errorf("with the run record: last build %d, scan start %d; want %d, %d", got.LastBuild, got.ScanStart, later, scanned)
	}
	record, err := os.ReadFile(filepath.Join(dir, RunFile))
	if err != nil {
		t.Fatal(err)
	}

	// Saved again (with another time), the state has its own times, and
	// the record is gone; put back, it names the previous file.
	st.LastBuild++
	if err := Save(dir, st); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, RunFile)); !os.IsNotExist(err) {
		t.Errorf("Save left the run record: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, RunFile), record, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := load(); got.LastBuild != st.LastBuild || got.ScanStart != st.ScanStart {
		t.Errorf("a run record of another state file gave the state last build %d, scan start %d", got.LastBuild, got.ScanStart)
	}

	// A record older than the state, and a damaged one, are ignored.
	loaded = load()
	if err := SaveRun(dir, loaded, st.LastBuild-1, scanned); err != nil {
		t.Fatal(err)
	}
	if got := load(); got.LastBuild != st.LastBuild {
		t.Errorf("an older run record gave the state last build %d", got.LastBuild)
	}
	if err := SaveRun(dir, loaded, later, scanned); err != nil {
		t.Fatal(err)
	}
	damaged, _ := os.ReadFile(filepath.Join(dir, RunFile))
	damaged[len(runMagic)+2] ^= 1
	if err := os.WriteFile(filepath.Join(dir, RunFile), damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := load(); got.LastBuild != st.LastBuild {
		t.Errorf("a damaged run record gave the state last build %d", got.LastBuild)
	}
	if err := SaveRun(dir, sampleState(), later, scanned); err == nil {
		t.Error("a run record of a state made in memory was saved")
	}
}
