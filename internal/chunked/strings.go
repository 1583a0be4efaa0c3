package chunked

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"iter"
	"slices"
)

// Strings is a list of strings held end to end in blocks, each as the
// length of the prefix it shares with the string before it and the rest:
// a list of paths in walk order costs a few bytes per path, where a
// []string costs a 16-byte header per string and keeps alive whatever the
// strings point into (a cold build's list of the resources it added kept
// the paths of all of the scan's records, 65 MB at a million files, after
// the scan had spilled them; held end to end whole, they were still 54
// MB). The zero Strings is empty and holds its blocks in memory.
//
// Given a Spill, a Strings moves each full block into a file and holds one
// block in memory, whatever its length: compressed, the list of ten
// million paths was still 100 MB.
type Strings struct {
	// Spill, when set, is called once, when the first block is full, for
	// the file that the full blocks move into. When it fails, or a write
	// fails, the blocks stay in memory: a spill costs memory, not strings.
	Spill func() (File, error)
	// BlockSize is the size of a block, 64 KiB when 0; a longer string
	// gets a block of its own.
	BlockSize int

	blocks [][]byte
	last   []byte // the last string appended
	n      int
	file   File
	end    int64 // the bytes of file that hold strings
	err    error // of reading the file back
}

// File is where a Strings moves its full blocks.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
}

const defaultBlockSize = 64 << 10

// Append adds s after the last string.
func (l *Strings) Append(s string) {
	shared := 0
	for shared < len(s) && shared < len(l.last) && s[shared] == l.last[shared] {
		shared++
	}
	rest := s[shared:]
	need := 2*binary.MaxVarintLen64 + len(rest)
	if len(l.blocks) == 0 || cap(l.blocks[len(l.blocks)-1])-len(l.blocks[len(l.blocks)-1]) < need {
		l.newBlock(need)
	}
	last := &l.blocks[len(l.blocks)-1]
	*last = binary.AppendUvarint(*last, uint64(shared))
	*last = binary.AppendUvarint(*last, uint64(len(rest)))
	*last = append(*last, rest...)
	l.last = append(l.last[:0], s...)
	l.n++
}

// newBlock starts a block that has room for need bytes, moving the full one
// into the file when there is one, and reusing its memory.
func (l *Strings) newBlock(need int) {
	size := max(l.BlockSize, need)
	if l.BlockSize == 0 {
		size = max(defaultBlockSize, need)
	}
	if len(l.blocks) > 0 && l.spill(l.blocks[len(l.blocks)-1]) {
		full := l.blocks[len(l.blocks)-1]
		l.blocks = l.blocks[:len(l.blocks)-1]
		if cap(full) >= size {
			l.blocks = append(l.blocks, full[:0])
			return
		}
	}
	l.blocks = append(l.blocks, make([]byte, 0, size))
}

// spill writes a full block at the end of the file, opening it first, and
// reports whether it did. A block that could not be written whole stays
// in memory; what it wrote is overwritten by the next block.
func (l *Strings) spill(block []byte) bool {
	if l.file == nil && l.Spill != nil {
		l.file, _ = l.Spill()
		l.Spill = nil
	}
	if l.file == nil || len(l.blocks) > 1 {
		return false
	}
	if _, err := l.file.WriteAt(block, l.end); err != nil {
		return false
	}
	l.end += int64(len(block))
	return true
}

// Len returns the number of strings.
func (l *Strings) Len() int { return l.n }

// All yields the strings in order. When the file cannot be read back, it
// stops early, and Err says why. The file's bytes and the blocks in memory
// are one stream of entries, decoded by one loop.
func (l *Strings) All() iter.Seq[string] {
	return func(yield func(string) bool) {
		parts := []io.Reader{io.NewSectionReader(l.file, 0, l.end)}
		total := l.end // no string is longer than the list
		for _, b := range l.blocks {
			parts = append(parts, bytes.NewReader(b))
			total += int64(len(b))
		}
		if l.end == 0 {
			parts = parts[1:] // no file, or nothing in it
		}
		r := bufio.NewReaderSize(io.MultiReader(parts...), defaultBlockSize)
		var cur []byte
		for {
			shared, err := binary.ReadUvarint(r)
			if err == io.EOF {
				return
			}
			var n uint64
			if err == nil {
				n, err = binary.ReadUvarint(r)
			}
			if err == nil && (shared > uint64(len(cur)) || n > uint64(total)) {
				err = fmt.Errorf("a string of %d bytes sharing %d with one of %d", n, shared, len(cur))
			}
			if err == nil {
				cur = slices.Grow(cur[:shared], int(n))[:int(shared)+int(n)]
				_, err = io.ReadFull(r, cur[shared:])
			}
			if err != nil {
				l.err = fmt.Errorf("read back the list of strings: %w", err)
				return
			}
			if !yield(string(cur)) {
				return
			}
		}
	}
}

// Err returns the error that stopped All early, if any.
func (l *Strings) Err() error { return l.err }

// Close empties the list and closes its file, if any.
func (l *Strings) Close() error {
	f := l.file
	*l = Strings{}
	if f != nil {
		return f.Close()
	}
	return nil
}
