package destination

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
)

// Audit compares DIR with the current Resource List of the Source's set
// and reports, as events, every listed resource missing from DIR, every
// file of DIR no list names, and every file whose length or digests are
// not those listed. It reads every file that the list gives a digest
// for, trusting no state: the state is not read, and nothing is written.
// It returns ErrOutOfSync (wrapped) when DIR differs.
func Audit(ctx context.Context, o Options) (*Summary, error) {
	o = o.Defaults()
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	o.Dir = abs
	s := &syncer{o: o, c: newClient(&o), sum: &Summary{Mode: "audit"}}
	s.rep = &reporter{notify: o.Notify, sum: s.sum}
	defer func() { s.sum.Requests, s.sum.Bytes = s.c.requests.Load(), s.c.bytes.Load() }()
	if s.work, err = os.MkdirTemp("", "rsgen-audit-"); err != nil {
		return nil, err
	}
	defer os.RemoveAll(s.work)
	if s.dir, err = openMirror(o.Dir, false); err != nil {
		return nil, fmt.Errorf("audit %s: %w", o.Dir, err)
	}
	defer s.dir.Close()
	s.docs = newDocs(s.c, s.work, false)
	if err := s.discover(ctx); err != nil {
		return nil, err
	}
	if err := s.audit(ctx); err != nil {
		return s.sum, err
	}
	s.warnOtherHosts()
	if n := s.sum.Missing + s.sum.Extra + s.sum.Differing; n > 0 {
		return s.sum, fmt.Errorf("%w: %d missing, %d extra, %d differing", ErrOutOfSync, s.sum.Missing, s.sum.Extra, s.sum.Differing)
	}
	return s.sum, nil
}

// dirFile is a file of DIR as a walk finds it.
type dirFile struct {
	path string
	info fs.FileInfo
}

func (s *syncer) audit(ctx context.Context) error {
	wants := newSorter(s.work, wantCodec)
	defer wants.Close()
	if _, err := s.lists.readResources(ctx, wants); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return join(sortedWants(wants)(), dirFiles(s.dir, s.o.Dir), wantPath, func(f *dirFile) string { return f.path }, func(w *want, f *dirFile) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		switch {
		case f == nil:
			s.rep.event(Event{Kind: EventMissing, Path: w.path, URL: w.loc})
		case w == nil:
			s.rep.event(Event{Kind: EventExtra, Path: f.path})
		default:
			if msg := differs(s.dir, w, f); msg != "" {
				s.rep.event(Event{Kind: EventDiffers, Path: w.path, URL: w.loc, Msg: msg})
			} else {
				s.rep.count(&s.sum.Unchanged)
			}
		}
		return nil
	})
}

// dirFiles yields the files of DIR, dir (at name), in walk order.
func dirFiles(dir *mirrorDir, name string) iter.Seq2[dirFile, error] {
	return func(yield func(dirFile, error) bool) {
		err := dir.walk(func(rel string, info fs.FileInfo) error {
			if !yield(dirFile{path: rel, info: info}, nil) {
				return errStop
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStop) {
			yield(dirFile{}, fmt.Errorf("walk %s: %w", name, err))
		}
	}
}

// differs says how the file f of DIR, dir, differs from what w lists,
// or "".
func differs(dir *mirrorDir, w *want, f *dirFile) string {
	if !f.info.Mode().IsRegular() {
		return fmt.Sprintf("it is a %s, not a file", kindOf(f.info.Mode()))
	}
	if w.fix.length >= 0 && f.info.Size() != w.fix.length {
		return fmt.Sprintf("it holds %d bytes, the Source lists %d", f.info.Size(), w.fix.length)
	}
	if !w.fix.hasHash() {
		return ""
	}
	file, err := dir.open(f.path)
	if err != nil {
		return err.Error()
	}
	defer file.Close()
	v, err := hashReader(file, &w.fix)
	if err != nil {
		return err.Error()
	}
	var me *MismatchError
	if err := v.check(w.loc, &w.fix); errors.As(err, &me) {
		return fmt.Sprintf("its %s is %s, the Source lists %s", me.What, me.Got, me.Want)
	}
	return ""
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}
