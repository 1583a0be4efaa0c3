package deploy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/rsgen/rsgen/internal/sysfile"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/snapshot"
)

// publishingRecord is the file a build keeps in the state folder while it
// renames its files into place (the generator's intent record): while it
// is there, the output is not a complete build.
const publishingRecord = snapshot.PublishingFile

// buildMark identifies the last complete build: the state file a build
// replaces when it completes.
type buildMark struct {
	dev, ino     uint64
	size, mtimeN int64
}

// completeBuild checks that the output folder holds a complete build and
// returns its mark. A deploy compares the marks taken before and after it
// reads the output: a build renames files into place only while its record
// is there, and removes the record only after replacing the state file, so
// equal marks and no record mean that no build published anything in
// between.
func completeBuild(out, state string) (buildMark, error) {
	if _, err := os.Stat(filepath.Join(state, publishingRecord)); err == nil {
		return buildMark{}, errors.New("the last build did not complete (run rsgen build to complete it), or one is running")
	} else if !errors.Is(err, fs.ErrNotExist) {
		return buildMark{}, fmt.Errorf("state folder: %w", err)
	}
	info, err := os.Stat(filepath.Join(state, snapshot.FileName))
	if errors.Is(err, fs.ErrNotExist) {
		return buildMark{}, fmt.Errorf("no build to deploy: %s holds no state (run rsgen build first)", state)
	}
	if err != nil {
		return buildMark{}, fmt.Errorf("state folder: %w", err)
	}
	if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(layout.SourceDescription))); err != nil {
		return buildMark{}, fmt.Errorf("no build to deploy in %s: %w (run rsgen build first)", out, err)
	}
	return buildMark{dev: sysfile.Device(info), ino: sysfile.Inode(info), size: info.Size(), mtimeN: info.ModTime().UnixNano()}, nil
}

// readHolder reads the record of the process that holds the lock file f,
// for messages. The holder writes it right after it takes the lock, so a
// record read empty (or cut short) is read again, a few times, before the
// holder is taken as unknown (a zero Holder): a deploy started in the
// same moment as another must not name "process 0".
func readHolder(f *os.File) Holder {
	for try := 0; ; try++ {
		var h Holder
		data, _ := io.ReadAll(io.NewSectionReader(f, 0, 1<<16))
		if json.Unmarshal(data, &h) == nil && h.PID != 0 || try == holderReads {
			return h
		}
		time.Sleep(10 * time.Millisecond) // the holder is between its lock and its write
	}
}

// holderReads is how many times readHolder reads a record again.
const holderReads = 10

// errHeld is returned by flockFile when another process holds the lock.
var errHeld = sysfile.ErrHeld

// flockFile takes an exclusive lock on f, the lock file at path (for
// messages), without waiting, and writes holder into it for messages. The
// kernel drops the lock when the process dies, however it dies. When
// another process holds it, it closes f and returns errHeld with that
// process's holder. Closing f releases the lock.
func flockFile(f *os.File, path string, holder Holder) (Holder, error) {
	if err := sysfile.TryLock(f); err != nil {
		var other Holder
		if errors.Is(err, errHeld) {
			other, err = readHolder(f), errHeld
		}
		f.Close()
		return other, fmt.Errorf("lock %s: %w", path, err)
	}
	data, _ := json.Marshal(holder)
	if err := f.Truncate(0); err == nil {
		f.WriteAt(data, 0) // for messages only: a failure here costs nothing
	}
	return holder, nil
}
