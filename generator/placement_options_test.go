package generator_test

import (
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"golang.org/x/sys/unix"
)

// inode returns the inode number of the file at p.
func inode(t *testing.T, p string) uint64 {
	t.Helper()
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return info.Sys().(*syscall.Stat_t).Ino
}

// TestResourcesPlacement: [publish] resources = "link" hard-links the
// resources, so a source file rewritten in place changes the output at
// once (the hazard of serving the output in place); "copy", and "reflink"
// where the file system does not clone, copy them, so the output changes
// only with the next build, which publishes the update.
func TestResourcesPlacement(t *testing.T) {
	for _, tc := range []struct {
		placement config.Placement
		linked    bool
	}{{config.PlaceLink, true}, {config.PlaceCopy, false}, {config.PlaceReflink, false}} {
		t.Run(string(tc.placement), func(t *testing.T) {
			s := newSite(t, testBaseURL, func(c *config.Config) { c.Publish.Resources = tc.placement })
			s.write("a.txt", "first")
			s.write("b.txt", "b")
			s.build(t0)
			src, out := s.src("a.txt"), filepath.Join(s.Out, "a.txt")
			if linked := inode(t, src) == inode(t, out); linked != tc.linked {
				t.Errorf("the output's a.txt is the source file: %v, want %v", linked, tc.linked)
			}
			s.write("a.txt", "second, written in place") // the same inode
			want := "first"
			if tc.linked {
				want = "second, written in place"
			}
			if got := string(s.outFile("a.txt")); got != want {
				t.Errorf("before the next build, the output's a.txt holds %q, want %q", got, want)
			}
			if sum := s.build(t0.Add(time.Hour)); sum.Updated != 1 {
				t.Errorf("%d updated, want a.txt", sum.Updated)
			}
			if got := string(s.outFile("a.txt")); got != "second, written in place" {
				t.Errorf("after the build, the output's a.txt holds %q", got)
			}
			// A resource placed by placeAll rather than the scan's tee: the
			// source is trusted by its stat (an old mtime, recorded by one
			// build), its copy in the output is gone.
			s.touch("a.txt", t0)
			s.build(t0.Add(2 * time.Hour))
			os.Remove(out)
			s.build(t0.Add(3 * time.Hour))
			if linked := inode(t, src) == inode(t, out); linked != tc.linked {
				t.Errorf("the output's a.txt, placed again, is the source file: %v, want %v", linked, tc.linked)
			}
			if got := string(s.outFile("a.txt")); got != "second, written in place" {
				t.Errorf("placed again, the output's a.txt holds %q", got)
			}
		})
	}
}

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
		before := freeBytes(t, dir)
		s.build(t0.Add(time.Duration(i) * time.Hour))
		used := before - freeBytes(t, dir)
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

// freeBytes syncs the file system of dir and returns its free bytes.
func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	unix.Syncfs(int(d.Fd()))
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bfree) * st.Bsize
}
