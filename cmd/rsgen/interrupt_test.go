package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rsgen/rsgen/snapshot"
)

// TestInterruptedBuildExits130: Ctrl-C while a build reads a file (here
// a 16 GiB sparse file, which takes the hasher many seconds) stops it
// with exit 130 and a plain message, and leaves the output and the state
// of the last complete build byte for byte.
func TestInterruptedBuildExits130(t *testing.T) {
	bin := rsgenBinary(t)
	dir := t.TempDir()
	src, out, state := filepath.Join(dir, "site"), filepath.Join(dir, "public"), filepath.Join(dir, "state")
	os.MkdirAll(src, 0o755)
	if err := os.WriteFile(filepath.Join(src, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := func(now string) *exec.Cmd {
		return exec.Command(bin, "build", "--source", src, "--out", out, "--state", state,
			"--base-url", "https://data.example.org/", "--now", now, "--quiet")
	}
	if b, err := build("2026-01-01T00:00:00Z").CombinedOutput(); err != nil {
		t.Fatalf("first build: %v\n%s", err, b)
	}
	before := treeSums(t, dir)

	big, err := os.Create(filepath.Join(src, "big.bin"))
	if err == nil {
		err = big.Truncate(16 << 30)
		big.Close()
	}
	if err != nil {
		t.Skipf("cannot make a sparse file: %v", err)
	}
	cmd := build("2026-01-01T01:00:00Z")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The build holds the lock from its start to its end: once it is
	// there, the build is under way, and reading big.bin takes it long
	// after the signal.
	for {
		if _, err := os.Stat(filepath.Join(state, snapshot.LockFile)); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("interrupted build: %v, want exit status 130\n%s", err, stderr.String())
	}
	if want := "rsgen build: interrupted; the output and the state are those of the last complete build\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	os.Remove(filepath.Join(src, "big.bin"))
	after := treeSums(t, dir)
	for p, sum := range before {
		if after[p] != sum {
			t.Errorf("%s changed or went away", p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s was left behind", p)
		}
	}
}

// treeSums returns the SHA-256 of every regular file under root.
func treeSums(t *testing.T, root string) map[string][32]byte {
	t.Helper()
	sums := map[string][32]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || strings.HasSuffix(p, "big.bin") {
			return err
		}
		data, err := os.ReadFile(p)
		sums[p] = sha256.Sum256(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return sums
}
