package generator_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rsgen/rsgen/generator"
	"github.com/rsgen/rsgen/snapshot"
)

// TestLockHelper is not a test: run by lockHolder in a child process, it
// takes the lock of $RSGEN_LOCK_DIR, says so and sleeps until killed.
func TestLockHelper(t *testing.T) {
	dir := os.Getenv("RSGEN_LOCK_DIR")
	if dir == "" {
		t.Skip("helper process only")
	}
	if _, err := snapshot.AcquireLock(context.Background(), dir, false, nil); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	time.Sleep(time.Minute)
	os.Exit(0)
}

// lockHolder starts a process that holds the lock of dir.
func lockHolder(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelper$")
	cmd.Env = append(os.Environ(), "RSGEN_LOCK_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "locked" {
		t.Fatalf("lock holder: %q", line)
	}
	return cmd
}

// TestLockConcurrentBuild: a build on a state another process is building
// fails at once, naming the holder's PID; the state and output are left
// alone.
func TestLockConcurrentBuild(t *testing.T) {
	s := newSite(t, testBaseURL, nil)
	s.write("a.txt", "alpha\n")
	holder := lockHolder(t, s.State)
	// The holder never lets go: a build that waited would never return.
	_, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: t0})
	var le *snapshot.LockError
	if !errors.Is(err, snapshot.ErrLocked) || !errors.As(err, &le) {
		t.Fatalf("err = %v, want ErrLocked", err)
	}
	if le.PID != holder.Process.Pid || !strings.Contains(err.Error(), fmt.Sprint(holder.Process.Pid)) {
		t.Errorf("err = %v, want it to name PID %d", err, holder.Process.Pid)
	}
	if _, err := os.Stat(s.Out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a locked-out build touched the output: %v", err)
	}
}

// TestLockWait: with Wait, a build says that it waits for the holder, and
// builds once the holder is gone: the holder is stopped only when the
// build says it waits.
func TestLockWait(t *testing.T) {
	s := newSite(t, testBaseURL, nil)
	s.write("a.txt", "alpha\n")
	holder := lockHolder(t, s.State)
	waited := false
	opts := generator.Options{Now: t0, Wait: true, Notify: func(n generator.Note) {
		if n.Kind == generator.NoteInfo && strings.Contains(n.Msg, fmt.Sprintf("waiting for process %d", holder.Process.Pid)) {
			waited = true
			holder.Process.Signal(syscall.SIGTERM)
		}
	}}
	if _, err := generator.Build(context.Background(), s.Cfg, opts); err != nil {
		t.Fatal(err)
	}
	if !waited {
		t.Error("the build did not say that it waited for the holder")
	}
}

// TestLockStale: the lock file of a killed build is taken over with a
// warning naming the dead process, and removed at the end.
func TestLockStale(t *testing.T) {
	s := newSite(t, testBaseURL, nil)
	s.write("a.txt", "alpha\n")
	holder := lockHolder(t, s.State)
	pid := holder.Process.Pid
	holder.Process.Kill()
	holder.Wait()
	lockFile := filepath.Join(s.State, snapshot.LockFile)
	if _, err := os.Stat(lockFile); err != nil {
		t.Fatalf("the killed holder left no lock file: %v", err)
	}
	notes := s.buildWithNotes(generator.Options{Now: t0})
	if len(notes) != 1 || !strings.Contains(notes[0].Msg, fmt.Sprintf("process %d", pid)) {
		t.Errorf("notes %v, want one naming the dead process %d", notes, pid)
	}
	if _, err := os.Stat(lockFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file left after the build: %v", err)
	}
	// and the next build has nothing to say
	if notes := s.buildWithNotes(generator.Options{Now: t0.Add(time.Hour)}); len(notes) != 0 {
		t.Errorf("notes %v after a clean build", notes)
	}
}

// buildWithNotes runs a build that must succeed and returns its warnings.
func (s *site) buildWithNotes(opts generator.Options) []generator.Note {
	s.t.Helper()
	var notes []generator.Note
	var mu sync.Mutex
	opts.Notify = func(n generator.Note) {
		if isTestWarning(n) {
			mu.Lock()
			notes = append(notes, n)
			mu.Unlock()
		}
	}
	if _, err := generator.Build(context.Background(), s.Cfg, opts); err != nil {
		s.t.Fatal(err)
	}
	return notes
}
