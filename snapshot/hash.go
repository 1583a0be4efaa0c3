package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"

	"github.com/rsgen/rsgen/rs"
)

// hasher reads files once, feeding every published digest from the same
// buffer, and SHA-256, the fingerprint, whether published or not: with the
// default digests each byte is hashed once. One hasher belongs to one
// worker and is reused for every file it reads.
type hasher struct {
	digests *Digester
	buf     []byte
	head    [512]byte // the first bytes of a file, to sniff its type
}

func newHasher(algs []rs.HashAlgorithm) *hasher {
	if !slices.Contains(algs, rs.SHA256) {
		algs = append(slices.Clip(algs), rs.SHA256)
	}
	return &hasher{digests: NewDigester(algs), buf: make([]byte, 256<<10)}
}

// ErrChangedWhileReading is returned when a file's length disagrees with
// its size before the read, or its size or mtime moved during the read: it
// was written to while rsgen read it. The scan reads such a file again, up
// to MaxReads times in all, before it fails.
var ErrChangedWhileReading = errors.New("file changed while it was read")

// MaxReads is how many times a file that changes while it is read is read
// before the scan gives up on it.
const MaxReads = 3

// Tee receives a copy of the bytes of each file that is read. It is called
// before the first byte and may return a nil writer when it wants no bytes;
// done is called after the last byte with the outcome of the read, while
// the file is still open, and its error fails the scan. r holds the file's
// stat, and after a successful read its fingerprint and digests too, and
// done may change it before it is compared with the previous record (the
// generator gives a resource it rewrites for publishing the length and
// digests of its published bytes, see Record.SetPublished); isNew says
// the previous state has no record of its path; f is the open file (a
// Linker when it comes from a Tree: what done links is what was read).
type Tee func(r *Record, isNew bool, f fs.File) (w io.Writer, done func(ok bool) error, err error)

// Tees makes the Tee of each read job of a scan: the files of one folder
// that one worker reads, one after the other. The job calls end once it is
// done with its files, whether or not it read them all.
type Tees func() (tee Tee, end func())

// TeeError is how the scan fails when a Tee failed on the file at source
// path Path: the error is the Tee's (of the output it writes, a full disk
// say), not the file's, so the scan neither takes it for a file removed or
// unreadable nor names the source file as its cause; the caller says
// where the Tee was writing.
type TeeError struct {
	Path string
	Err  error
}

func (e *TeeError) Error() string { return "copy of " + e.Path + ": " + e.Err.Error() }
func (e *TeeError) Unwrap() error { return e.Err }

// hashFile reads the file at r.Path in fsys, filling in r's fingerprint,
// digests and, when the name says nothing, its media type. r.Size must
// hold the size from stat.
func (h *hasher) hashFile(ctx context.Context, fsys fs.FS, r *Record, isNew bool, tee Tee) (err error) {
	f, err := fsys.Open(r.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	// The record describes the file as opened, and the same stat after
	// the read proves nobody wrote to it meanwhile.
	before, err := f.Stat()
	if err != nil {
		return err
	}
	if !before.Mode().IsRegular() {
		return fmt.Errorf("%w: no longer a regular file (%s)", ErrChangedWhileReading, before.Mode().Type())
	}
	r.SetStat(before)
	h.digests.Reset()
	var sink io.Writer
	var done func(bool) error
	if tee != nil {
		if sink, done, err = tee(r, isNew, f); err != nil {
			return &TeeError{Path: r.Path, Err: err}
		}
		defer func() {
			if derr := done(err == nil); err == nil && derr != nil {
				err = &TeeError{Path: r.Path, Err: derr}
			}
		}()
	}
	// Reading one byte past the size the stat gave ends a file of that
	// size without a read that only reports the end, and shows one that
	// grew; the stat after the read shows any other change.
	var n int64
	var head []byte
	for n <= r.Size {
		if err := ctx.Err(); err != nil {
			return err // a file of gigabytes is no reason to ignore an interrupt
		}
		k, rerr := f.Read(h.buf[:min(int64(len(h.buf)), r.Size-n+1)])
		if k > 0 {
			chunk := h.buf[:k]
			if head == nil && r.Type() == "" {
				head = h.head[:copy(h.head[:], chunk)]
			}
			h.digests.Write(chunk)
			if sink != nil {
				if _, werr := sink.Write(chunk); werr != nil {
					return &TeeError{Path: r.Path, Err: werr}
				}
			}
			n += int64(k)
		}
		if rerr == io.EOF || (rerr == nil && n == r.Size) {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	if n != r.Size {
		return fmt.Errorf("%w: stat said %d bytes, read %d", ErrChangedWhileReading, r.Size, n)
	}
	after, err := f.Stat()
	if err != nil {
		return err
	}
	if after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
		return fmt.Errorf("%w: its size or modification time changed during the read", ErrChangedWhileReading)
	}
	r.Digests = h.digests.Digests()
	r.SetFingerprint(r.Digests.SHA256)
	if r.Type() == "" {
		r.SetType(sniffType(head))
	}
	return nil
}
