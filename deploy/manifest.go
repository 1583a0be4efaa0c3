package deploy

import (
	"bufio"
	"compress/gzip"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// The manifest is the deploy's knowledge of a store: every key rsgen
// published there and not yet deleted, with the length and SHA-256 of its
// bytes and its headers. A deploy diffs the output against it, so it never
// lists the store or reads objects back; and it deletes only keys the
// manifest names, so that nothing rsgen did not put there is ever
// deleted. It is kept on the store (MetaDir/manifest), so that any machine
// can deploy, and cached in the state folder with its entity tag, so that
// an unchanged manifest costs one conditional GET and no bytes.
//
// A deploy writes the manifest twice: before its first upload, with every
// key it is about to write marked pending (so that a key is never in the
// store without being in the manifest, whatever happens next), and after
// its deletes, with everything landed. A later deploy that finds pending
// keys asks the store about each (Stat) before uploading it again.

// status is the state of a key in the manifest.
type status uint8

const (
	landed  status = iota // the store holds the entry's bytes and headers
	pending               // a deploy that did not finish meant to write them: they may be there or not
	retired               // no longer in the output; deleted once its grace period is over
)

// entry is one key of the manifest.
type entry struct {
	Object
	status status
	since  int64 // retired: when it left the output (Unix seconds)
}

// manifestMagic starts a manifest, with its format version.
const manifestMagic = "rsgen-deploy-manifest 1"

// manifestName is the manifest's name in MetaDir.
const manifestName = "manifest"

// A manifest is sorted by key in byte order, so that equal manifests have
// equal bytes and a deploy reads it in step with the output's walk, never
// whole: one line per distinct pair of headers ("h CONTENT-TYPE
// CACHE-CONTROL", numbered from 0 in the order of the first key that has
// them), then one per key ("STATUS HEADERS SHA-256 SIZE KEY"; STATUS is o
// for landed, p for pending, r and the time for retired), gzip-compressed.

// manifestWriter writes a manifest whose entries come in increasing order
// of their keys. The table of headers must come first in the file but is
// known only at the end, so the entry lines go to a body file, and finish
// writes the manifest: the table, then the body.
type manifestWriter struct {
	body  *os.File
	bw    *bufio.Writer
	index map[Headers]int
	table []Headers
	order keyOrder
	line  []byte
	done  bool // finished or aborted
}

// createManifest starts a manifest whose body is written to the file at
// bodyPath.
func createManifest(bodyPath string) (*manifestWriter, error) {
	f, err := os.Create(bodyPath)
	if err != nil {
		return nil, err
	}
	return &manifestWriter{body: f, bw: bufio.NewWriterSize(f, 64<<10), index: map[Headers]int{}}, nil
}

func (w *manifestWriter) add(e *entry) error {
	if err := w.order.next(e.Key); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	h, ok := w.index[e.Headers]
	if !ok {
		h = len(w.table)
		w.index[e.Headers] = h
		w.table = append(w.table, e.Headers)
	}
	b := w.line[:0]
	switch e.status {
	case landed:
		b = append(b, 'o')
	case pending:
		b = append(b, 'p')
	case retired:
		b = strconv.AppendInt(append(b, 'r'), e.since, 10)
	}
	b = append(strconv.AppendInt(append(b, ' '), int64(h), 10), ' ')
	b = append(hex.AppendEncode(b, e.SHA256[:]), ' ')
	b = append(strconv.AppendInt(b, e.Size, 10), ' ')
	b = append(strconv.AppendQuote(b, e.Key), '\n')
	w.line = b
	_, err := w.bw.Write(b)
	return err
}

// finish writes the manifest to the file at path, once, and removes the
// body.
func (w *manifestWriter) finish(path string) error {
	if w.done {
		return nil
	}
	w.done = true
	err := w.bw.Flush()
	if cerr := w.body.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = writeAtomic(path, w.writeTo)
	}
	os.Remove(w.body.Name())
	return err
}

