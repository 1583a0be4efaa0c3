//go:build unix

package checker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// replaceFile replaces the file name of a built site by what make creates.
func replaceFile(t *testing.T, dir, name string, make func(path string) error) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := make(p); err != nil {
		t.Fatal(err)
	}
}

func fifo(path string) error { return syscall.Mkfifo(path, 0o644) }

func symlinkTo(target string) func(string) error {
	return func(path string) error { return os.Symlink(target, path) }
}

// TestLocalNotRegular checks that a local check opens regular files only,
// and none through a symbolic link that leads out of the folder: a named
// pipe or /dev/zero would block the check or never end.
func TestLocalNotRegular(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "changelist.xml")
	writeFile(t, filepath.Dir(outside), "changelist.xml", []byte(mustRead(t, "changelist.xml")))
	tests := []struct {
		name, file string
		make       func(string) error
		rule, msg  string
	}{
		{"resource is a named pipe", "res/b.txt", fifo, "content-missing", "res/b.txt is a named pipe"},
		{"resource leads to /dev/zero", "res/b.txt", symlinkTo("/dev/zero"), "content-missing", "res/b.txt is a symbolic link that leads out of the checked folder"},
		{"document is a named pipe", "changelist.xml", fifo, "document-missing", "changelist.xml is a named pipe"},
		{"document leads out", "changelist.xml", symlinkTo(outside), "document-missing", "changelist.xml is a symbolic link that leads out of the checked folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := buildSite(t, "testdata/sites/valid.txtar")
			replaceFile(t, dir, tt.file, tt.make)
			rep := checkDir(t, dir, Options{VerifyContent: true})
			if msg := firstFinding(t, rep, tt.rule).Message; !strings.Contains(msg, tt.msg) {
				t.Errorf("message %q does not say %q", msg, tt.msg)
			}
		})
	}
	t.Run("link inside the folder", func(t *testing.T) {
		dir := buildSite(t, "testdata/sites/valid.txtar")
		replaceFile(t, dir, "res/b.txt", symlinkTo("../res/b-copy.txt"))
		writeFile(t, dir, "res/b-copy.txt", []byte("beta\n"))
		wantRules(t, checkDir(t, dir, Options{VerifyContent: true}))
	})
}

// TestLocalSourceDescriptionPipe checks that inferring the base URL does
// not block on a Source Description that is a named pipe.
func TestLocalSourceDescriptionPipe(t *testing.T) {
	dir := buildSite(t, "testdata/sites/valid.txtar")
	replaceFile(t, dir, wellKnown, fifo)
	_, err := CheckDir(t.Context(), dir, Options{})
	if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "is a named pipe") {
		t.Errorf("got %v, want an error that names the named pipe", err)
	}
}

// TestCheckFileNotRegular checks that a lone document that is a named pipe
// or a device is refused, not read.
func TestCheckFileNotRegular(t *testing.T) {
	p := filepath.Join(t.TempDir(), "changelist.xml")
	if err := fifo(p); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{p: "a named pipe", "/dev/zero": "a device"} {
		_, err := CheckFile(t.Context(), path, Options{})
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), kind) {
			t.Errorf("CheckFile(%s): got %v, want an error that says %s", path, err, kind)
		}
	}
}

// TestLocalReadHonoursContext checks that reading and hashing stop when
// the check is stopped: the resource is a sparse file of 1 TiB, which takes
// minutes to hash.
func TestLocalReadHonoursContext(t *testing.T) {
	dir := buildSite(t, "testdata/sites/valid.txtar")
	if err := os.Truncate(filepath.Join(dir, "res", "b.txt"), 1<<40); err != nil {
		t.Skipf("no sparse file of 1 TiB here: %v", err)
	}
	t.Run("interrupt", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		_, err := CheckDir(ctx, dir, Options{BaseURL: "http://example.org/", VerifyContent: true})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("got %v, want the context's error", err)
		}
	})
	t.Run("max-time", func(t *testing.T) {
		wantRules(t, checkDir(t, dir, Options{VerifyContent: true, MaxTime: 100 * time.Millisecond}), "max-time")
	})
}
