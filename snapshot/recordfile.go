package snapshot

import (
	"bufio"
	"fmt"
	"io"
	"iter"
	"os"
)

// RecordFile collects records as they are made: the file records of a
// state that is rebuilt rather than loaded (one recovered from the
// published output), in walk order, or a build's kept versions, in
// VersionOrder (see State.UseVersions). They go into an unnamed file of a
// folder, encoded as a state file encodes them, from which they are read
// one at a time as a loaded state's are. A recovering build so holds a buffer of records, not one
// per file of the collection (about 140 bytes each with their paths: 1.4
// GB at ten million files). Without a folder, the records are held in
// memory.
type RecordFile struct {
	mem    Records // the records, without a file
	file   *os.File
	e      encoder
	n      int
	stored *storedRecords // where the records are, once Finish wrote them
}

// NewRecordFile returns a RecordFile writing into an unnamed file of the
// folder dir (see UnnamedFile), or holding its records in memory when dir
// is "".
func NewRecordFile(dir string) (*RecordFile, error) {
	if dir == "" {
		return &RecordFile{}, nil
	}
	f, err := UnnamedFile(dir)
	if err != nil {
		return nil, fmt.Errorf("snapshot: make a file for the file records in %s: %w", dir, err)
	}
	rf := &RecordFile{file: f}
	rf.e.w = bufio.NewWriterSize(f, 256<<10)
	return rf, nil
}

// Append adds r after the records appended before, which must precede it
// in walk order. A write that fails is reported by Finish.
func (f *RecordFile) Append(r *Record) {
	f.n++
	if f.file == nil {
		f.mem.Append(*r)
		return
	}
	f.e.record(r)
}

// Len returns the number of records appended.
func (f *RecordFile) Len() int { return f.n }

// Finish ends the appending: All and State.UseFiles read the records after
// it.
func (f *RecordFile) Finish() error {
	if f.file == nil || f.stored != nil {
		return nil
	}
	if err := f.e.w.Flush(); err != nil {
		return fmt.Errorf("snapshot: write the file records into %s: %w", f.file.Name(), err)
	}
	size, err := f.file.Seek(0, io.SeekCurrent)
	if err != nil {
		return fmt.Errorf("snapshot: write the file records into %s: %w", f.file.Name(), err)
	}
	f.stored = &storedRecords{file: f.file, end: size, size: size, count: f.n, version: Version}
	return nil
}

// All yields the records of a finished RecordFile in the order appended;
// it yields an error once and stops when the file cannot be read.
func (f *RecordFile) All() iter.Seq2[Record, error] {
	if f.file == nil {
		return f.mem.copies
	}
	return f.stored.records
}

// Close frees the file of a RecordFile that no State uses.
func (f *RecordFile) Close() error {
	if f.file == nil {
		return nil
	}
	return f.file.Close()
}

// UseFiles makes the records of the finished f the file records of st,
// which then owns f: closing st closes it.
func (st *State) UseFiles(f *RecordFile) {
	if f.file == nil {
		st.Files, st.stored = f.mem, nil
		return
	}
	st.Files, st.stored = Records{}, f.stored
}
