package generator

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestPlacerForgetsOldFolders: the placer knows at most maxKnownDirs
// folders to exist, however many it creates, so that a build's memory does
// not grow with the output's folders; a folder it forgot, it makes again.
func TestPlacerForgetsOldFolders(t *testing.T) {
	defer func(n int) { maxKnownDirs = n }(maxKnownDirs)
	maxKnownDirs = 8
	root := t.TempDir()
	o := &placer{dir: root}
	for i := range 5 * maxKnownDirs {
		if err := o.mkdirs(filepath.Join(root, fmt.Sprint(i/10), fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	known := 0
	o.dirs.Range(func(any, any) bool { known++; return true })
	if known > maxKnownDirs {
		t.Errorf("the placer knows %d folders, want at most %d", known, maxKnownDirs)
	}
	first := filepath.Join(root, "0", "0")
	if err := os.Remove(first); err != nil {
		t.Fatal(err)
	}
	if err := o.mkdirs(first); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(first); err != nil {
		t.Errorf("a folder forgotten is not made again: %v", err)
	}
}
