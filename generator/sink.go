package generator

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/rsgen/rsgen/layout"
)

// lazyFile writes one output file atomically, and not at all when the new
// bytes equal the file already there. While the bytes written match the
// existing file, it only compares; at the first difference it creates a
// temporary file, copies the matching prefix from the existing file (so
// nothing is held in memory) and writes on. Commit renames the temporary
// file into place.
type lazyFile struct {
	path string
	old  *os.File
	oldR *bufio.Reader
	same bool  // the bytes so far equal the existing file's prefix
	n    int64 // bytes written so far
	tmp  *os.File
	tmpW *bufio.Writer
	cmp  []byte
}

func createLazy(path string) (*lazyFile, error) {
	f := &lazyFile{path: path}
	old, err := os.Open(path)
	switch {
	case err == nil:
		f.old, f.oldR, f.same = old, bufio.NewReaderSize(old, 64<<10), true
	case errors.Is(err, os.ErrNotExist):
		if err := f.startTemp(); err != nil {
			return nil, err
		}
	default:
		return nil, err
	}
	return f, nil
}

func (f *lazyFile) Write(p []byte) (int, error) {
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
func (f *lazyFile) diverge() error {
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

func (f *lazyFile) startTemp() error {
	if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.path), layout.TempPrefix+"*")
	if err != nil {
		return err
	}
	f.tmp, f.tmpW = tmp, bufio.NewWriterSize(tmp, 64<<10)
	return nil
}

// Commit finishes the file, syncs it and renames it into place. It reports
// whether the file on disk changed.
func (f *lazyFile) Commit() (changed bool, err error) {
	defer f.Abort()
	tmp, err := f.finish(true)
	if err != nil || tmp == "" {
		return false, err
	}
	if err := os.Rename(tmp, f.path); err != nil {
		os.Remove(tmp)
		return false, fmt.Errorf("write %s: %w", f.path, err)
	}
	return true, nil
}

// finish completes the new bytes. When they equal the existing file it
// returns "", and the caller has nothing to do; otherwise it returns the
// closed temporary file holding them, which the caller then owns: to rename
// or to remove.
func (f *lazyFile) finish(sync bool) (tmp string, err error) {
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

// Abort discards the file, leaving any existing one as it was. It is safe
// to call after Commit.
func (f *lazyFile) Abort() {
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

// staged is a file written in full as a temporary file beside its place in
// the output, waiting to be renamed there.
type staged struct{ tmp, dst string }

// stage holds a temporary file until commitStaged renames it to dst. The
// documents of a build are all written before any is renamed into place,
// so a build that fails while it writes them (a full disk, an I/O error)
// leaves every published document as it was, and no file of its own.
func (b *builder) stage(tmp, dst string) {
	b.stageMu.Lock()
	defer b.stageMu.Unlock()
	b.staged = append(b.staged, staged{tmp, dst})
	if b.stagedAt == nil {
		b.stagedAt = map[string]string{}
	}
	b.stagedAt[dst] = tmp
}

// current returns the file that holds what this build publishes at dst:
// its staged replacement, if any, else dst.
func (b *builder) current(dst string) string {
	b.stageMu.Lock()
	defer b.stageMu.Unlock()
	if tmp, ok := b.stagedAt[dst]; ok {
		return tmp
	}
	return dst
}

// commitStaged renames the staged files into place in the order of
// publication (layout.PublishStep), and in the order they were written
// within a step: leaves before the indexes and lists that point to them,
// the Source Description last.
func (b *builder) commitStaged() error {
	slices.SortStableFunc(b.staged, func(x, y staged) int {
		return cmp.Compare(layout.PublishStep(b.outRel(x.dst)), layout.PublishStep(b.outRel(y.dst)))
	})
	for len(b.staged) > 0 {
		s := b.staged[0]
		if err := os.Rename(s.tmp, s.dst); err != nil {
			return fmt.Errorf("write %s: %w", s.dst, err)
		}
		b.staged = b.staged[1:]
		delete(b.stagedAt, s.dst)
	}
	return nil
}

// discardStaged removes the staged files not renamed into place: after a
// failed build.
func (b *builder) discardStaged() {
	for _, s := range b.staged {
		os.Remove(s.tmp)
	}
	b.staged, b.stagedAt = nil, nil
}

// outRel returns the output path of a file in the output folder.
func (b *builder) outRel(path string) string {
	rel, _ := filepath.Rel(b.cfg.Out, path)
	return filepath.ToSlash(rel)
}

// inOutput reports whether path lies in the output folder, where writes are
// staged, rather than in the state folder's archive, where they are not:
// a build reads its archive back as it publishes from it.
func (b *builder) inOutput(path string) bool {
	rel, err := filepath.Rel(b.cfg.Out, path)
	return err == nil && filepath.IsLocal(rel)
}
