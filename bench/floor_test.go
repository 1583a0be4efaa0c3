package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// treeSmall is a tree of a few hundred tiny files in two levels of
// folders, for the floors' tests.
var treeSmall = treeSpec{Name: "small", Files: 250, MeanSize: 64, Sigma: 1, PerDir: 10, Seed: 5, Format: generatorFormat}

func smallTree(t *testing.T) *tree {
	t.Helper()
	tr, err := openTree(t.TempDir(), treeSmall, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestParallelWalkCountsAsSerial: the parallel walk+stat floor finds the
// files and bytes the walk of one goroutine finds, at several numbers of
// workers.
func TestParallelWalkCountsAsSerial(t *testing.T) {
	tr := smallTree(t)
	serial, err := walkStatFloor(tr.src)
	if err := tr.check(serial, err); err != nil {
		t.Fatal(err)
	}
	for _, procs := range []int{1, 2, 7} {
		err := withProcs(procs, func() error {
			parallel, err := walkStatParallelFloor(tr.src)
			return tr.check(parallel, err)
		})
		if err != nil {
			t.Errorf("%d workers: %v", procs, err)
		}
	}
}

// TestParallelWalkFails: a folder that cannot be read ends the parallel
// walk with its error, instead of leaving workers waiting.
func TestParallelWalkFails(t *testing.T) {
	if _, err := walkStatParallelFloor(filepath.Join(t.TempDir(), "missing")); !os.IsNotExist(err) {
		t.Errorf("walk of a missing folder: %v, want it does not exist", err)
	}
}

// TestLinkBatches: linking by file deals out one file at a time; by
// folder, each folder's files together, so that no two batches, which two
// workers may link at once, link into one folder. Both link every file.
func TestLinkBatches(t *testing.T) {
	tr := smallTree(t)
	for _, byFolder := range []bool{false, true} {
		var batches [][]linkJob
		dst := filepath.Join(t.TempDir(), "links")
		files, err := linkBatches(tr.src, dst, byFolder, func(b []linkJob) { batches = append(batches, b) })
		if err != nil || files != treeSmall.Files {
			t.Fatalf("by folder %v: %d files, %v", byFolder, files, err)
		}
		var linked int
		var folders []string
		for _, b := range batches {
			linked += len(b)
			folder := filepath.Dir(b[0].dst)
			for _, j := range b {
				if filepath.Dir(j.dst) != folder {
					t.Fatalf("by folder %v: a batch links into %s and %s", byFolder, folder, filepath.Dir(j.dst))
				}
			}
			if byFolder && slices.Contains(folders, folder) {
				t.Errorf("two batches link into %s", folder)
			}
			folders = append(folders, folder)
		}
		if want := treeSmall.Files / treeSmall.PerDir; byFolder && len(batches) != want || !byFolder && len(batches) != treeSmall.Files {
			t.Errorf("by folder %v: %d batches", byFolder, len(batches))
		}
		if linked != treeSmall.Files {
			t.Errorf("by folder %v: %d files in the batches, want %d", byFolder, linked, treeSmall.Files)
		}
	}
}

// TestLinkFloor: each link floor links every file and removes its links.
func TestLinkFloor(t *testing.T) {
	tr := smallTree(t)
	for _, byFolder := range []bool{false, true} {
		dst := filepath.Join(t.TempDir(), "links")
		r, err := linkFloor(tr.src, dst, byFolder)
		if err != nil || r.files != treeSmall.Files {
			t.Errorf("by folder %v: %d files, %v", byFolder, r.files, err)
		}
		if _, err := os.Stat(dst); !os.IsNotExist(err) {
			t.Errorf("by folder %v: the links are left (%v)", byFolder, err)
		}
	}
}

// TestParseProcs: --procs takes GOMAXPROCS values separated by commas.
func TestParseProcs(t *testing.T) {
	for in, want := range map[string][]int{"2": {2}, "1,2,16": {1, 2, 16}, " 4 , 8": {4, 8}} {
		if got, err := parseProcs(in); err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "2,", ",2", "2,,4", "two", "2.5", "2,2"} {
		if got, err := parseProcs(in); err == nil {
			t.Errorf("%q: %v, want an error", in, got)
		}
	}
}

// TestChildGetsGOMAXPROCS: a child the launcher starts at a GOMAXPROCS has
// it in its environment, and one started at 0 has the launcher's.
func TestChildGetsGOMAXPROCS(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to print the child's environment")
	}
	t.Setenv("GOMAXPROCS", "")
	l, err := startLauncher(sh)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	for procs, want := range map[int]string{3: "3", 0: ""} {
		r, err := l.run(procs, "-c", `printf %s "$GOMAXPROCS"`)
		if err != nil || r.Stdout != want {
			t.Errorf("at %d: the child's GOMAXPROCS is %q (%v), want %q", procs, r.Stdout, err, want)
		}
	}
}