// writeTo writes the table and the body, compressed, to out.
func (w *manifestWriter) writeTo(out io.Writer) error {
	body, err := os.Open(w.body.Name())
	if err != nil {
		return err
	}
	defer body.Close()
	zw := gzip.NewWriter(out)
	bw := bufio.NewWriterSize(zw, 64<<10)
	bw.WriteString(manifestMagic + "\n")
	for _, h := range w.table {
		fmt.Fprintf(bw, "h %s %s\n", strconv.Quote(h.ContentType), strconv.Quote(h.CacheControl))
	}
	if _, err := bw.ReadFrom(body); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

// abort drops the manifest, unless finished: the body's file is removed.
func (w *manifestWriter) abort() {
	if w.done {
		return
	}
	w.done = true
	w.body.Close()
	os.Remove(w.body.Name())
}

// manifestReader reads a manifest entry by entry. Every key must be a
// clean output path outside MetaDir, and the keys must be in order: a
// manifest someone tampered with cannot make a deploy delete, or write,
// anything else.
type manifestReader struct {
	zr    *gzip.Reader
	sc    *bufio.Scanner
	table []Headers
	line  int
	order keyOrder
}

// readManifest starts reading the manifest r.
func readManifest(r io.Reader) (*manifestReader, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("read the deploy manifest: %w", err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() || sc.Text() != manifestMagic {
		return nil, errors.New("read the deploy manifest: not a deploy manifest of this version")
	}
	return &manifestReader{zr: zr, sc: sc, line: 1}, nil
}

// next returns the next entry, or nil after the last.
func (m *manifestReader) next() (*entry, error) {
	e, err := m.entry()
	if err != nil {
		return nil, fmt.Errorf("read the deploy manifest: line %d: %w", m.line, err)
	}
	return e, nil
}

func (m *manifestReader) entry() (*entry, error) {
	for m.sc.Scan() {
		m.line++
		line := m.sc.Text()
		if rest, ok := strings.CutPrefix(line, "h "); ok {
			h, err := decodeHeaders(rest)
			if err != nil {
				return nil, err
			}
			m.table = append(m.table, h)
			continue
		}
		e, err := decodeEntry(line, m.table)
		if err != nil {
			return nil, err
		}
		if err := m.order.next(e.Key); err != nil {
			return nil, err
		}
		return e, nil
	}
	if err := m.sc.Err(); err != nil {
		return nil, err
	}
	if _, err := io.Copy(io.Discard, m.zr); err != nil {
		return nil, err
	}
	return nil, m.zr.Close()
}

func decodeHeaders(s string) (Headers, error) {
	ct, rest, err := unquotePrefix(s)
	if err != nil {
		return Headers{}, err
	}
	cc, err := strconv.Unquote(strings.TrimPrefix(rest, " "))
	return Headers{ContentType: ct, CacheControl: cc}, err
}

// unquotePrefix reads the quoted string at the start of s.
func unquotePrefix(s string) (string, string, error) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return "", "", err
	}
	u, err := strconv.Unquote(q)
	return u, s[len(q):], err
}

func decodeEntry(line string, table []Headers) (*entry, error) {
	f := fields{line: line}
	e := &entry{}
	switch st := f.next(); {
	case st == "o":
	case st == "p":
		e.status = pending
	case strings.HasPrefix(st, "r"):
		e.status = retired
		var err error
		if e.since, err = strconv.ParseInt(st[1:], 10, 64); err != nil {
			return nil, fmt.Errorf("bad status %q", st)
		}
	default:
		return nil, fmt.Errorf("bad status %q", st)
	}
	h := f.int()
	e.SHA256 = f.sum()
	e.Size = f.int()
	e.Key = f.path()
	if f.err != nil {
		return nil, f.err
	}
	if h < 0 || h >= int64(len(table)) {
		return nil, fmt.Errorf("no headers numbered %d", h)
	}
	if e.Key == MetaDir || strings.HasPrefix(e.Key, MetaDir+"/") {
		return nil, fmt.Errorf("key %q is in the deploy's own folder", e.Key)
	}
	e.Headers = table[h]
	return e, nil
}
