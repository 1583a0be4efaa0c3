package generator_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
)

// smallTmpfs mounts a tmpfs of the given size, or skips the test.
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs here (needs root and mount): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// TestDiskFull: a build that runs out of space fails with an error naming
// the path and ENOSPC, leaves the previous output and state as they were
// (and no temporary file), and the next build, once there is room again,
// succeeds.
func TestDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a tmpfs; skipped with -short")
	}
	small := smallTmpfs(t, "1m")
	root := t.TempDir()
	s := newSiteIn(t, root, testBaseURL, func(c *config.Config) {
		c.Out = filepath.Join(small, "out")
		c.State = filepath.Join(small, "state")
	})
	s.write("a.txt", "alpha\n")
	s.write("b.txt", "bravo\n")
	s.build(t0)
	docsBefore := readTree(t, filepath.Join(s.Out, "resourcesync"))
	stateBefore, err := os.ReadFile(filepath.Join(s.State, "state"))
	if err != nil {
		t.Fatal(err)
	}

	s.write("big.bin", strings.Repeat("x", 2<<20)) // twice the file system
	s.write("a.txt", "alpha 2\n")
	_, err = generator.Build(context.Background(), s.Cfg, generator.Options{Now: t0.Add(time.Hour)})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err = %v, want ENOSPC", err)
	}
	// Both files are copied into the output at once: which of them meets
	// the full disk first depends on how the two are scheduled (a.txt,
	// when big.bin filled the disk before its copy ran).
	if named := strings.Contains(err.Error(), "big.bin") || strings.Contains(err.Error(), "a.txt"); !named || !strings.Contains(err.Error(), "no space left on device") {
		t.Errorf("err = %q, want it to name big.bin or a.txt and say no space is left", err)
	}
	if d := diffBytes(docsBefore, readTree(t, filepath.Join(s.Out, "resourcesync"))); len(d) > 0 {
		t.Errorf("a failed build changed the documents:\n%s", d)
	}
	if stateAfter, _ := os.ReadFile(filepath.Join(s.State, "state")); string(stateAfter) != string(stateBefore) {
		t.Error("a failed build changed the state")
	}
	filepath.WalkDir(small, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".rsgen-tmp-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})

	// with room again, the next build publishes both changes once
	s.remove("big.bin")
	sum := s.build(t0.Add(2 * time.Hour))
	if sum.Created != 0 || sum.Updated != 1 {
		t.Errorf("after the disk-full build: %d created, %d updated; want 0, 1", sum.Created, sum.Updated)
	}
}

// TestOutputErrorsNameTheOutput: a full or read-only output folder fails
// the build with an error that names the output file and says it is the
// output, not the source file being read (#33: "scan …/src/a.txt: open:
// read-only file system").
func TestOutputErrorsNameTheOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a tmpfs; skipped with -short")
	}
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, s *site, out string)
		errno syscall.Errno
	}{
		{"full", func(t *testing.T, s *site, _ string) {
			s.write("big.bin", strings.Repeat("x", 2<<20)) // twice the file system
		}, syscall.ENOSPC},
		{"read-only", func(t *testing.T, s *site, out string) {
			s.write("new.txt", "new")
			if msg, err := exec.Command("mount", "-o", "remount,ro", out).CombinedOutput(); err != nil {
				t.Skipf("cannot remount the tmpfs read-only: %v %s", err, msg)
			}
		}, syscall.EROFS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			small := smallTmpfs(t, "1m")
			s := newSiteIn(t, t.TempDir(), testBaseURL, func(c *config.Config) { c.Out = filepath.Join(small, "out") })
			s.write("a.txt", "alpha\n")
			s.build(t0)
			tc.spoil(t, s, small)
			_, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: t0.Add(time.Hour)})
			if !errors.Is(err, tc.errno) {
				t.Fatalf("err = %v, want %v", err, tc.errno)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "output folder: write "+s.Out+"/") || strings.Contains(msg, s.Source) {
				t.Errorf("err = %q, want it to name the output file, say it is the output, and not name the source", msg)
			}
		})
	}
}

// TestStateDiskFull: when the state cannot be saved for lack of space,
// the build fails and the previous state file is intact.
func TestStateDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a tmpfs; skipped with -short")
	}
	small := smallTmpfs(t, "64k")
	root := t.TempDir()
	s := newSiteIn(t, root, testBaseURL, func(c *config.Config) { c.State = filepath.Join(small, "state") })
	s.write("a.txt", "alpha\n")
	s.build(t0)
	stateBefore, _ := os.ReadFile(filepath.Join(s.State, "state"))
	for i := range 2000 {
		s.write(filepath.Join("many", strings.Repeat("n", 40)+string(rune('a'+i%26))+strings.Repeat("m", i%50)+".txt"), "x")
	}
	_, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: t0.Add(time.Hour)})
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), filepath.Join(small, "state")) {
		t.Fatalf("err = %v, want ENOSPC naming the state", err)
	}
	if stateAfter, _ := os.ReadFile(filepath.Join(s.State, "state")); string(stateAfter) != string(stateBefore) {
		t.Error("the state file changed")
	}
}

// TestRecoveryDiskFull: a build that rebuilds a lost state from the output
// into a state folder without room for the recovered records fails with
// ENOSPC naming that folder, and changes nothing in the output; given
// room, the next build recovers with no event.
func TestRecoveryDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a tmpfs; skipped with -short")
	}
	small := smallTmpfs(t, "16k")
	root := t.TempDir()
	s := newSiteIn(t, root, testBaseURL, nil)
	for i := range 1000 {
		s.write(filepath.Join("many", strings.Repeat("n", 40)+strconv.Itoa(i)+".txt"), "x")
	}
	s.build(t0)
	docsBefore := readTree(t, filepath.Join(s.Out, "resourcesync"))

	s.Cfg.State = filepath.Join(small, "state") // the state is lost
	_, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: t0.Add(time.Hour)})
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), s.Cfg.State) {
		t.Fatalf("err = %v, want ENOSPC naming the state folder %s", err, s.Cfg.State)
	}
	if docsAfter := readTree(t, filepath.Join(s.Out, "resourcesync")); !maps.EqualFunc(docsAfter, docsBefore, bytes.Equal) {
		t.Error("the failed recovery changed the published documents")
	}

	s.Cfg.State = filepath.Join(root, "state-again")
	if sum := s.build(t0.Add(2 * time.Hour)); sum.Created+sum.Updated+sum.Deleted != 0 {
		t.Errorf("the recovery with room made %d created, %d updated and %d deleted events", sum.Created, sum.Updated, sum.Deleted)
	}
}
