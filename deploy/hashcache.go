package deploy

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/rsgen/rsgen/layout"
)

// The files of the output, as a scan found them, are a file list: one
// line per file, sorted by output path in byte order, with the SHA-256
// and the stat the file had when it was read ("SHA-256 SIZE MTIME INODE
// PATH"), after a line with the format and the time the scan started,
// gzip-compressed at the fastest level of klauspost/compress (every deploy
// writes it whole). A scan streams it into the deploy's folder, and the
// plan reads it back in step with the manifest, so that neither is held
// in memory. The last complete scan's list is also the hash cache
// (deploy/hashes), which serves every target.

// hashCacheMagic starts a file list, with its format version.
const hashCacheMagic = "rsgen-deploy-hashes 1"

// fileListWriter writes a file list; files must come in increasing order
// of their paths.
type fileListWriter struct {
	zw    *gzip.Writer
	bw    *bufio.Writer
	order keyOrder
	line  []byte
}

func newFileListWriter(w io.Writer, scanStart int64) *fileListWriter {
	zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed) // a valid level: no error
	l := &fileListWriter{zw: zw, bw: bufio.NewWriterSize(zw, 64<<10)}
	fmt.Fprintf(l.bw, "%s %d\n", hashCacheMagic, scanStart)
	return l
}

func (l *fileListWriter) add(f *localFile) error {
	if err := l.order.next(f.rel); err != nil {
		return fmt.Errorf("file list: %w", err)
	}
	b := hex.AppendEncode(l.line[:0], f.sum[:])
	b = append(strconv.AppendInt(append(b, ' '), f.size, 10), ' ')
	b = append(strconv.AppendInt(b, f.mtime, 10), ' ')
	b = append(strconv.AppendUint(b, f.ino, 10), ' ')
	b = append(strconv.AppendQuote(b, f.rel), '\n')
	l.line = b
	_, err := l.bw.Write(b)
	return err
}

func (l *fileListWriter) close() error {
	if err := l.bw.Flush(); err != nil {
		return err
	}
	return l.zw.Close()
}

// fileListReader reads a file list, and checks its order.
type fileListReader struct {
	scanStart int64
	zr        *gzip.Reader
	sc        *bufio.Scanner
	order     keyOrder
}

func readFileList(r io.Reader) (*fileListReader, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() {
		return nil, errors.New("empty")
	}
	rest, ok := strings.CutPrefix(sc.Text(), hashCacheMagic+" ")
	if !ok {
		return nil, errors.New("not a file list of this version")
	}
	l := &fileListReader{zr: zr, sc: sc}
	if l.scanStart, err = strconv.ParseInt(rest, 10, 64); err != nil {
		return nil, err
	}
	return l, nil
}

// next returns the next file, or nil after the last.
func (l *fileListReader) next() (*localFile, error) {
	if !l.sc.Scan() {
		if err := l.sc.Err(); err != nil {
			return nil, err
		}
		return nil, l.zr.Close()
	}
	f := &localFile{}
	fl := fields{line: l.sc.Text()}
	f.sum = fl.sum()
	f.size, f.mtime, f.ino = fl.int(), fl.int(), uint64(fl.int())
	f.rel = fl.path()
	if fl.err != nil {
		return nil, fl.err
	}
	if err := l.order.next(f.rel); err != nil {
		return nil, err
	}
	return f, nil
}

// paths calls yield with the path of every file; it stops at the first
// error, which it returns through errp.
func (l *fileListReader) paths(errp *error) iter.Seq[string] {
	return func(yield func(string) bool) {
		for {
			f, err := l.next()
			if err != nil {
				*errp = err
			}
			if f == nil || !yield(f.rel) {
				return
			}
		}
	}
}

// openFileList opens the file list at path for reading.
func openFileList(path string) (*fileListReader, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	l, err := readFileList(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	return l, f, nil
}

// hashCache is the file list of the last complete scan, read in step with
// the output's walk (both are in the byte order of the paths), so that the
// next scan reads only the files whose stat changed, as a build trusts an
// unchanged stat.
type hashCache struct {
	list *fileListReader // nil once read to its end, or found unreadable
	file io.Closer       // nil when there is no cache
	// scanStart is when the scan that recorded the entries started
	// (Unix nanoseconds): a file modified at or after it may have changed
	// after it was read, within its mtime's resolution, and is read again
	// (git's "racy" case).
	scanStart int64
	head      *localFile // the next entry of list
}

// loadHashCache opens the cache at path. A missing or unreadable cache is
// an empty one: it only saves reading files again.
func loadHashCache(path string) *hashCache {
	list, f, err := openFileList(path)
	if err != nil {
		return &hashCache{}
	}
	c := &hashCache{list: list, file: f, scanStart: list.scanStart}
	c.advance()
	return c
}

func (c *hashCache) close() {
	if c.file != nil {
		c.file.Close()
	}
}

// advance reads the next entry; an unreadable one ends the cache.
func (c *hashCache) advance() {
	if c.list == nil {
		return
	}
	var err error
	if c.head, err = c.list.next(); c.head == nil || err != nil {
		c.list, c.head = nil, nil
	}
}

// lookup returns the cached SHA-256 of f, when its stat says it has not
// changed since it was read. Files must be looked up in increasing order
// of their paths.
func (c *hashCache) lookup(f *localFile) ([32]byte, bool) {
	for c.head != nil && c.head.rel < f.rel {
		c.advance()
	}
	e := c.head
	if e == nil || e.rel != f.rel || e.size != f.size || e.mtime != f.mtime || e.ino != f.ino || f.mtime >= c.scanStart {
		return [32]byte{}, false
	}
	return e.sum, true
}

// readFileIfExists returns the file's bytes, or nil when there is none.
func readFileIfExists(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// writeAtomic replaces the file at path with what fill writes, so that a
// reader, or a deploy killed meanwhile, sees the old file or the new one.
func writeAtomic(path string, fill func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), layout.TempPrefix+"*")
	if err != nil {
		return err
	}
	err = fill(tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// fields reads the space-separated fields of one line of the deploy's
// files, the last of which is a quoted path (strconv.Quote), so that any
// name fits. The first error sticks.
type fields struct {
	line string
	err  error
}

// next returns the next field.
func (f *fields) next() string {
	field, rest, ok := strings.Cut(f.line, " ")
	if !ok && f.err == nil {
		f.err = fmt.Errorf("line too short")
	}
	f.line = rest
	return field
}

func (f *fields) int() int64 {
	s := f.next()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil && f.err == nil {
		f.err = fmt.Errorf("bad number %q", s)
	}
	return n
}

func (f *fields) sum() [32]byte {
	s := f.next()
	sum, ok := parseSHA256(s)
	if !ok && f.err == nil {
		f.err = fmt.Errorf("bad digest %q", s)
	}
	return sum
}

// parseSHA256 reads a SHA-256 in hex. It checks the length first:
// hex.Decode panics on a longer string, which a store's metadata or a
// damaged file can hold.
func parseSHA256(s string) (sum [32]byte, ok bool) {
	if len(s) != hex.EncodedLen(len(sum)) {
		return sum, false
	}
	if _, err := hex.Decode(sum[:], []byte(s)); err != nil {
		return [32]byte{}, false
	}
	return sum, true
}

// path returns the rest of the line, unquoted: a clean output path.
func (f *fields) path() string {
	p, err := strconv.Unquote(f.line)
	if (err != nil || !layout.Clean(p)) && f.err == nil {
		f.err = fmt.Errorf("bad path %s", f.line)
	}
	return p
}
