package generator

import (
	"errors"
	"fmt"
	"os"

	"github.com/rsgen/rsgen/internal/chunked"
	"github.com/rsgen/rsgen/snapshot"
)

// What a build holds beyond a few blocks of it goes into unnamed files of
// the state folder: the scan's records, the lists of paths it keeps, the
// records it makes (recovered files, kept versions).

// spillBlockSize is the size of the blocks of the lists of paths a build
// spills (output.added, the sink's staged files), 64 KiB when 0; the tests
// make it small, so that every build spills them.
var spillBlockSize = 0

// spillDir returns the folder into which a large scan spills its records,
// and recovery the records it rebuilds: the state folder, unless there is
// none yet (rsgen plan before the first build), when the records stay in
// memory.
func spillDir(state string) string {
	if info, err := os.Stat(state); err != nil || !info.IsDir() {
		return ""
	}
	return state
}

// spillInto returns the function that makes the file a list of paths
// spills into: an unnamed file of the state folder (see spillDir).
func spillInto(state string) func() (chunked.File, error) {
	return func() (chunked.File, error) {
		dir := spillDir(state)
		if dir == "" {
			return nil, errors.New("no state folder yet")
		}
		return snapshot.UnnamedFile(dir)
	}
}

// pathList returns an empty list of paths that moves its full blocks into
// a file of the state folder (spillInto), so that a build holds a block of
// it however long it grows; without a state folder, it stays in memory.
func pathList(state string) chunked.Strings {
	return chunked.Strings{Spill: spillInto(state), BlockSize: spillBlockSize}
}

// newRecordFile returns where records the build makes go, what says
// which: an unnamed file of the state folder (see snapshot.RecordFile), so
// that a build holds a buffer of them, not all (at a million files, the
// recovered records in memory were 140 MB of a peak of 280 MB). It is only
// a saving: without a state folder to write into (rsgen plan before any
// build), or when the file cannot be made, the records stay in memory, and
// the build goes on as it would have.
func newRecordFile(s *site, what string) *snapshot.RecordFile {
	f, err := snapshot.NewRecordFile(spillDir(s.cfg.State))
	if err != nil {
		s.notify(Note{Kind: NoteInfo, Msg: fmt.Sprintf("%v; %s stay in memory", err, what)})
		f, _ = snapshot.NewRecordFile("")
	}
	return f
}
