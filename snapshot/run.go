package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
)

// The run record
//
// A build that finds nothing to publish (the generator's fast path) leaves
// the state file as it is and records only that it ran, and when: its
// time and its scan's start, which Load gives the state as its LastBuild
// and ScanStart, as if the build had saved the state again with nothing
// else changed (a later build then stamps what it publishes, and trusts
// files, exactly as after such a save). The record names the state file
// it vouches for by its size and checksum: Save removes it, and one left
// beside another state file (a build killed between the two) or beside an
// altered one is ignored.
//
// A build that finds only the files' stats changed (Restated) publishes
// nothing either, but saves the state: the next build must trust those
// files by the stats they have now.

// runMagic starts a run record.
const runMagic = "rsgen-run\n"

// SaveRun records in dir that a build ran at lastBuild (Unix seconds),
// with a scan that started at scanStart (wall clock, nanoseconds), on the
// state st that Load read from dir, and left the state as it was.
func SaveRun(dir string, st *State, lastBuild, scanStart int64) error {
	if st.loadedFrom == (fileID{}) {
		return errors.New("snapshot: a run record of a state that was not loaded from its file")
	}
	b := []byte(runMagic)
	b = binary.AppendVarint(b, st.loadedFrom.size)
	b = binary.LittleEndian.AppendUint32(b, st.loadedFrom.crc)
	b = binary.AppendVarint(b, lastBuild)
	b = binary.AppendVarint(b, scanStart)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
	return writeAtomic(dir, RunFile, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// runRecord is what a run record holds.
type runRecord struct {
	of                   fileID
	lastBuild, scanStart int64
}

// applyRun gives st the times of the run record in dir when it vouches for
// the file st was loaded from, and is of a later build; a record that does
// not (or is damaged) is ignored.
func (st *State) applyRun(dir string) error {
	path := filepath.Join(dir, RunFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("snapshot: read %s: %w", path, err)
	}
	r, ok := decodeRun(data)
	if ok && r.of == st.loadedFrom && r.lastBuild >= st.LastBuild {
		st.LastBuild, st.ScanStart = r.lastBuild, r.scanStart
	}
	return nil
}

// decodeRun decodes a run record; false when it is not one, or damaged.
func decodeRun(data []byte) (runRecord, bool) {
	if len(data) < len(runMagic)+4 || string(data[:len(runMagic)]) != runMagic {
		return runRecord{}, false
	}
	body, tail := data[:len(data)-4], data[len(data)-4:]
	if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(tail) {
		return runRecord{}, false
	}
	b := body[len(runMagic):]
	var r runRecord
	var n int
	if r.of.size, n = binary.Varint(b); n <= 0 || len(b[n:]) < 4 {
		return runRecord{}, false
	}
	b = b[n:]
	r.of.crc, b = binary.LittleEndian.Uint32(b), b[4:]
	if r.lastBuild, n = binary.Varint(b); n <= 0 {
		return runRecord{}, false
	}
	b = b[n:]
	if r.scanStart, n = binary.Varint(b); n <= 0 || n != len(b) {
		return runRecord{}, false
	}
	return r, true
}

// Restated returns the state a build saves when its scan found the files'
// stats changed and nothing they publish (a file touched, or rewritten
// with the same bytes): st, which Load read, with the scan's records files
// and its times lastBuild (Unix seconds) and scanStart (wall clock,
// nanoseconds), so that the next build trusts those files by their new
// stats. It shares everything else with st. A state with kept versions is
// refused: their files are checked resource by resource by a full build.
func (st *State) Restated(files Records, lastBuild, scanStart int64) (*State, error) {
	if st.NumVersions() > 0 {
		return nil, errors.New("snapshot: a state with kept versions is saved by a full build")
	}
	return &State{LastBuild: lastBuild, ScanStart: scanStart, BaseURL: st.BaseURL, ResourceBaseURL: st.ResourceBaseURL,
		HTMLLink: st.HTMLLink, OutputDigest: st.OutputDigest, Files: files, Journals: st.Journals, Outputs: st.Outputs,
		OutputStats: st.OutputStats, SetChanged: st.SetChanged, Packages: st.Packages, Archived: st.Archived}, nil
}
