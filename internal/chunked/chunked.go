// Package chunked owns a list that grows in chunks of a fixed size:
// appending never moves what the list holds, so pointers into it stay
// valid, and a list that grows to a million elements is never held twice,
// as a slice is while append copies it into a larger array. A build holds
// such lists of its files (its records, the marks of its spilled records),
// and that copy was 140 MB of the peak of a cold build of a million files.
// Strings holds a list of strings end to end in blocks, for the same
// reasons and one more (see Strings).
package chunked

import "iter"

// Size is how many elements one chunk holds.
const Size = 1024

// List is a list of T in chunks of Size. The zero List is empty.
type List[T any] struct {
	chunks [][]T
	n      int
}

// Len returns the number of elements.
func (l *List[T]) Len() int { return l.n }

// At returns the i-th element.
func (l *List[T]) At(i int) *T { return &l.chunks[i/Size][i%Size] }

// Append adds v after the last element and returns its index.
func (l *List[T]) Append(v T) int {
	if l.n%Size == 0 {
		l.chunks = append(l.chunks, make([]T, 0, Size))
	}
	last := &l.chunks[len(l.chunks)-1]
	*last = append(*last, v)
	l.n++
	return l.n - 1
}

// Release lets go of the k-th chunk, which must be full: its elements
// must not be used again. A list read in order by a consumer that has
// moved them elsewhere (a scan that spills its settled records) holds
// only the chunks still in use.
func (l *List[T]) Release(k int) { l.chunks[k] = nil }

// Chunk returns the k-th chunk's elements.
func (l *List[T]) Chunk(k int) []T { return l.chunks[k] }

// All yields the elements in order, with their indexes.
func (l *List[T]) All() iter.Seq2[int, *T] {
	return func(yield func(int, *T) bool) {
		for i := range l.n {
			if !yield(i, l.At(i)) {
				return
			}
		}
	}
}

// DeleteFunc removes the elements for which del is true, keeping the
// order of the others, and lets go of the chunks left empty.
func (l *List[T]) DeleteFunc(del func(*T) bool) {
	kept := 0
	for i := range l.n {
		if v := l.At(i); !del(v) {
			*l.At(kept) = *v
			kept++
		}
	}
	var zero T
	for i := kept; i < l.n; i++ {
		*l.At(i) = zero
	}
	chunks := (kept + Size - 1) / Size
	clear(l.chunks[chunks:])
	l.chunks = l.chunks[:chunks]
	if kept%Size != 0 {
		l.chunks[chunks-1] = l.chunks[chunks-1][:kept%Size]
	}
	l.n = kept
}
