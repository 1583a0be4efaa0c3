package snapshot

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/rsgen/rsgen/internal/chunked"
)

// spilled holds records in an unnamed file, in chunks of at most
// chunked.Size: a scan of a large tree writes its records there as they
// settle, so that a build holds a few chunks of records, not one record
// per file of the source (at a million files, the records and their paths
// were 170 MB of a peak of 290 MB). Each chunk is encoded as a state file
// encodes its records, on its own (its first path is not compressed
// against the chunk before), so that any chunk can be decoded alone and
// the whole file is the records of a state file as they are: saving the
// state copies it (see encoder.files). The marks a scan sets and a state
// never saves are held in memory, half a byte per record. The chunks are
// written in order and read only once all are written.
type spilled struct {
	file    *os.File
	e       encoder
	encoded bytes.Buffer // the chunk add encodes, through e
	size    int64        // the bytes written to the file
	err     error        // the first write that failed
	done    bool         // finish was called: the records can be read
	n       int          // the records written
	chunks  []spilledChunk
	marks   nibbles

	mu    sync.Mutex
	cache [4]decodedChunk // the chunks decoded last, for At
	evict int             // the cache slot to replace next
}

type spilledChunk struct {
	offset, size int64
	start        int    // the index of the chunk's first record
	first        string // the chunk's first path, for Search
}

type decodedChunk struct {
	k    int
	recs []Record
}

// newSpilled makes a spill in an unnamed file in the folder dir.
func newSpilled(dir string) (*spilled, error) {
	f, err := UnnamedFile(dir)
	if err != nil {
		return nil, fmt.Errorf("snapshot: spill the scan's records into %s: %w", dir, err)
	}
	s := &spilled{file: f}
	s.e.w = bufio.NewWriterSize(&s.encoded, 64<<10)
	for i := range s.cache {
		s.cache[i].k = -1
	}
	return s, nil
}

// add writes recs, in walk order and after those written before, as one
// chunk.
func (s *spilled) add(recs []Record) {
	if len(recs) == 0 {
		return
	}
	s.e.prev = ""
	for i := range recs {
		s.e.record(&recs[i])
		s.marks.append(recs[i].marks())
	}
	s.e.w.Flush() // into s.encoded, which cannot fail
	if s.err == nil {
		_, s.err = s.file.Write(s.encoded.Bytes())
	}
	size := int64(s.encoded.Len())
	s.encoded.Reset()
	s.chunks = append(s.chunks, spilledChunk{offset: s.size, size: size, start: s.n, first: strings.Clone(recs[0].Path)})
	s.size += size
	s.n += len(recs)
}

// finish writes out what add buffered; the records can be read after it.
func (s *spilled) finish() error {
	if s.err != nil {
		return fmt.Errorf("snapshot: spill the file records into %s: %w", s.file.Name(), s.err)
	}
	s.done = true
	return nil
}

// copyTo writes the records, as a state file's, to w.
func (s *spilled) copyTo(w io.Writer) error {
	if _, err := io.Copy(w, io.NewSectionReader(s.file, 0, s.size)); err != nil {
		return fmt.Errorf("snapshot: copy the spilled file records from %s: %w", s.file.Name(), err)
	}
	return nil
}

// close frees the file.
func (s *spilled) close() error { return s.file.Close() }

// chunkOf returns the chunk holding record i.
func (s *spilled) chunkOf(i int) int {
	return sort.Search(len(s.chunks), func(k int) bool { return s.chunks[k].start > i }) - 1
}

// chunk returns the records of chunk k, decoding them unless they were
// among the last decoded.
func (s *spilled) chunk(k int) ([]Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.cache {
		if c.k == k {
			return c.recs, nil
		}
	}
	recs, err := s.decode(k)
	if err != nil {
		return nil, fmt.Errorf("snapshot: read the spilled file records from %s: %w", s.file.Name(), err)
	}
	s.cache[s.evict] = decodedChunk{k, recs}
	s.evict = (s.evict + 1) % len(s.cache)
	return recs, nil
}

// decode reads and decodes chunk k.
func (s *spilled) decode(k int) ([]Record, error) {
	if !s.done {
		return nil, errors.New("read before the spill was finished")
	}
	c := s.chunks[k]
	bp := chunkBuffers.Get().(*[]byte)
	defer chunkBuffers.Put(bp)
	if int64(cap(*bp)) < c.size {
		*bp = make([]byte, c.size)
	}
	buf := (*bp)[:c.size]
	if _, err := s.file.ReadAt(buf, c.offset); err != nil {
		return nil, err
	}
	n := s.n - c.start
	if k+1 < len(s.chunks) {
		n = s.chunks[k+1].start - c.start
	}
	d := newMemDecoder(buf)
	d.version = Version
	recs := make([]Record, n)
	for i := range recs {
		d.record(&recs[i])
		recs[i].setMarks(s.marks.at(c.start + i))
	}
	if d.err == nil && d.left != 0 {
		d.err = errors.New("trailing bytes")
	}
	if err := d.error(); err != nil {
		return nil, err
	}
	return recs, nil
}

// chunkBuffers holds the buffers chunks are read into: a record decoded
// keeps nothing of its chunk's bytes (its path and digests are copied).
var chunkBuffers = sync.Pool{New: func() any { return new([]byte) }}

// The marks a scan sets on a record, which a spill keeps and a state does
// not (see Record).
const (
	markPlaced      = 1
	markUnchanged   = 2
	markChangeShift = 2 // Change takes bits 2 and 3: the marks fit in 4 bits
)

func (r *Record) marks() byte {
	m := byte(r.Change) << markChangeShift
	if r.Placed {
		m |= markPlaced
	}
	if r.Unchanged {
		m |= markUnchanged
	}
	return m
}

func (r *Record) setMarks(m byte) {
	mk := marksOf(m)
	r.Placed, r.Unchanged, r.Change = mk.Placed, mk.Unchanged, mk.Change
}

// marksAt returns the marks of the i-th record, from memory.
func (s *spilled) marksAt(i int) Marks { return marksOf(s.marks.at(i)) }

func marksOf(m byte) Marks {
	return Marks{Placed: m&markPlaced != 0, Unchanged: m&markUnchanged != 0, Change: Change(m >> markChangeShift)}
}

// nibbles holds values under 16, two to a byte: the marks of ten million
// spilled records take 5 MB.
type nibbles struct {
	bytes chunked.List[byte]
	n     int
}

func (l *nibbles) append(v byte) {
	if l.n%2 == 0 {
		l.bytes.Append(v)
	} else {
		*l.bytes.At(l.n / 2) |= v << 4
	}
	l.n++
}

func (l *nibbles) at(i int) byte { return *l.bytes.At(i / 2) >> (4 * (i % 2)) & 0x0f }
