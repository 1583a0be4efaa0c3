package snapshot

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rsgen/rsgen/rs"
)

// flakyFS serves a MapFS in which the first `changes` reads of flaky.txt
// return more bytes than its stat says: a file being written while it is
// read.
type flakyFS struct {
	fstest.MapFS
	changes, opens int
}

func (f *flakyFS) Open(name string) (fs.File, error) {
	file, err := f.MapFS.Open(name)
	if err != nil || name != "flaky.txt" {
		return file, err
	}
	f.opens++
	if f.opens > f.changes {
		return file, nil
	}
	return &growingFile{File: file}, nil
}

type growingFile struct {
	fs.File
	grown bool
}

// Read appends a byte to the first read that reaches the end of the
// data: the file grew by the time the read got there.
func (g *growingFile) Read(p []byte) (int, error) {
	n, err := g.File.Read(p)
	if !g.grown && n < len(p) {
		g.grown = true
		p[n] = 'x'
		return n + 1, nil
	}
	return n, err
}

// TestRereadChangingFile: a file that changes while it is read is read
// again, up to MaxReads times, and then fails the scan naming it; the
// digests published are always those of bytes that match the length.
func TestRereadChangingFile(t *testing.T) {
	content := []byte("stable at last\n")
	for changes := 0; changes <= MaxReads; changes++ {
		fsys := &flakyFS{MapFS: fstest.MapFS{"flaky.txt": {Data: content}, "other.txt": {Data: []byte("o")}}, changes: changes}
		files, _, _, err := scanRecords(context.Background(), &State{}, ScanOptions{FS: fsys, Algorithms: []rs.HashAlgorithm{rs.SHA256}, Workers: 1})
		if changes < MaxReads {
			if err != nil {
				t.Fatalf("%d changes: %v", changes, err)
			}
			if fsys.opens != changes+1 {
				t.Errorf("%d changes: read %d times, want %d", changes, fsys.opens, changes+1)
			}
			if got := files[0].Digests.SHA256; got != sha256.Sum256(content) || files[0].Size != int64(len(content)) {
				t.Errorf("%d changes: published digest or length is not of the stable content", changes)
			}
			continue
		}
		var pe *PathError
		if !errors.As(err, &pe) || pe.Path != "flaky.txt" || !errors.Is(err, ErrChangedWhileReading) || !strings.Contains(err.Error(), "read 3 times") {
			t.Errorf("%d changes: err = %v, want ErrChangedWhileReading naming flaky.txt after 3 reads", changes, err)
		}
		if fsys.opens != MaxReads {
			t.Errorf("read %d times, want %d", fsys.opens, MaxReads)
		}
	}
}

// vanishingFS lists gone.txt in its folder but cannot open it: a file
// removed between the walk's reading of its folder and the read.
type vanishingFS struct{ fstest.MapFS }

func (v vanishingFS) Open(name string) (fs.File, error) {
	if name == "gone.txt" {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return v.MapFS.Open(name)
}

// TestFileRemovedBeforeItsRead: a file new to the state is not stat'ed by
// the walk, only opened by a worker; when it is gone by then, it is left
// out, as a file gone before its stat is, and the scan goes on.
func TestFileRemovedBeforeItsRead(t *testing.T) {
	fsys := vanishingFS{fstest.MapFS{"gone.txt": {Data: []byte("g")}, "kept.txt": {Data: []byte("k")}}}
	files, _, stats, err := scanRecords(context.Background(), &State{}, ScanOptions{FS: fsys, Algorithms: []rs.HashAlgorithm{rs.SHA256}, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Path != "kept.txt" || stats.Files != 1 || stats.Hashed != 1 {
		t.Errorf("files %+v, stats %+v; want only kept.txt", files, stats)
	}
}
