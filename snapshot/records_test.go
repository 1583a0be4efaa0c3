package snapshot

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rsgen/rsgen/internal/chunked"
	"github.com/rsgen/rsgen/rs"
)

// at is rs.At for records in memory, which it cannot fail to read.
func at(t *testing.T, rs *Records, i int) *Record {
	t.Helper()
	r, err := rs.At(i)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// find is rs.Find for records in memory.
func find(t *testing.T, rs *Records, p string) *Record {
	t.Helper()
	r, err := rs.Find(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRecordsAcrossChunks appends records over several chunks, keeps a
// pointer taken before the growth, deletes every third record and finds
// the others by path.
func TestRecordsAcrossChunks(t *testing.T) {
	const n = 3*chunked.Size + 7
	var rs Records
	name := func(i int) string { return fmt.Sprintf("f%05d", i) }
	first := (*Record)(nil)
	for i := range n {
		if got := rs.Append(Record{Path: name(i), Size: int64(i)}); got != i {
			t.Fatalf("Append returned %d, want %d", got, i)
		}
		if i == 0 {
			first = at(t, &rs, 0)
		}
	}
	if first != at(t, &rs, 0) || first.Path != name(0) {
		t.Fatal("a pointer to a record moved while records were appended")
	}
	rs.DeleteFunc(func(r *Record) bool { return r.Size%3 == 0 })
	if want := n - (n+2)/3; rs.Len() != want {
		t.Fatalf("%d records left, want %d", rs.Len(), want)
	}
	k := 0
	for i := range n {
		r := find(t, &rs, name(i))
		if i%3 == 0 {
			if r != nil {
				t.Errorf("deleted %s found", name(i))
			}
			continue
		}
		if r == nil || r.Size != int64(i) || at(t, &rs, k) != r {
			t.Fatalf("record %s: found %v at %d", name(i), r, k)
		}
		k++
	}
	// (That emptied chunks are let go is tested in package chunked.)
	rs.Append(Record{Path: "zz"})
	if at(t, &rs, rs.Len()-1).Path != "zz" || find(t, &rs, "zz") == nil {
		t.Error("append after delete lost the record")
	}
}

// TestDigestsHas: a SHA-256 alone is held in place; any other set of
// digests, a zero SHA-256 included, says what it holds; a digest set on a
// copy leaves the original alone.
func TestDigestsHas(t *testing.T) {
	var d Digests
	if d.Has() != 0 {
		t.Errorf("empty digests have %b", d.Has())
	}
	sum := sha256.Sum256([]byte("x"))
	d.Set(rs.SHA256, sum[:])
	if d.Has() != 1<<rs.SHA256 || d.more != nil {
		t.Errorf("a SHA-256 alone: has %b, held out of line %v", d.Has(), d.more != nil)
	}
	c := d
	c.Set(rs.MD5, []byte{1})
	if d.Has() != 1<<rs.SHA256 || c.Has() != 1<<rs.SHA256|1<<rs.MD5 || c.Sum(rs.MD5)[0] != 1 || d.Sum(rs.MD5)[0] != 0 {
		t.Errorf("copy: original has %b, copy has %b", d.Has(), c.Has())
	}
	if !c.Equal(&c) || c.Equal(&d) {
		t.Error("Equal does not tell the copy from the original")
	}
	var z Digests
	z.Set(rs.SHA256, make([]byte, 32))
	if z.Has() != 1<<rs.SHA256 {
		t.Errorf("a zero SHA-256 is lost: has %b", z.Has())
	}
}

// TestPublishedSHA256: the SHA-256 of a record's published bytes is its
// fingerprint, or its published SHA-256 digest when html_link rewrote it
// (the fingerprint is then the source's) or no fingerprint is known; none
// without either.
func TestPublishedSHA256(t *testing.T) {
	source, published := sha256.Sum256([]byte("source")), sha256.Sum256([]byte("published"))
	withDigest := func(sum [32]byte) Digests {
		var d Digests
		d.Set(rs.SHA256, sum[:])
		return d
	}
	plain := Record{Digests: withDigest(source)}
	plain.SetFingerprint(source)
	md5Only := Record{}
	md5Only.Digests.Set(rs.MD5, []byte{1})
	md5Only.SetFingerprint(source)
	rewritten := md5Only
	rewritten.SetPublished(9, withDigest(published))
	rewrittenMD5 := md5Only
	rewrittenMD5.SetPublished(9, md5Only.Digests)
	migrated := Record{Digests: withDigest(source)} // no fingerprint
	for _, tc := range []struct {
		name string
		r    Record
		want [32]byte
		ok   bool
	}{
		{"as the source", plain, source, true},
		{"as the source, no SHA-256 published", md5Only, source, true},
		{"rewritten", rewritten, published, true},
		{"rewritten, no SHA-256 published", rewrittenMD5, [32]byte{}, false},
		{"no fingerprint", migrated, source, true},
		{"nothing known", Record{}, [32]byte{}, false},
	} {
		if got, ok := tc.r.PublishedSHA256(); got != tc.want || ok != tc.ok {
			t.Errorf("%s: %x, %v; want %x, %v", tc.name, got[:4], ok, tc.want[:4], tc.ok)
		}
	}
}

// TestColdScanEventsAreSizedOnce: a cold scan's events, one per file, are
// allocated at their size, not grown by appending (which copies them at
// the build's peak).
func TestColdScanEventsAreSizedOnce(t *testing.T) {
	dir := t.TempDir()
	for i := range 300 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", i)), []byte{byte(i)}, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, events, _, err := Scan(context.Background(), &State{}, ScanOptions{FS: os.DirFS(dir), Algorithms: []rs.HashAlgorithm{rs.SHA256}})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 300 || cap(events) != len(events) {
		t.Errorf("%d events with room for %d, want 300 and 300", len(events), cap(events))
	}
}
