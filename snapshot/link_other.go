//go:build !linux

package snapshot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/rsgen/rsgen/layout"
)

// linkOpenFile hard-links the open file f at dst, which must not exist.
// These systems cannot link an open file, only a name, which may lead
// elsewhere by now (a folder on the way swapped for a link): the name is
// linked at a temporary name beside dst first, which no host serves, and
// only if that is the file f is it linked at dst. A file system that
// cannot link it fails with errors.ErrUnsupported, to be copied instead.
func linkOpenFile(f *os.File, dst string) error {
	tmp := filepath.Join(filepath.Dir(dst), layout.TempPrefix+"link-"+strconv.Itoa(os.Getpid())+"-"+filepath.Base(dst))
	os.Remove(tmp)
	if err := os.Link(f.Name(), tmp); err != nil {
		return &os.LinkError{Op: "link", Old: f.Name(), New: dst, Err: fmt.Errorf("%w: %w", errors.ErrUnsupported, err)}
	}
	defer os.Remove(tmp)
	linked, err := os.Lstat(tmp)
	if err != nil {
		return err
	}
	opened, err := f.Stat()
	if err != nil {
		return err
	}
	if !os.SameFile(linked, opened) {
		return &os.LinkError{Op: "link", Old: f.Name(), New: dst, Err: ErrOutside}
	}
	return os.Link(tmp, dst)
}
