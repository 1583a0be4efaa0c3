package snapshot

import (
	"fmt"
	"testing"
)

// TestRecordsAcrossChunks appends records over several chunks, keeps a
// pointer taken before the growth, deletes every third record and finds
// the others by path.
func TestRecordsAcrossChunks(t *testing.T) {
	const n = 3*recordsPerChunk + 7
	var rs Records
	name := func(i int) string { return fmt.Sprintf("f%05d", i) }
	first := (*Record)(nil)
	for i := range n {
		if got := rs.Append(Record{Path: name(i), Size: int64(i)}); got != i {
			t.Fatalf("Append returned %d, want %d", got, i)
		}
		if i == 0 {
			first = rs.At(0)
		}
	}
	if first != rs.At(0) || first.Path != name(0) {
		t.Fatal("a pointer to a record moved while records were appended")
	}
	rs.DeleteFunc(func(r *Record) bool { return r.Size%3 == 0 })
	if want := n - (n+2)/3; rs.Len() != want {
		t.Fatalf("%d records left, want %d", rs.Len(), want)
	}
	k := 0
	for i := range n {
		r := rs.Find(name(i))
		if i%3 == 0 {
			if r != nil {
				t.Errorf("deleted %s found", name(i))
			}
			continue
		}
		if r == nil || r.Size != int64(i) || rs.At(k) != r {
			t.Fatalf("record %s: found %v at %d", name(i), r, k)
		}
		k++
	}
	if len(rs.chunks) != (rs.Len()+recordsPerChunk-1)/recordsPerChunk {
		t.Errorf("%d chunks kept for %d records", len(rs.chunks), rs.Len())
	}
	rs.Append(Record{Path: "zz"})
	if rs.At(rs.Len()-1).Path != "zz" || rs.Find("zz") == nil {
		t.Error("append after delete lost the record")
	}
}
