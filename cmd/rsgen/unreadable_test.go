package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// runUnprivileged runs the rsgen binary in dir as an unprivileged user:
// as root, through setpriv as nobody (root reads files whatever their
// mode, so unreadable files cannot be tested as root).
func runUnprivileged(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	bin := rsgenBinary(t)
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		cmd = exec.Command("setpriv", append([]string{"--reuid=nobody", "--regid=nogroup", "--clear-groups", bin}, args...)...)
	} else {
		cmd = exec.Command(bin, args...)
	}
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.String(), 0
}

// unprivilegedDir returns a folder the unprivileged user owns.
func unprivilegedDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("setpriv"); err != nil {
			t.Skip("running as root without setpriv: cannot make a file unreadable")
		}
	}
	dir, err := os.MkdirTemp("", "rsgen-unreadable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	return dir
}

func chownTree(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			os.Lchown(p, uid, gid)
		}
		return nil
	})
}

// TestUnreadable: an unreadable file or folder fails the build with its
// path and the OS error, publishing nothing and leaving the state as it
// was; --skip-unreadable turns each into a warning and leaves it out.
func TestUnreadable(t *testing.T) {
	dir := unprivilegedDir(t)
	write := func(p, content string) {
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("rsgen.toml", "base_url = \"https://data.example.org/\"\n")
	write("site/index.html", "<p>home</p>\n")
	write("site/secret.txt", "secret\n")
	write("site/private/a.txt", "a\n")
	chownTree(t, dir)
	os.Chmod(filepath.Join(dir, "site/secret.txt"), 0)

	// a first build publishes nothing
	out, code := runUnprivileged(t, dir, "build", "--now", "2026-01-01T00:00:00Z")
	if code != 1 || !strings.Contains(out, "site/secret.txt") || !strings.Contains(out, "permission denied") {
		t.Fatalf("first build: exit %d, %q; want exit 1 naming site/secret.txt and the OS error", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "public/.well-known/resourcesync")); err == nil {
		t.Error("a failed first build published a Source Description")
	}
	if _, err := os.Lstat(filepath.Join(dir, "public/index.html")); err == nil {
		t.Error("a failed first build published a resource")
	}
	if _, err := os.Stat(filepath.Join(dir, ".rsgen/state")); err == nil {
		t.Error("a failed first build saved a state")
	}

	// a good build, then an unreadable folder: nothing changes
	os.Chmod(filepath.Join(dir, "site/secret.txt"), 0o644)
	if out, code := runUnprivileged(t, dir, "build", "--now", "2026-01-01T00:00:00Z"); code != 0 {
		t.Fatalf("good build: exit %d: %s", code, out)
	}
	rl := filepath.Join(dir, "public/resourcesync/default/resourcelist.xml")
	rlBefore, _ := os.ReadFile(rl)
	stateBefore, _ := os.ReadFile(filepath.Join(dir, ".rsgen/state"))
	write("site/private/b.txt", "b\n")
	chownTree(t, dir)
	os.Chmod(filepath.Join(dir, "site/private"), 0)
	defer os.Chmod(filepath.Join(dir, "site/private"), 0o755)
	out, code = runUnprivileged(t, dir, "build", "--now", "2026-01-01T01:00:00Z")
	if code != 1 || !strings.Contains(out, "site/private") || !strings.Contains(out, "permission denied") {
		t.Fatalf("unreadable folder: exit %d, %q; want exit 1 naming site/private", code, out)
	}
	rlAfter, _ := os.ReadFile(rl)
	stateAfter, _ := os.ReadFile(filepath.Join(dir, ".rsgen/state"))
	if !bytes.Equal(rlBefore, rlAfter) || !bytes.Equal(stateBefore, stateAfter) {
		t.Error("a failed build changed the Resource List or the state")
	}

	// --skip-unreadable: a warning per path, and the build goes on (the
	// file changes too: an unchanged file is trusted without being opened);
	// what was published before keeps its last published version (#33: it
	// was published as deleted), and a new file is left out
	write("site/secret.txt", "secret, second version\n")
	write("site/new.txt", "new\n")
	chownTree(t, dir)
	os.Chmod(filepath.Join(dir, "site/secret.txt"), 0)
	os.Chmod(filepath.Join(dir, "site/new.txt"), 0)
	out, code = runUnprivileged(t, dir, "build", "--skip-unreadable", "--now", "2026-01-01T02:00:00Z")
	if code != 0 {
		t.Fatalf("--skip-unreadable: exit %d: %s", code, out)
	}
	for _, want := range []string{"rsgen: warning: private: unreadable folder: the last published version of the file it held is kept: open: permission denied",
		"rsgen: warning: secret.txt: unreadable: its last published version is kept: open: permission denied",
		"rsgen: warning: new.txt: unreadable, skipped: open: permission denied",
		"(0 created, 0 updated, 0 deleted)"} {
		if !strings.Contains(out, want) {
			t.Errorf("--skip-unreadable output lacks %q:\n%s", want, out)
		}
	}
	rlAfter, _ = os.ReadFile(rl)
	if !bytes.Equal(rlBefore, rlAfter) {
		t.Errorf("the Resource List changed, want the last published versions kept:\n%s", rlAfter)
	}

	// readable again: the changes are published as updates and creations
	os.Chmod(filepath.Join(dir, "site/secret.txt"), 0o644)
	os.Chmod(filepath.Join(dir, "site/new.txt"), 0o644)
	os.Chmod(filepath.Join(dir, "site/private"), 0o755)
	out, code = runUnprivileged(t, dir, "build", "--now", "2026-01-01T03:00:00Z")
	if code != 0 || !strings.Contains(out, "(2 created, 1 updated, 0 deleted)") {
		t.Errorf("readable again: exit %d, %q; want 2 created (new.txt, private/b.txt), 1 updated (secret.txt)", code, out)
	}
}
