package deploy

import (
	"bufio"
	"compress/gzip"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rsgen/rsgen/layout"
)

// hashCache remembers the SHA-256 of every output file with the stat it
// had when it was read (size, mtime, inode), so that the next deploy reads
// only the files whose stat changed, as a build trusts an unchanged stat.
// It lives in the state folder (deploy/hashes) and serves every target.
type hashCache struct {
	// scanStart is when the scan that recorded the entries started
	// (Unix nanoseconds): a file modified at or after it may have changed
	// after it was read, within its mtime's resolution, and is read again
	// (git's "racy" case).
	scanStart int64
	entries   map[string]cachedHash
}

type cachedHash struct {
	size, mtime int64
	ino         uint64
	sum         [32]byte
}

// hashCacheMagic starts the cache file, with its format version.
const hashCacheMagic = "rsgen-deploy-hashes 1"

// lookup returns the cached SHA-256 of f, when its stat says it has not
// changed since it was read.
func (c *hashCache) lookup(f *localFile) ([32]byte, bool) {
	e, ok := c.entries[f.rel]
	if !ok || e.size != f.size || e.mtime != f.mtime || e.ino != f.ino || f.mtime >= c.scanStart {
		return [32]byte{}, false
	}
	return e.sum, true
}

// loadHashCache reads the cache at path. A missing or unreadable cache is
// an empty one: it only saves reading files again.
func loadHashCache(path string) *hashCache {
	c := &hashCache{entries: map[string]cachedHash{}}
	f, err := os.Open(path)
	if err != nil {
		return c
	}
	defer f.Close()
	if err := c.decode(f); err != nil {
		return &hashCache{entries: map[string]cachedHash{}}
	}
	return c
}

func (c *hashCache) decode(r io.Reader) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() {
		return errors.New("empty")
	}
	rest, ok := strings.CutPrefix(sc.Text(), hashCacheMagic+" ")
	if !ok {
		return errors.New("not a hash cache of this version")
	}
	if c.scanStart, err = strconv.ParseInt(rest, 10, 64); err != nil {
		return err
	}
	for sc.Scan() {
		var e cachedHash
		var f fields
		f.line = sc.Text()
		e.sum = f.sum()
		e.size, e.mtime, e.ino = f.int(), f.int(), uint64(f.int())
		rel := f.path()
		if f.err != nil {
			return f.err
		}
		c.entries[rel] = e
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return zr.Close()
}

// saveHashCache replaces the cache at path with the files of a scan that
// started at scanStart.
func saveHashCache(path string, scanStart int64, files []*localFile) error {
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b *localFile) int { return strings.Compare(a.rel, b.rel) })
	return writeAtomic(path, func(w io.Writer) error {
		zw := gzip.NewWriter(w)
		bw := bufio.NewWriter(zw)
		fmt.Fprintf(bw, "%s %d\n", hashCacheMagic, scanStart)
		for _, f := range sorted {
			fmt.Fprintf(bw, "%x %d %d %d %s\n", f.sum, f.size, f.mtime, f.ino, strconv.Quote(f.rel))
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		return zw.Close()
	})
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

// readFileIfExists returns the file's bytes, or nil when there is none.
func readFileIfExists(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
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
	var sum [32]byte
	s := f.next()
	if n, err := hex.Decode(sum[:], []byte(s)); (err != nil || n != len(sum)) && f.err == nil {
		f.err = fmt.Errorf("bad digest %q", s)
	}
	return sum
}

// path returns the rest of the line, unquoted: a clean output path.
func (f *fields) path() string {
	p, err := strconv.Unquote(f.line)
	if (err != nil || !layout.Clean(p)) && f.err == nil {
		f.err = fmt.Errorf("bad path %s", f.line)
	}
	return p
}
