package zippkg

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
)

// TestWriteEqualsAddOneByOne: a package that Write makes, compressing its
// small bitstreams ahead, has the bytes of the same package made by Add
// one bitstream at a time, with bitstreams on both sides of prefetchMax,
// stored and deflated, whatever the number of workers.
func TestWriteEqualsAddOneByOne(t *testing.T) {
	tree := sampleTree()
	tree["/big/text.txt"] = testFile{bytes.Repeat([]byte("a line of text\n"), 3*prefetchMax/15), "text/plain"}
	tree["/big/photo.jpg"] = testFile{pseudoRandom(9, prefetchMax+1), "image/jpeg"}
	tree["/big/just.txt"] = testFile{bytes.Repeat([]byte("x"), prefetchMax), "text/plain"}
	m := resourceManifest(tree)
	var one bytes.Buffer
	w, err := NewWriter(&one, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range m.Entries {
		if err := w.Add(e.Path, bytes.NewReader(tree[e.Path].data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{0, 1, 3} {
		if got := writePackage(t, m, &Options{Workers: workers}, memOpen(tree)); !bytes.Equal(got, one.Bytes()) {
			t.Errorf("Write with %d workers made %d bytes that differ from Add's %d", workers, len(got), one.Len())
		}
	}
	checkPackage(t, one.Bytes(), m, func(e *Entry) []byte { return tree[e.Path].data })
}

// TestWriteClosesWhatItOpenedAhead: when a bitstream cannot be opened,
// Write fails naming it, and every bitstream it opened, ahead or not, is
// closed when it returns.
func TestWriteClosesWhatItOpenedAhead(t *testing.T) {
	tree := sampleTree()
	m := resourceManifest(tree)
	bad := m.Entries[2].Path
	var open atomic.Int64
	err := Write(context.Background(), io.Discard, m, nil, func(e *Entry) (io.ReadCloser, error) {
		if e.Path == bad {
			return nil, errors.New("permission denied")
		}
		open.Add(1)
		return closer{bytes.NewReader(tree[e.Path].data), &open}, nil
	})
	if err == nil || !strings.Contains(err.Error(), "open "+bad) {
		t.Fatalf("Write: %v; want the failure to open %s", err, bad)
	}
	if n := open.Load(); n != 0 {
		t.Errorf("%d bitstreams left open", n)
	}
}

type closer struct {
	io.Reader
	open *atomic.Int64
}

func (c closer) Close() error {
	c.open.Add(-1)
	return nil
}
