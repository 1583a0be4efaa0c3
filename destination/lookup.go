package destination

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
)

// sortedFile finds lines by path in a file of lines sorted by path (the
// inventory, its delta) by bisecting its bytes: a sync that applies a few
// changes to a mirror of a million files reads a few pages per change,
// not the million lines.
type sortedFile struct {
	f    *os.File
	size int64
	buf  []byte        // for the probes
	r    *bufio.Reader // for the scan
}

// openSorted opens the sorted file name; one that is not there is empty.
func openSorted(name string) (*sortedFile, error) {
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return &sortedFile{}, nil
	}
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &sortedFile{f: f, size: info.Size()}, nil
}

func (s *sortedFile) Close() error {
	if s.f == nil {
		return nil
	}
	return s.f.Close()
}

// scanBelow is the span of bytes find reads line by line rather than
// bisect further.
const scanBelow = 16 << 10

// find returns the line whose first field decodes to path, without its
// newline, or nil. The returned line is valid until the next call.
func (s *sortedFile) find(path string) ([]byte, error) {
	if s.size == 0 {
		return nil, nil
	}
	// Every line before lo has a path below path; lo is a line's start.
	lo, hi := int64(0), s.size
	for hi-lo > scanBelow {
		mid := lo + (hi-lo)/2
		start, line, err := s.lineAfter(mid)
		if err != nil {
			return nil, err
		}
		if line == nil || start >= hi {
			hi = mid
			continue
		}
		p, err := linePath(line)
		if err != nil {
			return nil, err
		}
		if comparePaths(p, path) < 0 {
			lo = start + int64(len(line)) + 1
		} else {
			hi = start
		}
	}
	return s.scan(lo, path)
}

// scan reads the lines from offset lo on, up to the first whose path is
// path or sorts after it.
func (s *sortedFile) scan(lo int64, path string) ([]byte, error) {
	if s.r == nil {
		s.r = bufio.NewReaderSize(nil, 16<<10)
	}
	s.r.Reset(io.NewSectionReader(s.f, lo, s.size-lo))
	for {
		line, err := s.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			line, err = readLong(s.r, line)
		}
		if err != nil { // the end, or a torn last line
			if errors.Is(err, io.EOF) {
				return nil, nil
			}
			return nil, fmt.Errorf("read %s: %w", s.f.Name(), err)
		}
		line = line[:len(line)-1]
		p, err := linePath(line)
		if err != nil {
			return nil, err
		}
		switch c := comparePaths(p, path); {
		case c == 0:
			return line, nil
		case c > 0:
			return nil, nil
		}
	}
}

// lineAfter returns the first line that starts after offset off, and
// where it starts; nil at the end of the file.
func (s *sortedFile) lineAfter(off int64) (int64, []byte, error) {
	line, err := s.lineAt(off)
	if err != nil || line == nil {
		return 0, nil, err
	}
	start := off + int64(len(line)) + 1
	if start >= s.size {
		return start, nil, nil
	}
	line, err = s.lineAt(start)
	return start, line, err
}

// lineAt returns the bytes from off to the next newline, without it: a
// page first, more only for a longer line.
func (s *sortedFile) lineAt(off int64) ([]byte, error) {
	const page = 4 << 10
	if s.buf == nil {
		s.buf = make([]byte, page)
	}
	n, want := 0, page
	for {
		k, err := s.f.ReadAt(s.buf[n:want], off+int64(n))
		if i := bytes.IndexByte(s.buf[n:n+k], '\n'); i >= 0 {
			return s.buf[:n+i], nil
		}
		n += k
		switch {
		case errors.Is(err, io.EOF):
			return nil, nil // a torn last line: not a line
		case err != nil:
			return nil, fmt.Errorf("read %s: %w", s.f.Name(), err)
		}
		if want *= 2; want > len(s.buf) {
			s.buf = append(s.buf, make([]byte, want-len(s.buf))...)
		}
	}
}

// linePath decodes the first field of a line of the inventory: its path.
func linePath(line []byte) (string, error) {
	field, _, _ := bytes.Cut(line, []byte{' '})
	p, err := url.PathUnescape(string(field))
	if err != nil {
		return "", fmt.Errorf("a line of the inventory: %w", err)
	}
	return p, nil
}
