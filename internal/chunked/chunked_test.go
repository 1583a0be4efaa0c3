package chunked

import (
	"fmt"
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
			s = strings.Repeat("x", 3*blockSize)
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
