package zippkg

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// Spool keeps bitstreams compressed in a temporary file while they are read
// for another purpose, so that packaging never reads their sources again:
// the generator's hashing pass tees each file into a SpoolWriter, and
// Writer.AddSpooled later copies the compressed bytes into the package as
// they are. A spooled bitstream gives exactly the package bytes Writer.Add
// would give for the same bytes and Options.
//
// A Spool spools one bitstream at a time (use one per hashing worker); its
// methods and the copying done by AddSpooled may run in different
// goroutines. Its file grows by each bitstream's compressed size and is
// removed by Close.
type Spool struct {
	mu     sync.Mutex
	f      *os.File
	bw     *bufio.Writer
	off    int64 // end of the spooled data, buffered included
	opts   *Options
	comp   *compressor
	cur    *SpoolWriter
	closed bool
}

// NewSpool creates a Spool with its file in dir (os.TempDir() if empty),
// compressing with opts, which must equal the Options of the Writers that
// will package its bitstreams.
func NewSpool(dir string, opts *Options) (*Spool, error) {
	comp, err := newCompressor(opts.level())
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "rsgen-spool-*")
	if err != nil {
		return nil, fmt.Errorf("zippkg: create spool: %w", err)
	}
	return &Spool{f: f, bw: bufio.NewWriterSize(f, 256<<10), opts: opts, comp: comp}, nil
}

// Spooled is a bitstream held in a Spool, ready for Writer.AddSpooled. It
// stays valid until its Spool is closed.
type Spooled struct {
	Path           string // the manifest path given to Begin
	Method         uint16 // zip.Store or zip.Deflate
	CRC32          uint32
	Size           int64 // uncompressed
	CompressedSize int64
	spool          *Spool
	offset         int64
}

// SpoolWriter receives the bytes of one bitstream; see Spool.Begin.
type SpoolWriter struct {
	s    *Spool
	path string
	done bool
}

// Begin starts spooling the bitstream that will be at path, with the media
// type that selects its method. A SpoolWriter begun earlier and not
// finished is abandoned: its bytes stay in the file, unused.
func (s *Spool) Begin(path, mediaType string) (*SpoolWriter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("zippkg: spool %s: closed", path)
	}
	if s.cur != nil && !s.cur.done {
		s.cur.done = true
		s.off += s.comp.dst.n
	}
	if err := s.comp.reset(s.bw, s.opts.method(mediaType)); err != nil {
		return nil, fmt.Errorf("zippkg: spool %s: %w", path, err)
	}
	s.cur = &SpoolWriter{s: s, path: path}
	return s.cur, nil
}

// Write compresses p into the spool.
func (sw *SpoolWriter) Write(p []byte) (int, error) {
	sw.s.mu.Lock()
	defer sw.s.mu.Unlock()
	if sw.done {
		return 0, fmt.Errorf("zippkg: spool %s: write after Finish or a later Begin", sw.path)
	}
	n, err := sw.s.comp.Write(p)
	if err != nil {
		return n, fmt.Errorf("zippkg: spool %s: %w", sw.path, err)
	}
	return n, nil
}

// Finish ends the bitstream and returns where it is spooled.
func (sw *SpoolWriter) Finish() (*Spooled, error) {
	s := sw.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if sw.done {
		return nil, fmt.Errorf("zippkg: spool %s: Finish after Finish or a later Begin", sw.path)
	}
	sw.done = true
	crc, compressed, size, err := s.comp.finish()
	if err != nil {
		return nil, fmt.Errorf("zippkg: spool %s: %w", sw.path, err)
	}
	sp := &Spooled{Path: sw.path, Method: s.comp.method, CRC32: crc, Size: size,
		CompressedSize: compressed, spool: s, offset: s.off}
	s.off += compressed
	return sp, nil
}

// Close removes the spool's file. Spooled values of s are invalid after.
func (s *Spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.f.Close()
	if rerr := os.Remove(s.f.Name()); err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("zippkg: close spool: %w", err)
	}
	return nil
}

// copyTo writes the compressed bytes of sp to w.
func (sp *Spooled) copyTo(w io.Writer, buf []byte) error {
	if err := sp.spool.flush(); err != nil {
		return err
	}
	r := io.NewSectionReader(sp.spool.f, sp.offset, sp.CompressedSize)
	n, err := io.CopyBuffer(w, r, buf)
	if err == nil && n != sp.CompressedSize {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// flush makes everything spooled so far readable from the file.
func (s *Spool) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("spool closed")
	}
	return s.bw.Flush()
}
