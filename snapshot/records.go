package snapshot

import (
	"sort"

	"github.com/rsgen/rsgen/internal/chunked"
	"github.com/rsgen/rsgen/layout"
)

// Records holds file records in walk order, in chunks (see package
// chunked): a cold build does not know how many files it will find, and
// pointers to a record, which events keep, stay valid while records are
// appended.
type Records struct {
	chunked.List[Record]
}

// RecordsOf returns Records holding recs.
func RecordsOf(recs ...Record) Records {
	var rs Records
	for _, r := range recs {
		rs.Append(r)
	}
	return rs
}

// Find returns the record of path p, or nil: the records must be in walk
// order.
func (rs *Records) Find(p string) *Record {
	if i := rs.Search(p); i < rs.Len() && rs.At(i).Path == p {
		return rs.At(i)
	}
	return nil
}

// Search returns the index of the first record whose path is not before p
// in walk order (Len when there is none): the records must be in walk
// order.
func (rs *Records) Search(p string) int {
	return sort.Search(rs.Len(), func(i int) bool { return layout.ComparePaths(rs.At(i).Path, p) >= 0 })
}
