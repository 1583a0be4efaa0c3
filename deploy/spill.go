package deploy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// A spill file holds what a deploy would otherwise keep in memory for
// every output file (the writes of a step, the keys to delete), so that
// its memory does not grow with the output. It lives in the deploy's
// folder of the state folder for the time of one plan. Its records are
// binary: strings and byte slices prefixed with their length, numbers as
// varints.

// spillWriter writes the records of a spill file. The first error sticks
// and is returned by close.
type spillWriter struct {
	f   *os.File
	w   *bufio.Writer
	buf []byte
	err error
}

func createSpill(path string) (*spillWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &spillWriter{f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

func (s *spillWriter) putUint(v uint64) {
	s.buf = binary.AppendUvarint(s.buf[:0], v)
	s.put(s.buf)
}

func (s *spillWriter) putInt(v int64) {
	s.buf = binary.AppendVarint(s.buf[:0], v)
	s.put(s.buf)
}

func (s *spillWriter) putString(v string) {
	s.putUint(uint64(len(v)))
	if s.err == nil {
		_, s.err = s.w.WriteString(v)
	}
}

func (s *spillWriter) put(b []byte) {
	if s.err == nil {
		_, s.err = s.w.Write(b)
	}
}

func (s *spillWriter) close() error {
	if s.err == nil {
		s.err = s.w.Flush()
	}
	if err := s.f.Close(); s.err == nil {
		s.err = err
	}
	if s.err != nil {
		return fmt.Errorf("write %s: %w", s.f.Name(), s.err)
	}
	return nil
}

// spillReader reads a spill file back. The first error sticks: err says
// whether the records read were whole.
type spillReader struct {
	f   *os.File
	r   *bufio.Reader
	err error
}

func openSpill(path string) (*spillReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &spillReader{f: f, r: bufio.NewReaderSize(f, 64<<10)}, nil
}

// more reports whether another record follows.
func (s *spillReader) more() bool {
	if s.err != nil {
		return false
	}
	_, err := s.r.Peek(1)
	if err != nil && err != io.EOF {
		s.err = err
	}
	return err == nil
}

func (s *spillReader) uint() uint64 {
	v, err := binary.ReadUvarint(s.r)
	s.fail(err)
	return v
}

func (s *spillReader) int() int64 {
	v, err := binary.ReadVarint(s.r)
	s.fail(err)
	return v
}

func (s *spillReader) string() string {
	n := s.uint()
	if s.err != nil {
		return ""
	}
	b := make([]byte, n)
	_, err := io.ReadFull(s.r, b)
	s.fail(err)
	return string(b)
}

func (s *spillReader) bytes(b []byte) {
	if s.err == nil {
		_, err := io.ReadFull(s.r, b)
		s.fail(err)
	}
}

func (s *spillReader) fail(err error) {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF // more said a record follows
	}
	if err != nil && s.err == nil {
		s.err = err
	}
}

// close closes the file and returns the first error of the reads.
func (s *spillReader) close() error {
	s.f.Close()
	if s.err != nil {
		return fmt.Errorf("read %s: %w", s.f.Name(), s.err)
	}
	return nil
}
