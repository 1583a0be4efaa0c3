package snapshot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rsgen/rsgen/internal/sysfile"
)

// The lock of a state folder
//
// While a build runs, the lock file (LockFile) in the state folder holds the
// build's process ID, and the process holds an exclusive lock on it (a
// flock, or LockFileEx on Windows: see sysfile.TryLock); a build that ends
// removes it.
//
// The system drops the lock when its process dies, however it dies, so a
// lock file left by a killed build is stale by construction: the next build
// takes the lock, says whose it was, and goes on. The PID in the file is
// for messages only; it is never trusted to decide anything, so PID reuse
// cannot wedge a build.

// ErrLocked is returned, wrapped in a *LockError, when another build holds
// the state's lock and the caller did not ask to wait.
var ErrLocked = errors.New("another rsgen build is running on the same state")

// LockError names the lock file and the process that holds it.
type LockError struct {
	Path string
	PID  int // 0 when the holder has not written its PID yet
}

func (e *LockError) Error() string {
	return fmt.Sprintf("%v: %s is held by %s (wait for it with --wait, or stop it)", ErrLocked, e.Path, e.holder())
}

// holder names the process that holds the lock.
func (e *LockError) holder() string {
	if e.PID > 0 {
		return "process " + strconv.Itoa(e.PID)
	}
	return "a process that has not written its PID yet"
}

func (e *LockError) Unwrap() error { return ErrLocked }

// StateLock is a held lock on a state folder.
type StateLock struct {
	f          *os.File
	path       string
	createdDir bool // the state folder did not exist: remove it if still empty
	// Leftover: a lock file was there already, left by a build that did
	// not finish (a finished build removes its lock file), so the output
	// may hold that build's temporary files.
	Leftover bool
	// StalePID is the process that held the lock when it was killed, when
	// its lock file names it.
	StalePID int
}

// lockPoll is how often a waiting build retries the lock.
const lockPoll = 50 * time.Millisecond

// AcquireLock takes the lock of the state folder dir. When another process
// holds it, it fails at once with a *LockError, or with wait retries until
// the lock is free or ctx ends; waiting, when set, is told once what it
// waits for.
func AcquireLock(ctx context.Context, dir string, wait bool, waiting func(msg string)) (*StateLock, error) {
	_, statErr := os.Stat(dir)
	created := errors.Is(statErr, os.ErrNotExist)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("state folder: %w", err)
	}
	path := filepath.Join(dir, LockFile)
	for said := false; ; {
		l, err := tryLock(path)
		if err == nil {
			l.createdDir = created
			return l, nil
		}
		var le *LockError
		if !errors.As(err, &le) || !wait {
			if created {
				os.Remove(dir)
			}
			return nil, err
		}
		if !said && waiting != nil {
			said = true
			waiting("waiting for " + le.holder() + " to finish its build (it holds " + path + ")")
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s: %w", path, ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}

// tryLock makes one attempt. On success the lock names the PID found in a
// lock file left behind by a process that died holding it, if any.
func tryLock(path string) (*StateLock, error) {
	for {
		_, statErr := os.Stat(path)
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		err = sysfile.TryLock(f)
		if errors.Is(err, sysfile.ErrHeld) {
			pid := readPID(f)
			f.Close()
			return nil, &LockError{Path: path, PID: pid}
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		// The holder we waited for may have removed the file between our
		// open and our flock: then we hold a lock on a file nobody else
		// sees. Start again on the file at path.
		if !samePath(f, path) {
			f.Close()
			continue
		}
		// A build that ends empties its lock file before it removes it,
		// so that one Windows could not remove (see sysfile.RemoveLocked)
		// is not taken for a killed build's.
		stale := readPID(f)
		leftover := statErr == nil && stale != 0
		if stale == os.Getpid() {
			stale = 0
		}
		if err := writePID(f); err != nil {
			// A lock file this build created goes with it, as release
			// removes it: left there, it would tell the next build that
			// a build was killed. One that was there already stays.
			if statErr != nil {
				os.Remove(path)
			}
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		return &StateLock{f: f, path: path, Leftover: leftover, StalePID: stale}, nil
	}
}

func samePath(f *os.File, path string) bool {
	fi, err1 := f.Stat()
	pi, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && os.SameFile(fi, pi)
}

// readPID returns the process that the lock file f names on its first
// line, or 0.
func readPID(f *os.File) int {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	line, _, _ := strings.Cut(string(buf[:n]), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// writePID names this process on the first line of the lock file f. It
// writes over the PID of a killed build before it cuts what is left of
// it, so that the file never passes through empty: a build killed in
// between leaves a file that names it, which the next takes for a killed
// build's (Leftover) and sweeps after, not an empty one, which it would
// take for a finished build's.
func writePID(f *os.File) error {
	line := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if _, err := f.WriteAt(line, 0); err != nil {
		return err
	}
	return f.Truncate(int64(len(line)))
}

// Release removes the lock file and drops the lock, in the order that
// lets a waiting build that opened the old file notice (see samePath and
// sysfile.RemoveLocked).
func (l *StateLock) Release() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Truncate(0) // a build that ends leaves no PID (see tryLock)
	sysfile.RemoveLocked(l.f, l.path)
	l.f = nil
	if l.createdDir {
		os.Remove(filepath.Dir(l.path)) // only if the build left nothing in it
	}
}
