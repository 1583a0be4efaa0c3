package generator

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
	"github.com/rsgen/rsgen/zippkg"
)

// sources opens the bytes a build publishes of a resource beyond the
// resource itself, into dump packages and kept versions: its source file,
// read through the Tree src as the scan that started at scanStart found
// it, or its published copy, through the sink w, when html_link rewrote
// it (see htmllink.go).
type sources struct {
	s         *site
	w         *sink.Sink
	src       *snapshot.Tree
	scanStart int64
}

// openBitstream opens the source file of a manifest entry, or its
// published copy when that differs from the source (see htmllink.go).
//
// A source file whose stat, once opened, is still the one it had when the
// scan took its digests, by the rule the scan trusts a file by
// (Record.Describes), is vouched for (zippkg.Vouched): packaging does not hash it again, and
// checks its stat once more when it closes it, so that a write while it
// was read fails the package. Every other file is hashed again and checked
// against the manifest. Without this, a dump made every byte hashed three
// times: by the scan, by packaging's check, and into the package's digest.
func (in sources) openBitstream(e *zippkg.Entry, streams bitstreams) (io.ReadCloser, error) {
	bs, ok := streams[e.Path]
	if !ok {
		return nil, fmt.Errorf("no source file for %s in the package", e.Path)
	}
	if in.s.rewrites(bs.src) {
		return os.Open(in.w.Current(in.w.Path(bs.src)))
	}
	f, err := in.src.Open(bs.src)
	if err != nil {
		return nil, goneSinceScan(bs.src, err)
	}
	if _, same, err := isScanned(f, bs.stat, in.scanStart); err != nil || !same {
		if err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
	return zippkg.Vouched(&vouchedFile{File: f, path: e.Path, scanned: bs.stat, scanStart: in.scanStart}), nil
}

// copyVersion copies the current version of r into w: the published form
// of a rewritten resource (html_link), else its source file. A source file
// still the one the scan hashed (isScanned) is copied without being hashed
// again, as packaging copies it, and its stat is checked once more after
// the copy; any other file is hashed and compared with r's length and
// SHA-256. Either way, bytes other than the scanned ones fail the build.
func (in sources) copyVersion(w io.Writer, r *snapshot.Record) error {
	changed := fmt.Errorf("%s changed since it was scanned; build again", r.Path)
	var f fs.File
	var err error
	if r.Rewritten {
		f, err = os.Open(in.w.Current(in.w.Path(r.Path)))
	} else if f, err = in.src.Open(r.Path); err != nil {
		err = goneSinceScan(r.Path, err)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	same := false
	if !r.Rewritten {
		if _, same, err = isScanned(f, r.Stat(), in.scanStart); err != nil {
			return err
		}
	}
	if same {
		n, err := io.Copy(w, f)
		if err != nil {
			return err
		}
		if _, still, err := isScanned(f, r.Stat(), in.scanStart); err != nil || !still || n != r.Size {
			return errors.Join(err, changed)
		}
		return nil
	}
	got, err := copyMeasured(w, f)
	if err == nil && !versionSums(r).match(got) {
		err = changed
	}
	return err
}

// versionSums returns what identifies the bytes of a kept version: its
// length and the SHA-256 of its published bytes (zero when unknown: a
// rewritten resource without a published SHA-256, or a record migrated
// without one).
func versionSums(v *snapshot.Record) sums {
	s := sums{size: v.Size}
	s.sha256, _ = v.PublishedSHA256()
	return s
}

// isScanned reports whether the open file f still is the one whose stat,
// want, the scan that started at scanStart took with its digests
// (Record.Describes), and returns its stat: such a file's bytes are the
// ones the scan hashed, and need not be hashed again.
func isScanned(f fs.File, want snapshot.Stat, scanStart int64) (snapshot.Stat, bool, error) {
	info, err := f.Stat()
	if err != nil {
		return snapshot.Stat{}, false, err
	}
	got := snapshot.StatOf(info)
	return got, want.Describes(got, scanStart), nil
}

// nanoTime formats a modification time in nanoseconds since the epoch.
func nanoTime(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339Nano) }

// vouchedFile is a source file packaged without being hashed again: Close
// checks that its stat still is the one the scan saw.
type vouchedFile struct {
	fs.File
	path      string // in the manifest
	scanned   snapshot.Stat
	scanStart int64
}

func (f *vouchedFile) Close() error {
	got, same, err := isScanned(f.File, f.scanned, f.scanStart)
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	want := f.scanned
	switch {
	case same:
		return nil
	case got.Size != want.Size:
		return &zippkg.ChangedError{Path: f.path, What: "length", Want: fmt.Sprint(want.Size), Got: fmt.Sprint(got.Size)}
	case got.Inode != want.Inode:
		return &zippkg.ChangedError{Path: f.path, What: "inode", Want: fmt.Sprint(want.Inode), Got: fmt.Sprint(got.Inode)}
	}
	return &zippkg.ChangedError{Path: f.path, What: "modification time", Want: nanoTime(want.ModTime), Got: nanoTime(got.ModTime)}
}
