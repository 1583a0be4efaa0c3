package chunked

import (
	"encoding/binary"
	"iter"
)

// Strings is a list of strings held end to end in blocks, each as the
// length of the prefix it shares with the string before it and the rest:
// a list of paths in walk order costs a few bytes per path, where a
// []string costs a 16-byte header per string and keeps alive whatever the
// strings point into (a cold build's list of the resources it added kept
// the paths of all of the scan's records, 65 MB at a million files, after
// the scan had spilled them; held end to end whole, they were still 54
// MB). The zero Strings is empty.
type Strings struct {
	blocks [][]byte
	last   []byte // the last string appended
	n      int
}

// blockSize is the size of a block; a longer string gets a block of its
// own.
const blockSize = 64 << 10

// Append adds s after the last string.
func (l *Strings) Append(s string) {
	shared := 0
	for shared < len(s) && shared < len(l.last) && s[shared] == l.last[shared] {
		shared++
	}
	rest := s[shared:]
	need := 2*binary.MaxVarintLen64 + len(rest)
	if len(l.blocks) == 0 || cap(l.blocks[len(l.blocks)-1])-len(l.blocks[len(l.blocks)-1]) < need {
		l.blocks = append(l.blocks, make([]byte, 0, max(blockSize, need)))
	}
	last := &l.blocks[len(l.blocks)-1]
	*last = binary.AppendUvarint(*last, uint64(shared))
	*last = binary.AppendUvarint(*last, uint64(len(rest)))
	*last = append(*last, rest...)
	l.last = append(l.last[:0], s...)
	l.n++
}

// Len returns the number of strings.
func (l *Strings) Len() int { return l.n }

// All yields the strings in order.
func (l *Strings) All() iter.Seq[string] {
	return func(yield func(string) bool) {
		var cur []byte
		for _, b := range l.blocks {
			for len(b) > 0 {
				shared, k := binary.Uvarint(b)
				b = b[k:]
				n, k := binary.Uvarint(b)
				b = b[k:]
				cur = append(cur[:shared], b[:n]...)
				b = b[n:]
				if !yield(string(cur)) {
					return
				}
			}
		}
	}
}
