package serve

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/rsgen/rsgen/layout"
)

// Options say what a Handler serves.
type Options struct {
	// Dir is the output folder.
	Dir string
	// BaseURL is the URL at which Dir is published (base_url). Empty
	// means the one the Source Description in Dir was published under,
	// read again whenever it changes.
	BaseURL string
	// ResourceBaseURL is where the resources are published when that is
	// not BaseURL (resource_base_url); empty means BaseURL.
	ResourceBaseURL string
	// Lock, when set, is held for reading while a request finds and opens
	// its file, so that a build that holds it for writing is never seen
	// half done. Reload holds it for writing. Nil means a lock of the
	// Handler's own.
	Lock *sync.RWMutex
	// ShortCache is [publish] short_cache: the max-age of the files rsgen
	// rewrites, sent as the hosts send it (hosting.CacheOf).
	ShortCache time.Duration
	// Dev makes the Handler a development server: HTML responses reload
	// in the browser after each build and show a failed build's error
	// (see Built). Nothing of it is written into Dir.
	Dev bool
}

// site is the parsed form of the Options.
type site struct {
	base, resBase string // "" when not configured
	shortCache    time.Duration
}

// Handler serves an output folder the way a production host should. Create
// it with New.
type Handler struct {
	lock *sync.RWMutex // guards root and site, and the output's consistency
	root *os.Root
	site site
	dev  *dev // nil unless Options.Dev
	// listen is the address its server listens as (host.go), set by
	// Start before it serves; nil when served by another server.
	listen *listenAddr

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
	if opts.Dev {
		h.dev = newDev()
	}
	return h, nil
}

// openSite parses the URLs of opts and opens its folder.
func openSite(opts Options) (*os.Root, site, error) {
	s := site{shortCache: opts.ShortCache}
	for _, u := range []struct {
		name string
		in   string
		out  *string
	}{{"base URL", opts.BaseURL, &s.base}, {"resource base URL", opts.ResourceBaseURL, &s.resBase}} {
		if u.in == "" {
			continue
		}
		var err error
		if *u.out, err = layout.ParseBaseURL(u.in); err != nil {
			return nil, site{}, fmt.Errorf("serve: %s: %w", u.name, err)
		}
	}
	root, err := os.OpenRoot(opts.Dir)
	if err != nil {
		return nil, site{}, fmt.Errorf("serve: %w", err)
	}
	return root, s, nil
}

// Reload serves what opts describe from now on: a new configuration. The
// Lock and Dev of the Handler stay those New was given.
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

// Close releases the output folder and ends the live-reload streams.
func (h *Handler) Close() error {
	h.CloseStreams()
	h.lock.RLock()
	defer h.lock.RUnlock()
	if err := h.root.Close(); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// ServeHTTP answers GET and HEAD with the file at the request's path.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	f, t, x, err := h.find(r)
	switch {
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	case t.status == http.StatusMisdirectedRequest:
		misdirected(w, r.Host)
	case t.redirect != "":
		http.Redirect(w, r, t.redirect, http.StatusFound)
	case t.status == http.StatusNotFound:
		http.Error(w, "not found; the Source Description is at "+x.basePath+layout.SourceDescription, http.StatusNotFound)
	case t.status != 0:
		http.Error(w, http.StatusText(t.status), t.status)
	case t.dev != nil:
		t.dev(w, r, x)
	default:
		defer f.Close()
		h.serveFile(w, r, f, t.file, x)
	}
}

// find finds the file a request's path leads to and opens it, holding the
// lock meanwhile: once open, the file's bytes stay those of one build even
// when the next renames a new version into place. The index it returns is
// that of the same build. A request for a name h does not answer for
// (host.go) leads nowhere.
func (h *Handler) find(r *http.Request) (*os.File, target, *index, error) {
	h.lock.RLock()
	defer h.lock.RUnlock()
	x, err := h.index()
	if err != nil {
		return nil, target{}, nil, err
	}
	if !h.answersFor(r.Host, x.base) {
		return nil, target{status: http.StatusMisdirectedRequest}, x, nil
	}
	urlPath := r.URL.Path
	rest, under := strings.CutPrefix(urlPath, x.basePath)
	switch {
	case !under && (urlPath == "/" || urlPath+"/" == x.basePath):
		return nil, target{redirect: x.basePath}, x, nil
	case !under:
		return nil, target{status: http.StatusNotFound}, x, nil
	}
	name, ok := cleanPath(rest)
	if !ok {
		return nil, target{status: http.StatusBadRequest}, x, nil
	}
	if t := h.dev.route(name); t.dev != nil {
		return nil, t, x, nil
	}
	f, t, err := h.open(x, name)
	return f, t, x, err
}

// open opens the regular file at name, or, when name ends in "/" or is
// "", the folder's index.html. A folder named without its slash is
// redirected to it, as static hosts do; a file named with one is not
// found. When the output has no index.html, its top leads to the document
// browser.
func (h *Handler) open(x *index, name string) (*os.File, target, error) {
	file, isDir := strings.CutSuffix(name, "/")
	if name == "" {
		isDir = true
	}
	if file != "" && !x.published(file) {
		return nil, target{status: http.StatusNotFound}, nil
	}
	f, info, status, err := h.openFile(file)
	if status != 0 || err != nil {
		return nil, target{status: status}, err
	}
	switch {
	case info.IsDir() && !isDir:
		f.Close()
		return nil, target{redirect: escapePath(x.basePath + file + "/")}, nil
	case info.IsDir():
		f.Close()
		return h.openIndex(x, path.Join(file, "index.html"))
	case isDir:
		f.Close()
		return nil, target{status: http.StatusNotFound}, nil
	}
	return f, target{file: file}, nil
}

// openIndex opens a folder's index.html; at the top of the output, when
// there is none, it leads to the document browser.
func (h *Handler) openIndex(x *index, name string) (*os.File, target, error) {
	f, info, status, err := h.openFile(name)
	if err != nil {
		return nil, target{}, err
	}
	if status == 0 && info.Mode().IsRegular() {
		return f, target{file: name}, nil
	}
	if f != nil {
		f.Close() // a folder named index.html
	}
	if info, err := h.root.Stat(layout.ViewerPage); name == "index.html" && err == nil && info.Mode().IsRegular() {
		return nil, target{redirect: escapePath(x.basePath + path.Dir(layout.ViewerPage) + "/")}, nil
	}
	return nil, target{status: http.StatusNotFound}, nil
}

// openFile opens the file or folder at name ("" for the output folder)
// through the folder's root, so that nothing outside it is reached. A
// status says why not: not found, or forbidden (a symlink leading out, a
// loop, no permission, not a regular file).
func (h *Handler) openFile(name string) (*os.File, fs.FileInfo, int, error) {
	f, err := h.root.Open(path.Clean("./" + name))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, http.StatusNotFound, nil
	case err != nil:
		return nil, nil, http.StatusForbidden, nil
	}
	info, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, nil, 0, fmt.Errorf("serve: %w", err)
	case !info.IsDir() && !info.Mode().IsRegular():
		f.Close()
		return nil, nil, http.StatusForbidden, nil
	}
	return f, info, 0, nil
}

// escapePath returns the decoded path p as it goes into a URL.
func escapePath(p string) string { return (&url.URL{Path: p}).EscapedPath() }

// index returns what the published documents say, reading them again
// when they changed. The caller holds the lock.
func (h *Handler) index() (*index, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.idx == nil || !h.idx.fresh(h.root) {
		idx, err := readIndex(h.root, &h.site)
		if err != nil {
			return nil, err
		}
		h.idx = idx
	}
	return h.idx, nil
}
