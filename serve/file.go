package serve

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/rsgen/rsgen/hosting"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/notify"
)

// serveFile answers with the open file f at output path name; res is what
// the Resource Lists say of it, nil for documents and unlisted files.
func (h *Handler) serveFile(w http.ResponseWriter, r *http.Request, f *os.File, name string, x *index) {
	info, err := f.Stat()
	if err != nil {
		http.Error(w, fmt.Sprintf("serve: %v", err), http.StatusInternalServerError)
		return
	}
	res := x.resources[name]
	hdr := w.Header()
	typ := contentType(name, res)
	if typ != "" {
		hdr.Set("Content-Type", typ)
	}
	hdr.Set("X-Content-Type-Options", "nosniff")
	if hub, ok := x.topics[name]; ok {
		for k, v := range notify.TopicHeaders(layout.URL(x.base, name), hub) {
			hdr[k] = v
		}
	}
	modtime := info.ModTime()
	if res != nil {
		for _, l := range res.links {
			hdr.Add("Link", "<"+l+`>; rel="resourcesync"`)
		}
		if !res.lastmod.IsZero() {
			modtime = res.lastmod
		}
	}
	if h.dev != nil && isHTML(typ) && info.Size() <= maxInjected {
		h.dev.serveHTML(w, r, f, x)
		return
	}
	cc, err := cacheControl(name, f, x.shortCache)
	if err != nil {
		http.Error(w, fmt.Sprintf("serve: %v", err), http.StatusInternalServerError)
		return
	}
	if cc != "" {
		hdr.Set("Cache-Control", cc)
	}
	hdr.Set("ETag", etag(info))
	http.ServeContent(w, r, name, modtime, f)
}

// cacheControl returns the Cache-Control the hosts send for the output
// file at name (hosting.CacheOf) under short_cache shortCache, reading
// the head of f, and then rewinding it, when the policy needs to know
// whether it is open.
func cacheControl(name string, f *os.File, shortCache time.Duration) (string, error) {
	open := false
	if hosting.MayBeOpen(name) {
		var err error
		if open, err = hosting.IsOpenSegment(f); err != nil {
			return "", fmt.Errorf("read %s: %w", name, err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return "", fmt.Errorf("read %s: %w", name, err)
		}
	}
	return hosting.CacheControl(hosting.CacheOf(name, open), shortCache), nil
}

// contentType is the media type of the file at name: by rsgen's table
// (layout.ContentType), else the type the Resource List published. Empty
// leaves it to http.ServeContent to sniff.
func contentType(name string, res *resource) string {
	if t := layout.ContentType(name); t != "" {
		return t
	}
	if res != nil {
		return res.typ
	}
	return ""
}

// isHTML reports whether the media type t, parameters aside, is HTML.
func isHTML(t string) bool {
	t, _, _ = strings.Cut(t, ";")
	return strings.EqualFold(strings.TrimSpace(t), layout.TypeHTML)
}

// etag identifies the file's bytes by its inode, size and mtime: a new
// version is a new file renamed into place, or the same file written anew.
func etag(info fs.FileInfo) string {
	s := stampOf(info)
	return fmt.Sprintf(`"%x-%x-%x"`, s.ino, s.size, s.mtime)
}
