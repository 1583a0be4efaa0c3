package destination

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rsgen/rsgen/rs"
)

// docs fetches ResourceSync documents into local files and reads them
// from there: a document is parsed only once all of it has come, so that
// a fetch can be retried without a half-read document's entries counted
// twice. In a sync the files are kept in the state's cache with the
// response's ETag and Last-Modified, and the next request for the
// document is conditional: a Source that answers 304 Not Modified is
// read from the cache.
type docs struct {
	c           *client
	dir         string // where documents are kept
	conditional bool   // dir is the cache of earlier syncs

	mu      sync.Mutex
	fetched map[string]string // URL → file, this run
}

// docMeta is what the cache keeps beside a document.
type docMeta struct {
	URL          string `json:"url"`
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
}

// maxDocBytes is the most a document may hold, as rs.Reader reads it.
const maxDocBytes = rs.MaxBytes + rs.ReadSlack

func newDocs(c *client, dir string, conditional bool) *docs {
	return &docs{c: c, dir: dir, conditional: conditional, fetched: map[string]string{}}
}

// read fetches the document at u, once per run, and returns a reader of
// it; close the file when done.
func (d *docs) read(ctx context.Context, u string) (*rs.Reader, *os.File, error) {
	name, err := d.fetch(ctx, u)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", u, err)
	}
	return rs.NewReader(f), f, nil
}

// head returns the head of the document at u.
func (d *docs) head(ctx context.Context, u string) (*rs.Head, error) {
	r, f, err := d.read(ctx, u)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, err := r.Head()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", u, err)
	}
	return h, nil
}

func (d *docs) fetch(ctx context.Context, u string) (string, error) {
	d.mu.Lock()
	name, ok := d.fetched[u]
	d.mu.Unlock()
	if ok {
		return name, nil
	}
	sum := sha256.Sum256([]byte(u))
	name = filepath.Join(d.dir, hex.EncodeToString(sum[:16])+".xml")
	err := d.c.retry(ctx, func() error { return d.download(ctx, u, name) })
	if err != nil {
		return "", err
	}
	d.mu.Lock()
	d.fetched[u] = name
	d.mu.Unlock()
	return name, nil
}

// download fetches u into the file name, conditionally when the cache
// has validators for it.
func (d *docs) download(ctx context.Context, u, name string) error {
	metaName := name + ".json"
	h := http.Header{}
	if d.conditional {
		if m, ok := readMeta(metaName, u); ok {
			if m.ETag != "" {
				h.Set("If-None-Match", m.ETag)
			}
			if m.LastModified != "" {
				h.Set("If-Modified-Since", m.LastModified)
			}
		}
	}
	resp, err := d.c.get(ctx, u, h)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified {
		return nil
	}
	os.Remove(metaName) // the cached copy is about to change
	if err := copyDoc(u, resp.Body, name); err != nil {
		return err
	}
	m := docMeta{URL: u, ETag: resp.Header.Get("ETag"), LastModified: trustedLastModified(resp.Header)}
	if d.conditional && (m.ETag != "" || m.LastModified != "") {
		data, _ := json.Marshal(m)
		if err := writeFileAtomic(metaName, data); err != nil {
			return fmt.Errorf("cache %s: %w", u, err)
		}
	}
	return nil
}

// copyDoc copies a document's body into the file name, through a
// temporary file, refusing one larger than a document may be.
func copyDoc(u string, body io.Reader, name string) error {
	tmp := name + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("cache %s: %w", u, err)
	}
	n, err := io.Copy(f, io.LimitReader(body, maxDocBytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > maxDocBytes {
		err = fmt.Errorf("%s: %w: more than %d bytes", u, rs.ErrTooLarge, int64(maxDocBytes))
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// trustedLastModified returns the response's Last-Modified when it can
// tell a later change: when it is older than the response's Date by more
// than its one-second resolution. A document that changed in the second it
// was served could change again within that second, and a request
// conditional on that Last-Modified would then be answered 304 (git's
// "racy" files, the same problem).
func trustedLastModified(h http.Header) string {
	lm, err := http.ParseTime(h.Get("Last-Modified"))
	if err != nil {
		return ""
	}
	date, err := http.ParseTime(h.Get("Date"))
	if err != nil || !lm.Before(date.Add(-time.Second)) {
		return ""
	}
	return h.Get("Last-Modified")
}

// readMeta returns the cache's validators of u.
func readMeta(name, u string) (docMeta, bool) {
	var m docMeta
	data, err := os.ReadFile(name)
	if err != nil || json.Unmarshal(data, &m) != nil || m.URL != u {
		return m, false
	}
	if _, err := os.Stat(name[:len(name)-len(".json")]); err != nil {
		return m, false
	}
	return m, true
}

// writeFileAtomic writes data to a temporary file and renames it to name.
func writeFileAtomic(name string, data []byte) error {
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// prune removes from the cache the documents this run did not read: those
// of earlier syncs that no longer matter (Change Lists closed before the
// last sync, Resource List parts gone), so that the cache holds what the
// next sync asks for again, not every document ever read.
func (d *docs) prune() error {
	d.mu.Lock()
	keep := make(map[string]bool, 2*len(d.fetched))
	for _, name := range d.fetched {
		keep[filepath.Base(name)], keep[filepath.Base(name)+".json"] = true, true
	}
	d.mu.Unlock()
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !keep[e.Name()] {
			if err := os.Remove(filepath.Join(d.dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// errStop ends a reading early.
var errStop = errors.New("stop")
