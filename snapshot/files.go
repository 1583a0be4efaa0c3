package snapshot

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"os"

	"github.com/rsgen/rsgen/layout"
)

// storedRecords finds records left in a file: the file records that Load
// left in a state file of format 4 or later, which keeps them last, or the
// versions of format 5 (see Versions), or those a RecordFile wrote. The
// file stays open until the State is closed, so that the records read are
// those of the file Load verified, even when a build replaces it meanwhile
// (a reader without the state's lock, such as status).
type storedRecords struct {
	file    *os.File
	end     int64 // the offset of the end of the records
	size    int64 // the length of the records, in bytes
	count   int
	version uint64
}

// NumFiles returns the number of file records of st.
func (st *State) NumFiles() int {
	if st.stored != nil {
		return st.stored.count
	}
	return st.Files.Len()
}

// Records returns the file records of st in walk order: those of Files,
// or, for a state Load read, those it left in the state file, decoded one
// at a time as they are asked for, so that a build never holds the
// previous records and the next ones whole together. The sequence yields
// an error once and stops when the file cannot be read.
func (st *State) Records() iter.Seq2[Record, error] {
	if st.stored == nil {
		return st.Files.copies
	}
	return st.stored.records
}

// Close closes the files a State holds open for Records and Versions: the
// state file Load read, and the RecordFile of UseFiles or UseVersions.
func (st *State) Close() error {
	var err error
	if st.stored != nil {
		err = st.stored.file.Close()
	}
	if v := st.storedVersions; v != nil && (st.stored == nil || v.file != st.stored.file) {
		err = errors.Join(err, v.file.Close())
	}
	return err
}

func (s *storedRecords) records(yield func(Record, error) bool) {
	d := newDecoder(io.NewSectionReader(s.file, s.end-s.size, s.size), s.size)
	d.version = s.version
	for range s.count {
		var r Record
		d.record(&r)
		if d.err != nil {
			break
		}
		if !yield(r, nil) {
			return
		}
	}
	if d.err == nil && d.left != 0 {
		d.err = errors.New("trailing bytes")
	}
	if err := d.error(); err != nil {
		yield(Record{}, fmt.Errorf("snapshot: read state %s: %w", s.file.Name(), err))
	}
}

// UnnamedFile makes a file in the folder dir that has no name, so that
// nothing is left behind, whatever happens to the build: with O_TMPFILE
// where the file system has it (Linux), a file deleted when it is closed
// on Windows (see unnamedFile), else as a temporary file removed at once
// (and not made when it cannot be removed).
func UnnamedFile(dir string) (*os.File, error) {
	if f, err := unnamedFile(dir); err == nil {
		return f, nil
	}
	f, err := os.CreateTemp(dir, layout.TempPrefix+"records-*")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}
