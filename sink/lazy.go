package sink

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/rsgen/rsgen/internal/sysfile"
)

// Lazy writes one file atomically, and not at all when the new bytes equal
// the file already there. While the bytes written match the existing
// file, it only compares; at the first difference it creates a temporary
// file, copies the matching prefix from the existing file (so nothing is
// held in memory) and writes on. Commit renames the temporary file into
// place; Finish hands it to the caller, to stage.
type Lazy struct {
	path string
	old  *os.File
	oldR *bufio.Reader
	same bool  // the bytes so far equal the existing file's prefix
	n    int64 // bytes written so far
	tmp  *os.File
	tmpW *bufio.Writer
	cmp  []byte
}

// The buffers of Lazy files are reused: a build that keeps versions
// writes a TimeMap per resource, and a new 64 KiB reader and writer for
// each were 1.3 GB of garbage for 10,000 of them.
var (
	readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}
	writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 64<<10) }}
)

// CreateLazy starts a Lazy file at path.
func CreateLazy(path string) (*Lazy, error) {
	f := &Lazy{path: path}
	old, err := os.Open(path)
	if err == nil && isDir(old) {
		// A folder of an earlier build stands at the path, which this
		// build makes a file (see Displace): nothing to compare with.
		old.Close()
		err = os.ErrNotExist
	}
	switch {
	case err == nil:
		f.old, f.oldR, f.same = old, readers.Get().(*bufio.Reader), true
		f.oldR.Reset(old)
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		// ENOTDIR: a file of an earlier build stands in the way of the
		// path's folder, and this build makes that file a folder.
		if err := f.startTemp(); err != nil {
			return nil, err
		}
	default:
		return nil, err
	}
	return f, nil
}

func (f *Lazy) Write(p []byte) (int, error) {
	if f.same {
		if cap(f.cmp) < len(p) {
			f.cmp = make([]byte, len(p))
		}
		got, _ := io.ReadFull(f.oldR, f.cmp[:len(p)])
		if got == len(p) && bytes.Equal(f.cmp[:got], p) {
			f.n += int64(len(p))
			return len(p), nil
		}
		if err := f.diverge(); err != nil {
			return 0, err
		}
	}
	k, err := f.tmpW.Write(p)
	f.n += int64(k)
	return k, err
}

// diverge switches from comparing to writing: a temporary file receives the
// prefix that matched.
func (f *Lazy) diverge() error {
	f.same = false
	if err := f.startTemp(); err != nil {
		return err
	}
	if _, err := f.old.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if _, err := io.CopyN(f.tmpW, f.old, f.n); err != nil {
		return fmt.Errorf("copy unchanged prefix of %s: %w", f.path, err)
	}
	return nil
}

func (f *Lazy) startTemp() error {
	tmp, err := createTemp(f.path)
	if err != nil {
		return err
	}
	f.tmp, f.tmpW = tmp, writers.Get().(*bufio.Writer)
	f.tmpW.Reset(tmp)
	return nil
}

// Commit finishes the file, syncs it and renames it into place. It reports
// whether the file on disk changed.
func (f *Lazy) Commit() (changed bool, err error) {
	defer f.Abort()
	tmp, err := f.Finish(true)
	if err != nil || tmp == "" {
		return false, err
	}
	f.Abort() // closes the old file: Windows renames over no file this process holds open
	if err := sysfile.Rename(tmp, f.path); err != nil {
		os.Remove(tmp)
		return false, fmt.Errorf("write %s: %w", f.path, err)
	}
	return true, nil
}

// Finish completes the new bytes. When they equal the existing file it
// returns "", and the caller has nothing to do; otherwise it returns the
// closed temporary file holding them, which the caller then owns: to rename
// or to remove.
func (f *Lazy) Finish(sync bool) (tmp string, err error) {
	if f.same {
		// Equal so far; unchanged only if the old file ends here too.
		if _, err := f.oldR.ReadByte(); err == io.EOF {
			return "", nil
		}
		if err := f.diverge(); err != nil {
			return "", err
		}
	}
	err = f.tmpW.Flush()
	if err == nil {
		err = f.tmp.Chmod(0o644)
	}
	if err == nil && sync {
		err = f.tmp.Sync()
	}
	if cerr := f.tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("write %s: %w", f.path, err)
	}
	tmp = f.tmp.Name()
	f.tmp = nil
	return tmp, nil
}

// Abort discards the file, leaving any existing one as it was, and gives
// back its buffers for the next Lazy file. It is safe to call after Commit
// or Finish, and callers defer it for that: a file never aborted only
// leaves its buffers to the garbage collector.
func (f *Lazy) Abort() {
	if f.oldR != nil {
		f.oldR.Reset(nil)
		readers.Put(f.oldR)
		f.oldR = nil
	}
	if f.tmpW != nil {
		f.tmpW.Reset(nil)
		writers.Put(f.tmpW)
		f.tmpW = nil
	}
	if f.old != nil {
		f.old.Close()
		f.old = nil
	}
	if f.tmp != nil {
		f.tmp.Close()
		os.Remove(f.tmp.Name())
		f.tmp = nil
	}
}

// isDir reports whether the open file f is a folder.
func isDir(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.IsDir()
}

// Size returns the number of bytes written so far.
func (f *Lazy) Size() int64 { return f.n }
