package snapshot

import (
	"fmt"
	"iter"
	"sort"

	"github.com/rsgen/rsgen/internal/chunked"
	"github.com/rsgen/rsgen/layout"
)

// Records holds file records in walk order, in chunks (see package
// chunked): a cold build does not know how many files it will find, and
// pointers to a record stay valid while records are appended.
//
// The records of a large scan are spilled into a file instead (see
// spilled): At, All, Find and Search then decode them a chunk at a time,
// and the records they return are copies, which nobody may change and
// which stay valid however long they are kept. Such Records cannot be
// appended to, and return the error of a file that cannot be read back,
// so that a disk error fails a build instead of crashing it.
type Records struct {
	chunked.List[Record]
	disk *spilled
}

// Len returns the number of records.
func (rs *Records) Len() int {
	if rs.disk != nil {
		return rs.disk.n
	}
	return rs.List.Len()
}

// At returns the i-th record.
func (rs *Records) At(i int) (*Record, error) {
	if rs.disk != nil {
		k := rs.disk.chunkOf(i)
		recs, err := rs.disk.chunk(k)
		if err != nil {
			return nil, err
		}
		return &recs[i-rs.disk.chunks[k].start], nil
	}
	return rs.List.At(i), nil
}

// MarksAt returns the marks of the i-th record. A spill holds them in
// memory: MarksAt answers without decoding a record.
func (rs *Records) MarksAt(i int) Marks {
	if rs.disk != nil {
		return rs.disk.marksAt(i)
	}
	return rs.List.At(i).Marks()
}

// Reader returns a reader of the records at any index, for one goroutine:
// several goroutines that each read a range of the records (the parts of
// a long list, written in parallel) each decode the spilled chunks of
// their own range, where At's few shared chunks, behind one lock, would
// make every goroutine decode the chunks of the others again.
func (rs *Records) Reader() *RecordReader { return &RecordReader{rs: rs, k: -1} }

// RecordReader reads records by index, holding the spilled chunk it
// decoded last (see Records.Reader).
type RecordReader struct {
	rs   *Records
	k    int // the chunk in recs, -1 for none
	recs []Record
}

// At returns the i-th record, valid until the reader reads another chunk.
func (r *RecordReader) At(i int) (*Record, error) {
	d := r.rs.disk
	if d == nil {
		return r.rs.List.At(i), nil
	}
	if r.k < 0 || i < d.chunks[r.k].start || i-d.chunks[r.k].start >= len(r.recs) {
		k := d.chunkOf(i)
		recs, err := d.decode(k)
		if err != nil {
			return nil, fmt.Errorf("snapshot: read the spilled file records from %s: %w", d.file.Name(), err)
		}
		r.k, r.recs = k, recs
	}
	return &r.recs[i-d.chunks[r.k].start], nil
}

// All yields the records in walk order; when spilled records cannot be
// read back, it yields the error, once, and stops.
func (rs *Records) All() iter.Seq2[*Record, error] {
	return func(yield func(*Record, error) bool) {
		if rs.disk == nil {
			for _, r := range rs.List.All() {
				if !yield(r, nil) {
					return
				}
			}
			return
		}
		for k := range rs.disk.chunks {
			recs, err := rs.disk.chunk(k)
			if err != nil {
				yield(nil, err)
				return
			}
			for j := range recs {
				if !yield(&recs[j], nil) {
					return
				}
			}
		}
	}
}

// copies yields copies of the records in walk order, as a sequence of
// records read from a file does (see State.Records).
func (rs *Records) copies(yield func(Record, error) bool) {
	for r, err := range rs.All() {
		if err != nil {
			yield(Record{}, err)
			return
		}
		if !yield(*r, nil) {
			return
		}
	}
}

// Append adds r after the last record and returns its index.
func (rs *Records) Append(r Record) int {
	if rs.disk != nil {
		panic("snapshot: append to spilled records")
	}
	return rs.List.Append(r)
}

// DeleteFunc removes the records for which del is true.
func (rs *Records) DeleteFunc(del func(*Record) bool) {
	if rs.disk != nil {
		panic("snapshot: delete from spilled records")
	}
	rs.List.DeleteFunc(del)
}

// Close frees the file of spilled records.
func (rs *Records) Close() error {
	if rs.disk == nil {
		return nil
	}
	return rs.disk.close()
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
func (rs *Records) Find(p string) (*Record, error) {
	i, err := rs.Search(p)
	if err != nil || i == rs.Len() {
		return nil, err
	}
	r, err := rs.At(i)
	if err != nil || r.Path != p {
		return nil, err
	}
	return r, nil
}

// Search returns the index of the first record whose path is not before p
// in walk order (Len when there is none): the records must be in walk
// order.
func (rs *Records) Search(p string) (int, error) {
	if rs.disk != nil {
		return rs.searchSpilled(p)
	}
	return sort.Search(rs.Len(), func(i int) bool { return layout.ComparePaths(rs.List.At(i).Path, p) >= 0 }), nil
}

// searchSpilled is Search in spilled records: it finds the chunk by the
// first paths, which are in memory, and decodes that chunk alone.
func (rs *Records) searchSpilled(p string) (int, error) {
	chunks := rs.disk.chunks
	// The first chunk whose first path is not before p: the record sought
	// is in the chunk before it, or is its first.
	k := sort.Search(len(chunks), func(k int) bool { return layout.ComparePaths(chunks[k].first, p) >= 0 })
	if k == 0 {
		return 0, nil
	}
	recs, err := rs.disk.chunk(k - 1)
	if err != nil {
		return 0, err
	}
	j := sort.Search(len(recs), func(j int) bool { return layout.ComparePaths(recs[j].Path, p) >= 0 })
	return chunks[k-1].start + j, nil
}
