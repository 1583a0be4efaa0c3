package deploy

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"slices"
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

// manifest is the set of keys rsgen published on a store.
type manifest struct {
	entries map[string]*entry
}

// manifestMagic starts a manifest, with its format version.
const manifestMagic = "rsgen-deploy-manifest 1"

// manifestName is the manifest's name in MetaDir.
const manifestName = "manifest"

func newManifest() *manifest { return &manifest{entries: map[string]*entry{}} }

// encode writes the manifest, sorted by key, so that equal manifests have
// equal bytes: one line per distinct pair of headers ("h CONTENT-TYPE
// CACHE-CONTROL", numbered from 0 in order), then one per key ("STATUS
// HEADERS SHA-256 SIZE KEY"; STATUS is o for landed, p for pending, r and
// the time for retired), gzip-compressed.
func (m *manifest) encode() []byte {
	keys := make([]string, 0, len(m.entries))
	for k := range m.entries {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	index := map[Headers]int{}
	var table []Headers
	for _, k := range keys {
		h := m.entries[k].Headers
		if _, ok := index[h]; !ok {
			index[h] = len(table)
			table = append(table, h)
		}
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	w := bufio.NewWriter(zw)
	w.WriteString(manifestMagic + "\n")
	for _, h := range table {
		fmt.Fprintf(w, "h %s %s\n", strconv.Quote(h.ContentType), strconv.Quote(h.CacheControl))
	}
	for _, k := range keys {
		e := m.entries[k]
		st := "o"
		switch e.status {
		case pending:
			st = "p"
		case retired:
			st = "r" + strconv.FormatInt(e.since, 10)
		}
		fmt.Fprintf(w, "%s %d %x %d %s\n", st, index[e.Headers], e.SHA256, e.Size, strconv.Quote(k))
	}
	w.Flush()
	zw.Close()
	return buf.Bytes()
}

// decodeManifest reads a manifest. Every key must be a clean output path
// outside MetaDir: a manifest someone tampered with cannot make a deploy
// delete, or write, anything else.
func decodeManifest(data []byte) (*manifest, error) {
	m, err := decodeManifestLines(data)
	if err != nil {
		return nil, fmt.Errorf("read the deploy manifest: %w", err)
	}
	return m, nil
}

func decodeManifestLines(data []byte) (*manifest, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() || sc.Text() != manifestMagic {
		return nil, errors.New("not a deploy manifest of this version")
	}
	m := newManifest()
	var table []Headers
	for n := 2; sc.Scan(); n++ {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "h "); ok {
			h, err := decodeHeaders(rest)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			table = append(table, h)
			continue
		}
		e, err := decodeEntry(line, table)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		m.entries[e.Key] = e
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return nil, err
	}
	return m, zr.Close()
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
