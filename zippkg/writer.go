package zippkg

import (
	"archive/zip"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"time"
)

// Writer writes one package: manifest.xml first, then the bitstreams in
// manifest order, each added with Add (read and verified). Close finishes
// the ZIP. A Writer holds one
// entry's buffers and the manifest's entry list, never a bitstream.
//
// After an error every later call returns that error; the bytes written so
// far are not a valid package.
type Writer struct {
	zw      *zip.Writer
	m       *Manifest
	next    int // index in m.Entries of the next bitstream
	opts    *Options
	comp    *compressor
	verify  verifier
	buf     []byte
	err     error
	closed  bool
	modTime time.Time
}

// NewWriter validates m, then starts a package on w by writing its
// manifest.xml. opts may be nil. The caller writes to a temporary file and
// renames it into place once Close succeeds; NewWriter never closes w.
func NewWriter(w io.Writer, m *Manifest, opts *Options) (*Writer, error) {
	if err := m.validate(); err != nil {
		return nil, err
	}
	comp, err := newCompressor(opts.level())
	if err != nil {
		return nil, err
	}
	pw := &Writer{zw: zip.NewWriter(w), m: m, opts: opts, comp: comp, buf: make([]byte, 256<<10), modTime: m.time()}
	if err := pw.writeManifest(); err != nil {
		return nil, err
	}
	return pw, nil
}

func (w *Writer) writeManifest() error {
	fh := newHeader(ManifestName, zip.Deflate, w.modTime)
	raw, err := w.zw.CreateRaw(fh)
	if err != nil {
		return fmt.Errorf("zippkg: write %s: %w", ManifestName, err)
	}
	if err := w.comp.reset(raw, zip.Deflate); err != nil {
		return err
	}
	if err := w.m.write(w.comp); err != nil {
		return err
	}
	return w.finishEntry(fh, ManifestName)
}

// Add streams the next bitstream of the manifest, which must be at path,
// from r into the package, recomputing its length and every digest of its
// manifest hash on the way. A difference is a *ChangedError (ErrChanged):
// the file changed since it was scanned. Add reads r to its end and at most
// one byte past the manifest length; it does not close r.
func (w *Writer) Add(path string, r io.Reader) error {
	return w.add(path, r, true)
}

// add is Add, which checks r's digests only with verify.
func (w *Writer) add(path string, r io.Reader, verify bool) error {
	e, err := w.take(path)
	if err != nil {
		return err
	}
	want, err := wanted(e, verify)
	if err != nil {
		return w.fail(fmt.Errorf("zippkg: add %s: %w", path, err))
	}
	fh, err := w.startEntry(e)
	if err != nil {
		return err
	}
	w.verify.reset(want)
	dst := teeWriter{&w.verify, w.comp}
	if _, err := io.CopyBuffer(dst, io.LimitReader(r, e.Length+1), w.buf); err != nil {
		return w.fail(fmt.Errorf("zippkg: add %s: %w", path, err))
	}
	if err := w.verify.check(e); err != nil {
		return w.fail(err)
	}
	return w.finishEntry(fh, path)
}

// Close checks that every bitstream of the manifest was added and writes
// the ZIP central directory. It does not close the underlying writer.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	if e := w.peek(); e != nil {
		return w.fail(fmt.Errorf("zippkg: close: bitstream %s was not added", e.Path))
	}
	if err := w.zw.Close(); err != nil {
		return w.fail(fmt.Errorf("zippkg: close: %w", err))
	}
	return nil
}

// Write writes the whole package of m to w, opening each bitstream with
// open, in manifest order, and closing it after use. It is NewWriter, Add
// and Close in one call, but for the small bitstreams, which it compresses
// ahead on a worker per core (see prefetchMax): open must be safe for
// concurrent use. A bitstream open returns wrapped in Vouched has its
// length checked, not its digests. It stops with ctx's error within one read of a
// bitstream once ctx is done: a package of gigabytes is no reason to
// ignore an interrupt.
func Write(ctx context.Context, w io.Writer, m *Manifest, opts *Options, open func(e *Entry) (io.ReadCloser, error)) error {
	pw, err := NewWriter(w, m, opts)
	if err != nil {
		return err
	}
	ahead := prefetch(ctx, m, opts, open)
	defer ahead.close()
	for i := range m.Entries {
		e := &m.Entries[i]
		if !e.hasBitstream() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if c := ahead.next(); c != nil {
			err = pw.addCompressed(e.Path, c)
			ahead.recycle(c.data)
		} else {
			err = addOpened(ctx, pw, e, open)
		}
		if err != nil {
			return err
		}
	}
	return pw.Close()
}

func addOpened(ctx context.Context, pw *Writer, e *Entry, open func(e *Entry) (io.ReadCloser, error)) error {
	r, err := open(e)
	if err != nil {
		return fmt.Errorf("zippkg: open %s: %w", e.Path, err)
	}
	err = pw.add(e.Path, ctxReader{ctx, r}, !isVouched(r))
	if cerr := r.Close(); err == nil && cerr != nil {
		return fmt.Errorf("zippkg: close %s: %w", e.Path, cerr)
	}
	return err
}

// peek returns the next manifest entry with a bitstream, or nil.
func (w *Writer) peek() *Entry {
	for ; w.next < len(w.m.Entries); w.next++ {
		if e := &w.m.Entries[w.next]; e.hasBitstream() {
			return e
		}
	}
	return nil
}

