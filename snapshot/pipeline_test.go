package snapshot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/rsgen/rsgen/internal/chunked"
	"github.com/rsgen/rsgen/rs"
)

// TestDecodeAheadYieldsTheSequence: the records decoded ahead are those of
// the sequence, in order, then its error, once, then the end, over many
// more batches than are held ahead (the batches emptied are refilled);
// stopped early, the goroutine that decodes them ends.
func TestDecodeAheadYieldsTheSequence(t *testing.T) {
	const n = 5*(aheadBatches+2)*aheadBatch + 5
	failure := errors.New("the disk failed")
	seq := func(yield func(Record, error) bool) {
		for i := range n {
			if !yield(Record{Path: fmt.Sprintf("f%05d", i)}, nil) {
				return
			}
		}
		yield(Record{}, failure)
	}
	next, stop := decodeAhead(seq)
	for i := range n {
		r, err, ok := next()
		if !ok || err != nil || r.Path != fmt.Sprintf("f%05d", i) {
			t.Fatalf("record %d: %v, %v, %v", i, r.Path, err, ok)
		}
	}
	if _, err, ok := next(); !ok || !errors.Is(err, failure) {
		t.Errorf("after the records: %v, %v; want the error", err, ok)
	}
	if _, err, ok := next(); ok || err != nil {
		t.Errorf("after the error: %v, %v; want the end", err, ok)
	}
	stop()

	next, stop = decodeAhead(seq)
	next()
	stop() // returns once the goroutine ended: it no longer sends
}

// TestVisitErrorEndsTheScan: Visit, called in walk order on the settler's
// goroutine, sees every record of the results once, with its index, and
// its error ends the scan with that error.
func TestVisitErrorEndsTheScan(t *testing.T) {
	const n = 2*chunked.Size + 10
	src := spillTree(t, n)
	opts := ScanOptions{FS: os.DirFS(src), Algorithms: []rs.HashAlgorithm{rs.SHA256}}
	seen := 0
	opts.Visit = func(i int, r *Record) error {
		if i != seen {
			return fmt.Errorf("record %s visited at %d, want %d", r.Path, i, seen)
		}
		seen++
		return nil
	}
	recs, _, _, err := Scan(context.Background(), &State{}, opts)
	if err != nil || seen != n || recs.Len() != n {
		t.Fatalf("visited %d of %d records: %v", seen, recs.Len(), err)
	}
	stopped := errors.New("enough")
	opts.Visit = func(i int, r *Record) error {
		if i == chunked.Size+3 {
			return stopped
		}
		return nil
	}
	if _, _, _, err := Scan(context.Background(), &State{}, opts); !errors.Is(err, stopped) {
		t.Errorf("scan with a failing Visit: %v, want its error", err)
	}
}
