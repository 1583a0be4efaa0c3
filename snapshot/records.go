package snapshot

import (
	"iter"
	"sort"

	"github.com/rsgen/rsgen/layout"
)

// recordsPerChunk is how many records one chunk of Records holds: 128 KiB.
const recordsPerChunk = 1024

// Records holds file records in walk order, in chunks of a fixed size, so
// that appending never moves the records already held. A cold build does
// not know how many files it will find, and a slice grown to a million
// records holds its old and new arrays together when it grows: 140 MB more
// at the peak of a cold build of a million files. Pointers to a record
// stay valid while records are appended.
type Records struct {
	chunks [][]Record
	n      int
}

// RecordsOf returns Records holding recs.
func RecordsOf(recs ...Record) Records {
	var rs Records
	for _, r := range recs {
		rs.Append(r)
	}
	return rs
}

// Len returns the number of records.
func (rs *Records) Len() int { return rs.n }

// At returns the i-th record.
func (rs *Records) At(i int) *Record {
	return &rs.chunks[i/recordsPerChunk][i%recordsPerChunk]
}

// Append adds r after the last record and returns its index.
func (rs *Records) Append(r Record) int {
	if rs.n%recordsPerChunk == 0 {
		rs.chunks = append(rs.chunks, make([]Record, 0, recordsPerChunk))
	}
	last := &rs.chunks[len(rs.chunks)-1]
	*last = append(*last, r)
	rs.n++
	return rs.n - 1
}

// All yields the records in order, with their indexes.
func (rs *Records) All() iter.Seq2[int, *Record] {
	return func(yield func(int, *Record) bool) {
		for i := range rs.n {
			if !yield(i, rs.At(i)) {
				return
			}
		}
	}
}

// DeleteFunc removes the records for which del is true, keeping the order
// of the others, and lets go of the chunks left empty.
func (rs *Records) DeleteFunc(del func(*Record) bool) {
	kept := 0
	for i := range rs.n {
		if r := rs.At(i); !del(r) {
			*rs.At(kept) = *r
			kept++
		}
	}
	for i := kept; i < rs.n; i++ {
		*rs.At(i) = Record{}
	}
	chunks := (kept + recordsPerChunk - 1) / recordsPerChunk
	clear(rs.chunks[chunks:])
	rs.chunks = rs.chunks[:chunks]
	if kept%recordsPerChunk != 0 {
		rs.chunks[chunks-1] = rs.chunks[chunks-1][:kept%recordsPerChunk]
	}
	rs.n = kept
}

// Find returns the record of path p, or nil: the records must be in walk
// order.
func (rs *Records) Find(p string) *Record {
	i := sort.Search(rs.n, func(i int) bool { return layout.ComparePaths(rs.At(i).Path, p) >= 0 })
	if i < rs.n && rs.At(i).Path == p {
		return rs.At(i)
	}
	return nil
}
