package chunked

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

// TestListAcrossChunks appends over several chunks, keeps a pointer taken
// before the list grew, deletes every third element and appends again.
func TestListAcrossChunks(t *testing.T) {
	const n = 3*Size + 7
	var l List[int]
	var first *int
	for i := range n {
		if got := l.Append(i); got != i {
			t.Fatalf("Append returned %d, want %d", got, i)
		}
		if i == 0 {
			first = l.At(0)
		}
	}
	if first != l.At(0) || *first != 0 {
		t.Fatal("a pointer to an element moved while the list grew")
	}
	l.DeleteFunc(func(v *int) bool { return *v%3 == 0 })
	if want := n - (n+2)/3; l.Len() != want {
		t.Fatalf("%d elements left, want %d", l.Len(), want)
	}
	k := 0
	for i := range n {
		if i%3 == 0 {
			continue
		}
		if *l.At(k) != i {
			t.Fatalf("element %d is %d, want %d", k, *l.At(k), i)
		}
		k++
	}
	if len(l.chunks) != (l.Len()+Size-1)/Size {
		t.Errorf("%d chunks kept for %d elements", len(l.chunks), l.Len())
	}
	l.Append(-1)
	if *l.At(l.Len() - 1) != -1 {
		t.Error("append after delete lost the element")
	}
	seen := 0
	for i, v := range l.All() {
		if v != l.At(i) {
			t.Fatalf("All yields %d out of place", i)
		}
		seen++
	}
	if seen != l.Len() {
		t.Errorf("All yields %d of %d", seen, l.Len())
	}
}

// TestStringsKeepsEachString: strings of every length, the empty one, one
// longer than a block, and runs sharing prefixes, come back in order, and
// paths in walk order take a few bytes each.
func TestStringsKeepsEachString(t *testing.T) {
	var l Strings
	var want []string
	for i := range 5000 {
		s := strings.Repeat("é", i%97)
		switch {
		case i == 4000:
			s = strings.Repeat("x", 3*defaultBlockSize)
		case i%5 == 0:
			s = fmt.Sprintf("Sammlung %02d/Band %04d/Datei %05d.txt", i/1000, i/100, i)
		}
		l.Append(s)
		want = append(want, s)
	}
	var got []string
	for s := range l.All() {
		got = append(got, s)
	}
	if l.Len() != len(want) || !slices.Equal(got, want) {
		t.Fatalf("%d strings (Len %d) come back, want %d the same", len(got), l.Len(), len(want))
	}
	var paths Strings
	for i := range 10000 {
		paths.Append(fmt.Sprintf("Sammlung %02d/Band %04d/Datei %05d.txt", i/1000, i/100, i))
	}
	if size := len(paths.blocks[0]); size > 10000*12 {
		t.Errorf("10,000 paths in walk order take %d bytes", size)
	}
}

// TestStringsSpillsFullBlocks: with a Spill, full blocks move into the
// file, one block stays in memory, and the strings come back in order;
// when the file cannot be made, or a write fails, the strings stay in
// memory; when it cannot be read back, All stops and Err says so.
func TestStringsSpillsFullBlocks(t *testing.T) {
	var want []string
	for i := range 3000 {
		s := fmt.Sprintf("Sammlung %02d/Band %04d/Datei %05d.txt", i/1000, i/100, i)
		if i == 2000 {
			s = strings.Repeat("y", 1000)
		}
		want = append(want, s)
	}
	fill := func(l *Strings) {
		for _, s := range want {
			l.Append(s)
		}
	}
	check := func(t *testing.T, l *Strings) {
		t.Helper()
		got := slices.Collect(l.All())
		if err := l.Err(); err != nil || !slices.Equal(got, want) {
			t.Fatalf("%d strings come back (%v), want %d the same", len(got), err, len(want))
		}
	}
	t.Run("spilled", func(t *testing.T) {
		f := &memFile{}
		l := Strings{BlockSize: 64, Spill: func() (File, error) { return f, nil }}
		fill(&l)
		if len(l.blocks) != 1 || len(f.data) == 0 {
			t.Errorf("%d blocks in memory and %d bytes in the file, want 1 and some", len(l.blocks), len(f.data))
		}
		check(t, &l)
		check(t, &l)
		if l.Close(); !f.closed || l.Len() != 0 {
			t.Error("Close left the file open or the list full")
		}
	})
	t.Run("no file", func(t *testing.T) {
		l := Strings{BlockSize: 64, Spill: func() (File, error) { return nil, errors.New("no room") }}
		fill(&l)
		check(t, &l)
	})
	t.Run("a write fails", func(t *testing.T) {
		f := &memFile{failWrite: 10}
		l := Strings{BlockSize: 64, Spill: func() (File, error) { return f, nil }}
		fill(&l)
		if len(l.blocks) < 2 {
			t.Errorf("%d blocks in memory after the file refused a block", len(l.blocks))
		}
		check(t, &l)
	})
	t.Run("the file cannot be read", func(t *testing.T) {
		f := &memFile{failRead: true}
		l := Strings{BlockSize: 64, Spill: func() (File, error) { return f, nil }}
		fill(&l)
		if got := slices.Collect(l.All()); len(got) != 0 || l.Err() == nil {
			t.Errorf("All yields %d strings and Err is %v, want none and the read's error", len(got), l.Err())
		}
	})
}

// memFile is a File in memory that fails as asked.
type memFile struct {
	data      []byte
	writes    int
	failWrite int // the one write that fails; 0: none
	failRead  bool
	closed    bool
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	if f.writes++; f.writes == f.failWrite {
		return 0, errors.New("disk full")
	}
	if end := int(off) + len(p); end > len(f.data) {
		f.data = append(f.data, make([]byte, end-len(f.data))...)
	}
	return copy(f.data[off:], p), nil
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if f.failRead {
		return 0, errors.New("input/output error")
	}
	if off >= int64(len(f.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Close() error { f.closed = true; return nil }
