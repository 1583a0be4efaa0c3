package generator

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"syscall"
)

// Scanning again
//
// A build reads some source files again after its scan: to place a
// resource the scan did not copy, to pack it in a dump package, to keep it
// as a version. A file removed in between (a racer deleting, a checkout
// switching branches) cannot be published. Rather than fail, asking the
// user to build again, the build does it: it drops everything it staged
// (as a failed build does) and scans again, under the same lock, so that
// the file is left out, as a file removed during the scan is, and its
// deletion published if it was. After maxScans scans that each lost a
// file, the build fails. (A file changed in between fails the build, as
// it did: its bytes are not the ones the scan recorded, and the next build
// publishes them.)

// errRemovedSinceScan marks the error of a source file found removed when
// it was read after the scan.
var errRemovedSinceScan = errors.New("removed since the scan")

// maxScans is how many times a build scans when files keep being removed
// under it.
const maxScans = 3

// goneSinceScan returns err, from opening the source file at source path
// p after the scan, marked with errRemovedSinceScan when it says that the
// file, or a folder on its way, is gone.
func goneSinceScan(p string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("%s: %w (%v)", p, errRemovedSinceScan, err)
	}
	return err
}

// onceNotes passes on each note but the warnings an earlier scan of the
// same build sent already: a scan again finds the same symbolic links,
// unreadable files and empty sets, and the user is told of each once.
type onceNotes struct {
	notify func(Note)
	mu     sync.Mutex
	sent   map[Note]bool
}

func (o *onceNotes) note(n Note) {
	if n.Kind == NoteWarning {
		o.mu.Lock()
		seen := o.sent[n]
		o.sent[n] = true
		o.mu.Unlock()
		if seen {
			return
		}
	}
	o.notify(n)
}
