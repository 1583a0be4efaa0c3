package serve

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strings"
	"sync"

	"github.com/rsgen/rsgen/layout"
)

// Options say what a Handler serves.
type Options struct {
	// Dir is the output folder.
	Dir string
	// BaseURL is the URL at which Dir is published (base_url).
	BaseURL string
	// ResourceBaseURL is where the resources are published when that is
	// not BaseURL (resource_base_url); empty means BaseURL.
	ResourceBaseURL string
	// Sets names the sets. Their Resource Lists say which resources
	// belong to them, with which lastmod and media type.
	Sets []string
	// Lock, when set, is held for reading while a request finds and opens
	// its file, so that a build that holds it for writing is never seen
	// half done. Reload holds it for writing. Nil means a lock of the
	// Handler's own.
	Lock *sync.RWMutex
}

// site is the parsed form of the Options.
type site struct {
	base, resBase string
	sets          []string
}

// Handler serves an output folder the way a production host should. Create
// it with New.
type Handler struct {
	lock *sync.RWMutex // guards root and site, and the output's consistency
	root *os.Root
	site site

	mu  sync.Mutex
	idx *index // nil until needed, and after Reload
}

// New returns a Handler over opts.Dir. Close it when done.
func New(opts Options) (*Handler, error) {
	root, s, err := openSite(opts)
	if err != nil {
		return nil, err
	}
	h := &Handler{lock: opts.Lock, root: root, site: s}
	if h.lock == nil {
		h.lock = new(sync.RWMutex)
	}
	return h, nil
}

// openSite parses the URLs of opts and opens its folder.
func openSite(opts Options) (*os.Root, site, error) {
	base, err := layout.ParseBaseURL(opts.BaseURL)
	if err != nil {
		return nil, site{}, fmt.Errorf("serve: base URL: %w", err)
	}
	resBase := base
	if opts.ResourceBaseURL != "" {
		if resBase, err = layout.ParseBaseURL(opts.ResourceBaseURL); err != nil {
			return nil, site{}, fmt.Errorf("serve: resource base URL: %w", err)
		}
	}
	root, err := os.OpenRoot(opts.Dir)
	if err != nil {
		return nil, site{}, fmt.Errorf("serve: %w", err)
	}
	return root, site{base: base, resBase: resBase, sets: opts.Sets}, nil
}

// Reload serves what opts describe from now on: a new configuration. The
// lock of the Handler stays the one New was given.
func (h *Handler) Reload(opts Options) error {
	root, s, err := openSite(opts)
	if err != nil {
		return err
	}
	h.lock.Lock()
	old := h.root
	h.root, h.site = root, s
	h.mu.Lock()
	h.idx = nil
	h.mu.Unlock()
	h.lock.Unlock()
	if err := old.Close(); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// Close releases the output folder.
func (h *Handler) Close() error {
	h.lock.RLock()
	defer h.lock.RUnlock()
	if err := h.root.Close(); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// errNotFound and errForbidden are the refusals of open.
var (
	errNotFound  = errors.New("not found")
	errForbidden = errors.New("forbidden")
)

// ServeHTTP answers GET and HEAD with the file at the request's path.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name, ok := cleanPath(r.URL.Path)
	if !ok {
		http.Error(w, "bad path", http.StatusBadRequest)
		return
	}
	f, name, res, err := h.open(name)
	switch {
	case errors.Is(err, errNotFound):
		http.Error(w, "not found; the Source Description is at /"+layout.SourceDescription, http.StatusNotFound)
		return
	case errors.Is(err, errForbidden):
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	hdr := w.Header()
	if t := contentType(name, res); t != "" {
		hdr.Set("Content-Type", t)
	}
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("ETag", etag(info))
	modtime := info.ModTime()
	if res != nil {
		for _, l := range res.links {
			hdr.Add("Link", "<"+l+`>; rel="resourcesync"`)
		}
		if !res.lastmod.IsZero() {
			modtime = res.lastmod
		}
	}
	http.ServeContent(w, r, name, modtime, f)
}

// cleanPath turns a request's decoded path into a path below the root:
// "." for the root itself. It refuses ".." segments, however they were
// encoded, and NUL bytes.
func cleanPath(p string) (string, bool) {
	if !strings.HasPrefix(p, "/") || strings.IndexByte(p, 0) >= 0 {
		return "", false
	}
	for seg := range strings.SplitSeq(p[1:], "/") {
		if seg == ".." {
			return "", false
		}
	}
	return path.Clean(p)[1:], true
}

// open opens the regular file at name, or a folder's index.html, and looks
// up what the Resource Lists say of it (nil for documents and unlisted
// files). Temporary files, folders without an index.html and paths the
// folder's root cannot reach are refused. The lock is held meanwhile; once
// open, the file's bytes stay those of one build even when the next
// renames a new version into place.
func (h *Handler) open(name string) (*os.File, string, *resource, error) {
	h.lock.RLock()
	defer h.lock.RUnlock()
	if name == "." {
		name = ""
	}
	for range 2 {
		for seg := range strings.SplitSeq(name, "/") {
			if strings.HasPrefix(seg, layout.TempPrefix) {
				return nil, "", nil, errNotFound
			}
		}
		f, err := h.root.Open(path.Clean("./" + name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, "", nil, errNotFound
		case err != nil:
			return nil, "", nil, errForbidden // outside the folder, a symlink loop, no permission
		}
		info, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, "", nil, fmt.Errorf("serve: %w", err)
		}
		switch {
		case info.IsDir():
			f.Close()
			name = path.Join(name, "index.html")
			continue
		case !info.Mode().IsRegular():
			f.Close()
			return nil, "", nil, errForbidden
		}
		res, err := h.lookup(name)
		if err != nil {
			f.Close()
			return nil, "", nil, err
		}
		return f, name, res, nil
	}
	return nil, "", nil, errNotFound // a folder named index.html
}

// lookup returns what the Resource Lists say of the resource at name,
// re-reading them when they changed.
func (h *Handler) lookup(name string) (*resource, error) {
	if name == layout.SourceDescription || layout.IsReserved(name) {
		return nil, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.idx == nil || !h.idx.fresh(h.root) {
		idx, err := readIndex(h.root, &h.site)
		if err != nil {
			return nil, err
		}
		h.idx = idx
	}
	return h.idx.resources[name], nil
}

// contentType is the media type of the file at name: XML for the Source
// Description, else by rsgen's extension table, else the type the Resource
// List published. Empty leaves it to http.ServeContent to sniff.
func contentType(name string, res *resource) string {
	if name == layout.SourceDescription {
		return "application/xml"
	}
	if t := layout.TypeByName(name); t != "" {
		return t
	}
	if res != nil {
		return res.typ
	}
	return ""
}

// etag identifies the file's bytes by its inode, size and mtime: a new
// version is a new file renamed into place, or the same file written anew.
func etag(info fs.FileInfo) string {
	s := stampOf(info)
	return fmt.Sprintf(`"%x-%x-%x"`, s.ino, s.size, s.mtime)
}
