package generator_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/internal/sysfile"
)

// inode returns the inode number of the file at p.
func inode(t *testing.T, p string) uint64 {
	t.Helper()
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return sysfile.Inode(info)
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
