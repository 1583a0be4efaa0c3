package snapshot

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"iter"
	"slices"

	"github.com/rsgen/rsgen/internal/sysfile"
	"github.com/rsgen/rsgen/layout"
)

// The kept versions of a state (sets with keep_versions), by path in walk
// order and, for one path, oldest first (VersionOrder). A site that keeps
// versions gains some with every build, so a build must not hold them
// whole: from format 5 the state file keeps them as a section of its own,
// with its length, which Load leaves in the file for Versions to read as
// the build merges them with its scan; the next build's versions are
// written into a RecordFile as they are merged (UseVersions). A state of
// an earlier format, or one made in memory, holds them in memory.

// VersionOrder orders versions by path, in walk order, then by the time
// they were first seen: the order of a state's versions.
func VersionOrder(x, y Record) int {
	return cmp.Or(layout.ComparePaths(x.Path, y.Path), cmp.Compare(x.Seen, y.Seen))
}

// NumVersions returns the number of kept versions of st.
func (st *State) NumVersions() int {
	if st.storedVersions != nil {
		return st.storedVersions.count
	}
	return st.versions.Len()
}

// Versions returns the kept versions of st in VersionOrder, decoded one at
// a time as they are asked for when they are in a file. The sequence
// yields an error once and stops when the file cannot be read.
func (st *State) Versions() iter.Seq2[Record, error] {
	if st.storedVersions != nil {
		return st.storedVersions.records
	}
	return st.versions.copies
}

// SetVersions makes vs, sorted into VersionOrder, the kept versions of st,
// held in memory.
func (st *State) SetVersions(vs []Record) {
	slices.SortStableFunc(vs, VersionOrder)
	st.versions, st.storedVersions = RecordsOf(vs...), nil
}

// UseVersions makes the records of the finished f, appended in
// VersionOrder, the kept versions of st, which then owns f: closing st
// closes it.
func (st *State) UseVersions(f *RecordFile) {
	st.versions, st.storedVersions = f.mem, f.stored
}

// TakeVersions moves the kept versions of from to st, which then closes
// the file they are in: from no longer holds them.
func (st *State) TakeVersions(from *State) error {
	s := from.storedVersions
	if s != nil && from.stored != nil && s.file == from.stored.file {
		// They are in the file Load opened, which from's Close closes.
		dup, err := sysfile.Dup(s.file)
		if err != nil {
			return fmt.Errorf("snapshot: keep the versions of %s: %w", s.file.Name(), err)
		}
		moved := *s
		moved.file = dup
		s = &moved
	}
	st.versions, st.storedVersions = from.versions, s
	from.versions, from.storedVersions = Records{}, nil
	return nil
}

// versionsSection writes the versions of st as format 5 keeps them: their
// number, the length of their records and the records. Those read from a
// file of this format are copied as they are, already encoded.
func (e *encoder) versionsSection(st *State) error {
	e.uvarint(uint64(st.NumVersions()))
	if s := st.storedVersions; s != nil && s.version == Version {
		e.uvarint(uint64(s.size))
		_, err := io.Copy(e.w, io.NewSectionReader(s.file, s.end-s.size, s.size))
		return err
	}
	var buf bytes.Buffer
	sub := &encoder{w: bufio.NewWriter(&buf)}
	for r, err := range st.Versions() {
		if err != nil {
			return err
		}
		sub.record(&r)
	}
	if err := sub.w.Flush(); err != nil {
		return err
	}
	e.uvarint(uint64(buf.Len()))
	e.w.Write(buf.Bytes())
	return nil
}

// versionsSection reads the versions section of a format 5 state: left in
// the file for Versions when stored is set, else decoded into memory.
func (d *decoder) versionsSection(st *State, stored *storedRecords) {
	n := d.count()
	size := int64(d.uvarint())
	if d.err != nil {
		return
	}
	if size > d.left {
		d.fail("versions of %d bytes exceed the %d bytes left", size, d.left)
		return
	}
	if stored != nil {
		end := int64(len(magic)) + d.size - d.left + size
		st.storedVersions = &storedRecords{file: stored.file, end: end, size: size, count: n, version: d.version}
		d.skip(size)
		return
	}
	before := d.left
	st.versions = RecordsOf(d.records(n)...)
	if d.err == nil && before-d.left != size {
		d.fail("versions section of %d bytes holds %d", size, before-d.left)
	}
}
