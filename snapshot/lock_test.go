package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestLockFileNeverEmptyWhileTaken: taking over the lock file of a killed
// build writes this build's PID over the old one before it cuts the
// rest, so that a kill in between leaves a file that still names a
// process (the next build takes it for a killed build's, Leftover, and
// sweeps its temporary files), never an empty one, which stands for a
// finished build's. The CI's kill -9 test had found a build killed
// between the two steps of taking the lock: its predecessor's temporary
// files outlived every later build.
func TestLockFileNeverEmptyWhileTaken(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, LockFile)
	// a build killed after writing its PID over a longer one, before
	// cutting the rest: the first line names it
	halfway := strconv.Itoa(os.Getpid()+1) + "\n" + "999999999\n"
	if err := os.WriteFile(path, []byte(halfway), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := AcquireLock(context.Background(), dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Leftover || l.StalePID != os.Getpid()+1 {
		t.Errorf("a lock file left halfway through a takeover: Leftover %v, StalePID %d; want true, %d", l.Leftover, l.StalePID, os.Getpid()+1)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != strconv.Itoa(os.Getpid())+"\n" {
		t.Errorf("the lock file holds %q, %v; want this process alone", data, err)
	}
	l.Release()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the lock file is left after the release: %v", err)
	}
}
