package destination

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// codec writes values of T as lines, reads them back and orders them.
type codec[T any] struct {
	append func([]byte, *T) []byte
	parse  func([]byte) (T, error)
	cmp    func(a, b *T) int
}

// sortMemory is how many bytes of encoded lines a sorter holds before it
// writes them out as a sorted run: what bounds a sync's memory, whatever
// the number of resources (a variable for the tests).
var sortMemory = 8 << 20

// sorter sorts values that may not fit in memory: it holds up to
// sortMemory bytes of them, then writes them, sorted, to a run file in
// dir; All merges the runs. It is how a sync of a million resources
// holds a few megabytes of them, never one per resource.
type sorter[T any] struct {
	dir   string
	c     codec[T]
	held  []T
	bytes int
	runs  []string
	line  []byte
}

func newSorter[T any](dir string, c codec[T]) *sorter[T] {
	return &sorter[T]{dir: dir, c: c}
}

// Add adds v.
func (s *sorter[T]) Add(v T) error {
	s.line = s.c.append(s.line[:0], &v)
	s.held = append(s.held, v)
	s.bytes += len(s.line) + 64
	if s.bytes >= sortMemory {
		return s.spill()
	}
	return nil
}

// spill writes the values held as a sorted run.
func (s *sorter[T]) spill() error {
	slices.SortStableFunc(s.held, func(a, b T) int { return s.c.cmp(&a, &b) })
	name := filepath.Join(s.dir, "run-"+strconv.Itoa(len(s.runs)))
	if err := writeLines(name, slices.Values(s.held), s.c); err != nil {
		return err
	}
	s.runs = append(s.runs, name)
	clear(s.held)
	s.held, s.bytes = s.held[:0], 0
	return nil
}

// All yields the values in order; equal values in the order they were
// added. It may be called again.
func (s *sorter[T]) All() iter.Seq2[T, error] {
	if len(s.runs) == 0 {
		slices.SortStableFunc(s.held, func(a, b T) int { return s.c.cmp(&a, &b) })
		return func(yield func(T, error) bool) {
			for _, v := range s.held {
				if !yield(v, nil) {
					return
				}
			}
		}
	}
	if len(s.held) > 0 {
		if err := s.spill(); err != nil {
			return func(yield func(T, error) bool) { var zero T; yield(zero, err) }
		}
	}
	return mergeRuns(s.runs, s.c)
}

// Close removes the runs.
func (s *sorter[T]) Close() error {
	var errs []error
	for _, r := range s.runs {
		if err := os.Remove(r); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	s.runs, s.held = nil, nil
	return errors.Join(errs...)
}

// writeLines writes the values of seq to the file name, one line each.
func writeLines[T any](name string, seq iter.Seq[T], c codec[T]) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w := newLineWriter(f)
	for v := range seq {
		if err := w.write(c.append(w.line[:0], &v)); err != nil {
			f.Close()
			return err
		}
	}
	return w.finish(false)
}

// lineWriter writes lines to a file through a buffer.
type lineWriter struct {
	f    *os.File
	w    *bufio.Writer
	line []byte // a buffer for the caller's next line
}

func newLineWriter(f *os.File) *lineWriter {
	return &lineWriter{f: f, w: bufio.NewWriterSize(f, 256<<10)}
}

func (lw *lineWriter) write(line []byte) error {
	lw.line = line
	if _, err := lw.w.Write(line); err != nil {
		return fmt.Errorf("write %s: %w", lw.f.Name(), err)
	}
	return nil
}

// finish flushes and closes the file, first syncing it with sync.
func (lw *lineWriter) finish(sync bool) error {
	err := lw.w.Flush()
	if err == nil && sync {
		err = lw.f.Sync()
	}
	if cerr := lw.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", lw.f.Name(), err)
	}
	return nil
}

// readLines yields the values of the file name. A last line without its
// newline, the tail of a write that a kill cut short, is left out; a
// file that is not there holds nothing.
func readLines[T any](name string, c codec[T]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		f, err := os.Open(name)
		if errors.Is(err, os.ErrNotExist) {
			return
		}
		if err != nil {
			yield(zero, err)
			return
		}
		defer f.Close()
		r := bufio.NewReaderSize(f, 64<<10)
		for n := 1; ; n++ {
			line, err := r.ReadSlice('\n')
			if errors.Is(err, bufio.ErrBufferFull) {
				var long []byte
				long, err = readLong(r, line)
				line = long
			}
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(zero, fmt.Errorf("read %s: %w", name, err))
				return
			}
			v, err := c.parse(bytes.TrimSuffix(line, []byte{'\n'}))
			if err != nil {
				err = fmt.Errorf("%s line %d: %w", name, n, err)
			}
			if !yield(v, err) || err != nil {
				return
			}
		}
	}
}

// readLong reads the rest of a line longer than the reader's buffer.
func readLong(r *bufio.Reader, start []byte) ([]byte, error) {
	line := append([]byte(nil), start...)
	for {
		more, err := r.ReadSlice('\n')
		line = append(line, more...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// mergeRuns yields the values of sorted run files in order; of equal
// values, those of earlier runs first.
func mergeRuns[T any](runs []string, c codec[T]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		type head struct {
			v    T
			next func() (T, error, bool)
			stop func()
		}
		var heads []*head
		defer func() {
			for _, h := range heads {
				h.stop()
			}
		}()
		for _, r := range runs {
			next, stop := iter.Pull2(readLines(r, c))
			h := &head{next: next, stop: stop}
			v, err, ok := next()
			if err != nil {
				yield(v, err)
				stop()
				return
			}
			if !ok {
				stop()
				continue
			}
			h.v = v
			heads = append(heads, h)
		}
		for len(heads) > 0 {
			least := 0
			for i := 1; i < len(heads); i++ {
				if c.cmp(&heads[i].v, &heads[least].v) < 0 {
					least = i
				}
			}
			h := heads[least]
			if !yield(h.v, nil) {
				return
			}
			v, err, ok := h.next()
			if err != nil {
				yield(v, err)
				return
			}
			if !ok {
				h.stop()
				heads = slices.Delete(heads, least, least+1)
				continue
			}
			h.v = v
		}
	}
}
