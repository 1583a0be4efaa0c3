package generator_test

import (
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"golang.org/x/sys/unix"
)

// TestReflinkClones: on a file system that clones (Btrfs, mounted from an
// image when mkfs.btrfs and loop mounts are at hand), resources =
// "reflink" places clones: the output's files are others than the
// source's, yet take no room of their own, whether the scan placed them
// or placeAll did.
func TestReflinkClones(t *testing.T) {
	dir := btrfsDir(t)
	s := newSiteIn(t, dir, testBaseURL, func(c *config.Config) { c.Publish.Resources = config.PlaceReflink })
	big := make([]byte, 8<<20)
	rand.Read(big)
	if err := os.WriteFile(s.src("big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	s.touch("big.bin", t0) // trusted by its stat once recorded: the second build does not read it
	for i, wipe := range []bool{false, true} {
		if wipe {
			os.RemoveAll(s.Out)
		}
		before := syncedFreeBytes(t, dir)
		s.build(t0.Add(time.Duration(i) * time.Hour))
		used := before - syncedFreeBytes(t, dir)
		if inode(t, s.src("big.bin")) == inode(t, filepath.Join(s.Out, "big.bin")) {
			t.Fatal("big.bin is hard-linked")
		}
		if got, _ := os.ReadFile(filepath.Join(s.Out, "big.bin")); string(got) != string(big) {
			t.Fatal("the output's big.bin differs from the source's")
		}
		if used > 4<<20 {
			t.Errorf("build %d took %d bytes for an 8 MiB resource: a copy, not a clone", i+1, used)
		}
	}
}

// btrfsDir mounts a small Btrfs file system from an image, or skips.
func btrfsDir(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("mkfs.btrfs"); err != nil {
		t.Skip("no mkfs.btrfs: cannot make a file system that clones")
	}
	img := filepath.Join(t.TempDir(), "btrfs.img")
	dir := t.TempDir()
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 128<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.btrfs", "-q", img).CombinedOutput(); err != nil {
		t.Skipf("mkfs.btrfs: %v %s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a Btrfs image here (needs root and loop devices): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	return dir
}

// syncedFreeBytes syncs the file system of dir and returns its free bytes.
func syncedFreeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	unix.Syncfs(int(d.Fd()))
	free, err := freeBytes(dir)
	if err != nil {
		t.Fatal(err)
	}
	return int64(free)
}
