package snapshot

import "unsafe"

// pathArena holds the paths of records end to end in large blocks. A path
// allocated on its own takes the next size class (64 bytes for the
// 53-byte paths of the bench's million-file tree), and a million paths are
// a million objects for the garbage collector to mark; in blocks they
// take their length and a block is one object.
//
// A path is a string pointing into its block, whose bytes are never
// written again: a block is only appended to, within its capacity, and a
// full one is left to the paths that point into it.
type pathArena struct {
	block []byte
}

// pathBlockSize is the size of one block; a path longer than a quarter of
// it is allocated on its own.
const pathBlockSize = 64 << 10

// join returns prefix followed by suffix, held in the arena.
func (a *pathArena) join(prefix string, suffix []byte) string {
	n := len(prefix) + len(suffix)
	switch {
	case n == 0:
		return ""
	case n > pathBlockSize/4:
		return prefix + string(suffix)
	case cap(a.block)-len(a.block) < n:
		a.block = make([]byte, 0, pathBlockSize)
	}
	start := len(a.block)
	a.block = append(a.block, prefix...)
	a.block = append(a.block, suffix...)
	return unsafe.String(&a.block[start], n)
}
