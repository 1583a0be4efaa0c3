//go:build !linux || rsgen_portable

package destination

import "os"

// Systems other than Linux have no openat2: paths of DIR are opened
// through the os.Root, with the folders on the way checked (dir.go). The
// build tag rsgen_portable takes this way on Linux too, so that the tests
// run it there (.ci/run: go test -tags rsgen_portable ./destination).

func openDirFD(string) (int, error) { return -1, nil }

func closeDirFD(int) {}

func (d *mirrorDir) openFolderBeneath(string) (*os.File, error, bool) { return nil, nil, false }

func (d *mirrorDir) openFileBeneath(string) (*os.File, error, bool) { return nil, nil, false }

func (d *mirrorDir) statBeneath(string) (stamp, bool, error, bool) { return stamp{}, false, nil, false }