// take returns the next bitstream's entry, which must be at path.
func (w *Writer) take(path string) (*Entry, error) {
	if w.err != nil {
		return nil, w.err
	}
	if w.closed {
		return nil, fmt.Errorf("zippkg: add %s: writer closed", path)
	}
	e := w.peek()
	switch {
	case e == nil:
		return nil, w.fail(fmt.Errorf("zippkg: add %s: not in the manifest, or added already", path))
	case e.Path != path:
		return nil, w.fail(fmt.Errorf("zippkg: add %s: the manifest has %s next", path, e.Path))
	}
	w.next++
	return e, nil
}

func (w *Writer) startEntry(e *Entry) (*zip.FileHeader, error) {
	method := w.opts.method(e.Type)
	fh := newHeader(e.Path[1:], method, w.entryTime(e))
	raw, err := w.zw.CreateRaw(fh)
	if err != nil {
		return nil, w.fail(fmt.Errorf("zippkg: add %s: %w", e.Path, err))
	}
	if err := w.comp.reset(raw, method); err != nil {
		return nil, w.fail(fmt.Errorf("zippkg: add %s: %w", e.Path, err))
	}
	return fh, nil
}

func (w *Writer) finishEntry(fh *zip.FileHeader, path string) error {
	crc, compressed, size, err := w.comp.finish()
	if err != nil {
		return w.fail(fmt.Errorf("zippkg: add %s: %w", path, err))
	}
	setSizes(fh, crc, compressed, size)
	return nil
}

func (w *Writer) entryTime(e *Entry) time.Time {
	if e.Lastmod.IsZero() {
		return w.modTime
	}
	return e.Lastmod
}

func (w *Writer) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return w.err
}

// newHeader returns the header of an entry whose CRC-32 and sizes follow
// its data in a data descriptor (flag bit 3), as archive/zip writes them
// when it compresses: every entry, stored or deflated, has the same
// layout. The fields are those archive/zip's CreateHeader would set, set
// explicitly because CreateRaw leaves them to the caller: Unix mode 0644,
// version 2.0, the UTF-8 flag for non-ASCII names, and the modification
// time both as MS-DOS date and time and as an extended-timestamp extra
// field, in UTC.
func newHeader(name string, method uint16, mod time.Time) *zip.FileHeader {
	const (
		dataDescriptor = 0x8
		utf8Name       = 0x800
		version20      = 20
	)
	fh := &zip.FileHeader{Name: name, Method: method, Flags: dataDescriptor}
	fh.SetMode(0o644)
	fh.CreatorVersion |= version20
	fh.ReaderVersion = version20
	if !isASCII(name) {
		fh.Flags |= utf8Name
	}
	t := zipTime(mod)
	// The deprecated MS-DOS fields, not Modified: with Modified set,
	// archive/zip adds an extended timestamp of its own; these fields and
	// the extra field below are written exactly as given.
	fh.ModifiedDate, fh.ModifiedTime = msDosDateTime(t)
	fh.Extra = extendedTimestamp(t)
	return fh
}

// setSizes records an entry's CRC-32 and sizes in fh once its data is
// written. archive/zip keeps fh (CreateRaw stores its argument) and reads
// these fields when it writes the data descriptor, at the next entry or at
// Close, and the central directory.
func setSizes(fh *zip.FileHeader, crc uint32, compressed, size int64) {
	const version45 = 45 // ZIP64
	fh.CRC32 = crc
	fh.CompressedSize64, fh.UncompressedSize64 = uint64(compressed), uint64(size)
	// CreateRaw writes the 32-bit fields as given: they must be set too,
	// saturated where Zip64 takes over.
	fh.CompressedSize = uint32(min(fh.CompressedSize64, uint32max))
	fh.UncompressedSize = uint32(min(fh.UncompressedSize64, uint32max))
	if fh.CompressedSize == uint32max || fh.UncompressedSize == uint32max {
		fh.ReaderVersion = version45
	}
}

const uint32max = 1<<32 - 1

// The times a ZIP entry can carry both as an MS-DOS date (from 1980) and as
// an unsigned 32-bit Unix time (to 2106).
var (
	minZipTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	maxZipTime = time.Unix(uint32max, 0).UTC()
)

func zipTime(t time.Time) time.Time {
	t = t.UTC().Truncate(time.Second)
	switch {
	case t.Before(minZipTime):
		return minZipTime
	case t.After(maxZipTime):
		return maxZipTime
	}
	return t
}

func msDosDateTime(t time.Time) (date, tm uint16) {
	date = uint16(t.Day() + int(t.Month())<<5 + (t.Year()-1980)<<9)
	tm = uint16(t.Second()/2 + t.Minute()<<5 + t.Hour()<<11)
	return date, tm
}

// extendedTimestamp returns the Info-ZIP extended-timestamp extra field
// (0x5455) with the modification time only, the same in local and central
// headers.
func extendedTimestamp(t time.Time) []byte {
	b := make([]byte, 9)
	binary.LittleEndian.PutUint16(b[0:], 0x5455)
	binary.LittleEndian.PutUint16(b[2:], 5)
	b[4] = 1 // flags: modification time present
	binary.LittleEndian.PutUint32(b[5:], uint32(t.Unix()))
	return b
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// teeWriter writes to the verifier, which never fails, then to the
// compressor.
type teeWriter struct {
	v *verifier
	c *compressor
}

func (t teeWriter) Write(p []byte) (int, error) {
	t.v.Write(p)
	return t.c.Write(p)
}

// ctxReader is a reader that fails with its context's error once the
// context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
