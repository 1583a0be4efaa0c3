package destination

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The state folder (Options.State) holds, beside the inventory:
//
//	sync.json   what DIR is a mirror of, and up to when (syncState)
//	lock        held while a sync runs (snapshot.AcquireLock)
//	documents/  the documents last fetched, with their validators
//	packages    the dump packages placed by a sync in progress
//	work/       sorted runs and packages of the sync in progress
const (
	stateFile    = "sync.json"
	documentsDir = "documents"
	workDir      = "work"
)

// stateVersion is the version of the state's format.
const stateVersion = 1

// syncState is what sync.json holds.
type syncState struct {
	Version int `json:"version"`
	// Dir is the folder mirrored, so that a state is never used for
	// another.
	Dir string `json:"dir"`
	// CapabilityList is the set's Capability List, and Base the base URL
	// its resources are mirrored from.
	CapabilityList string `json:"capability_list"`
	Base           string `json:"base"`
	// SyncedUntil is the time up to which DIR holds the Source's changes;
	// zero until a baseline completes, and after one from a Resource List
	// that gives no time.
	SyncedUntil time.Time `json:"synced_until,omitzero"`
	// Baseline is set once a baseline has completed.
	Baseline bool `json:"baseline"`
}

// loadState reads the state file; a state folder without one is a first
// sync.
func loadState(dir string) (*syncState, error) {
	data, err := os.ReadFile(filepath.Join(dir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return &syncState{Version: stateVersion}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the state: %w", err)
	}
	var st syncState
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("read the state %s: %w", filepath.Join(dir, stateFile), err)
	}
	if st.Version != stateVersion {
		return nil, fmt.Errorf("the state %s is of version %d; this rsgen reads version %d", filepath.Join(dir, stateFile), st.Version, stateVersion)
	}
	return &st, nil
}

// save writes the state file in one rename.
func (st *syncState) save(dir string) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, stateFile), append(data, '\n')); err != nil {
		return fmt.Errorf("write the state: %w", err)
	}
	return nil
}

// belongs checks that the state is that of a sync of src into dir.
func (st *syncState) belongs(stateDir, dir string, src *source) error {
	switch {
	case st.Dir != "" && st.Dir != dir:
		return &UsageError{Msg: fmt.Sprintf("the state %s is that of a sync into %s, not %s: give each folder its own --state", stateDir, st.Dir, dir)}
	case st.CapabilityList != "" && st.CapabilityList != src.capList:
		return &UsageError{Msg: fmt.Sprintf("%s is a mirror of %s, not of %s: sync another Source into another folder, or remove %s and the folder's files to start over",
			dir, st.CapabilityList, src.capList, stateDir)}
	}
	return nil
}
