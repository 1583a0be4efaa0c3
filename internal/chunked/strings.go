package chunked

import (
	"encoding/binary"
	"iter"
)

// Strings is a list of strings held end to end in blocks, each after its
// length: a string costs its bytes and a byte or two, where a []string
// costs a 16-byte header per string and keeps alive whatever the strings
// point into (a cold build's list of the resources it added kept the
// paths of all of the scan's records, 65 MB at a million files, after the
// scan had spilled them). The zero Strings is empty.
type Strings struct {
	blocks [][]byte
	n      int
}

// blockSize is the size of a block; a longer string gets a block of its
// own.
const blockSize = 64 << 10

// Append adds s after the last string.
func (l *Strings) Append(s string) {
	need := binary.MaxVarintLen64 + len(s)
	if len(l.blocks) == 0 || cap(l.blocks[len(l.blocks)-1])-len(l.blocks[len(l.blocks)-1]) < need {
		l.blocks = append(l.blocks, make([]byte, 0, max(blockSize, need)))
	}
	last := &l.blocks[len(l.blocks)-1]
	*last = binary.AppendUvarint(*last, uint64(len(s)))
	*last = append(*last, s...)
	l.n++
}

// Len returns the number of strings.
func (l *Strings) Len() int { return l.n }

// All yields the strings in order.
func (l *Strings) All() iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, b := range l.blocks {
			for len(b) > 0 {
				n, k := binary.Uvarint(b)
				if !yield(string(b[k : k+int(n)])) {
					return
				}
				b = b[k+int(n):]
			}
		}
	}
}
