package checker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Fetcher reads what a Source publishes at a URL. The checker reads local
// output directories and HTTP servers through it, and tests inject their own.
type Fetcher interface {
	// Fetch returns the resource at rawURL. A resource that does not exist
	// is a Resource with Status 404 or an error wrapping ErrNotFound; the
	// caller closes Body.
	Fetch(ctx context.Context, rawURL string) (*Resource, error)
}

// ErrNotFound is wrapped by the errors a Fetcher returns for a resource
// that does not exist.
var ErrNotFound = errors.New("not found")

// ErrNotRegular is wrapped by the errors of a local check for a path that
// is not a regular file inside the checked folder: a directory, a named
// pipe, a device, a socket, or a symbolic link that leads out of the
// folder. Such a path is never opened for reading: a named pipe or a
// device would block the check or never end.
var ErrNotRegular = errors.New("not a regular file")

// Resource is what a Fetcher returns.
type Resource struct {
	Body io.ReadCloser
	// URL is where the resource was found, after redirects.
	URL string
	// File is the local file that holds it, "" over HTTP.
	File string
	// Status is the HTTP status, 200 for local files and 0 for the members
	// of packages.
	Status      int
	ContentType string
	// Links are the values of its Link headers, over HTTP.
	Links []string
}

// dirFetcher maps URLs under base to files under dir, which it reads
// through root so that no path leads out of dir.
type dirFetcher struct {
	base string // ends with "/"
	dir  string
	root *os.Root
}

// rel returns the slash-separated path under dir that holds rawURL, or ""
// when the URL is not under the base.
func (f dirFetcher) rel(rawURL string) string {
	rest, ok := strings.CutPrefix(rawURL, f.base)
	if !ok || rest == "" || strings.ContainsAny(rest, "?#") {
		return ""
	}
	p, err := url.PathUnescape(rest)
	if err != nil || !filepath.IsLocal(filepath.FromSlash(p)) {
		return ""
	}
	return p
}

func (f dirFetcher) Fetch(ctx context.Context, rawURL string) (*Resource, error) {
	rel := f.rel(rawURL)
	if rel == "" {
		return nil, fmt.Errorf("%s is not under %s: %w", rawURL, f.base, ErrNotFound)
	}
	path := filepath.Join(f.dir, filepath.FromSlash(rel))
	file, err := openIn(f.root, path, rel)
	if err != nil {
		return nil, err
	}
	return &Resource{Body: readCloser{ctxReader{ctx, file}, file}, URL: rawURL, File: path, Status: http.StatusOK}, nil
}

// openIn opens rel, a slash-separated path under root, if it is a regular
// file; path names it in errors.
func openIn(root *os.Root, path, rel string) (*os.File, error) {
	name := filepath.FromSlash(rel)
	return openRegular(path, func() (*os.File, error) {
		return root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	}, func() (fs.FileInfo, error) { return root.Lstat(name) })
}

// openLocal opens a file given on the command line, if it is a regular
// file.
func openLocal(path string) (*os.File, error) {
	return openRegular(path, func() (*os.File, error) {
		return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	}, func() (fs.FileInfo, error) { return os.Lstat(path) })
}

// openRegular opens the file at path with open, which must not block
// (O_NONBLOCK: opening a named pipe for reading otherwise waits for a
// writer), and keeps it only if the descriptor is a regular file. lstat
// explains a failed open.
func openRegular(path string, open func() (*os.File, error), lstat func() (fs.FileInfo, error)) (*os.File, error) {
	file, err := open()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, notFoundError{path: path}
		}
		if st, lerr := lstat(); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, notRegularError{path: path, is: "a symbolic link that leads out of the checked folder"}
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	st, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		file.Close()
		return nil, notRegularError{path: path, is: fileKind(st.Mode()) + ", not a regular file"}
	}
	return file, nil
}

// notFoundError is the error of a file that does not exist.
type notFoundError struct {
	path string
}

func (e notFoundError) Error() string { return "open " + e.path + ": no such file or directory" }

func (e notFoundError) Is(target error) bool {
	return target == ErrNotFound || target == fs.ErrNotExist
}

// notRegularError is the error of a path that is not a regular file
// inside the checked folder.
type notRegularError struct {
	path, is string
}

func (e notRegularError) Error() string { return e.path + " is " + e.is }

func (e notRegularError) Is(target error) bool { return target == ErrNotRegular }

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// ctxReader stops reading once its context is done, so that an interrupt
// or --max-time stops a long read between two blocks, with the context's
// cause as the error.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if c.ctx.Err() != nil {
		return 0, context.Cause(c.ctx)
	}
	return c.r.Read(p)
}

type readCloser struct {
	io.Reader
	io.Closer
}

// httpFetcher fetches over HTTP with a client.
type httpFetcher struct {
	client *http.Client
}

func (f httpFetcher) Fetch(ctx context.Context, rawURL string) (*Resource, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", rawURL, err)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", rawURL, err)
	}
	return &Resource{
		Body:        resp.Body,
		URL:         resp.Request.URL.String(),
		Status:      resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"),
		Links:       resp.Header.Values("Link"),
	}, nil
}

// redirectError refuses a redirect to another host: following it would
// let a Source make the check request any address the checking machine
// can reach, its own network included.
type redirectError struct {
	from, to string
}

func (e *redirectError) Error() string {
	return fmt.Sprintf("%s redirects to %s on another host; not followed (use --follow-external)", e.from, e.to)
}

// maxRedirects is the number of redirects a request follows, as net/http
// does by default.
const maxRedirects = 10

// redirectPolicy returns the CheckRedirect of the check's HTTP client:
// same-host redirects only, unless external hosts are allowed, then next,
// the client's own policy, if any.
func redirectPolicy(followExternal bool, next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if !followExternal && !strings.EqualFold(req.URL.Host, via[0].URL.Host) {
			return &redirectError{from: via[len(via)-1].URL.String(), to: req.URL.String()}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		return nil
	}
}

// errRequestLimit is returned once the check has made MaxRequests requests.
var errRequestLimit = errors.New("request limit reached")

// errByteLimit is returned once the check has read MaxBytes bytes over
// HTTP.
var errByteLimit = errors.New("byte limit reached")

// timeoutError is the cause of a request that took longer than the
// timeout of one request.
type timeoutError struct {
	url   string
	after time.Duration
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("the request to %s timed out after %s", e.url, e.after)
}

// limiter bounds the requests of one check: how many in all, how many
// bytes in all, how many at once, in all and to one host, and how long
// each may take, body included.
type limiter struct {
	next     Fetcher
	max      int64
	count    atomic.Int64
	maxBytes int64
	bytes    atomic.Int64
	slots    chan struct{}
	timeout  time.Duration

	perHost int
	mu      sync.Mutex
	hosts   map[string]chan struct{} // the slots of each host
}

func newLimiter(next Fetcher, o Options) *limiter {
	return &limiter{next: next, max: int64(o.MaxRequests), maxBytes: o.MaxBytes, slots: make(chan struct{}, o.Concurrency), timeout: o.Timeout,
		perHost: o.MaxPerHost, hosts: map[string]chan struct{}{}}
}

// hostSlots returns the slots of the host of rawURL.
func (l *limiter) hostSlots(rawURL string) chan struct{} {
	host := rawURL
	if u, err := url.Parse(rawURL); err == nil {
		host = strings.ToLower(u.Host)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	slots := l.hosts[host]
	if slots == nil {
		slots = make(chan struct{}, l.perHost)
		l.hosts[host] = slots
	}
	return slots
}

// acquire takes a slot of the host of rawURL, then one of all, and
// returns the function that gives both back.
func (l *limiter) acquire(ctx context.Context, rawURL string) (release func(), err error) {
	host := l.hostSlots(rawURL)
	select {
	case host <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("fetch %s: %w", rawURL, context.Cause(ctx))
	}
	select {
	case l.slots <- struct{}{}:
	case <-ctx.Done():
		<-host
		return nil, fmt.Errorf("fetch %s: %w", rawURL, context.Cause(ctx))
	}
	return func() { <-l.slots; <-host }, nil
}

func (l *limiter) Fetch(ctx context.Context, rawURL string) (*Resource, error) {
	if l.count.Add(1) > l.max {
		return nil, fmt.Errorf("fetch %s: %w (%d)", rawURL, errRequestLimit, l.max)
	}
	if l.bytes.Load() >= l.maxBytes {
		return nil, fmt.Errorf("fetch %s: %w (%d bytes)", rawURL, errByteLimit, l.maxBytes)
	}
	release, err := l.acquire(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeoutCause(ctx, l.timeout, &timeoutError{url: rawURL, after: l.timeout})
	res, err := l.next.Fetch(rctx, rawURL)
	if err != nil {
		if rctx.Err() != nil {
			err = fmt.Errorf("fetch %s: %w", rawURL, context.Cause(rctx))
		}
		cancel()
		release()
		return nil, err
	}
	res.Body = &limitedBody{body: res.Body, ctx: rctx, l: l, release: func() { cancel(); release() }}
	return res, nil
}

// limitedBody counts the bytes of a response against the limiter, reports
// a timeout as one, and frees the limiter's slot and timer when closed.
type limitedBody struct {
	body    io.ReadCloser
	ctx     context.Context
	l       *limiter
	release func()
	done    bool
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.l.bytes.Load() >= b.l.maxBytes {
		return 0, fmt.Errorf("%w (%d bytes)", errByteLimit, b.l.maxBytes)
	}
	n, err := b.body.Read(p)
	b.l.bytes.Add(int64(n))
	if err != nil && err != io.EOF && b.ctx.Err() != nil {
		err = context.Cause(b.ctx)
	}
	return n, err
}

func (b *limitedBody) Close() error {
	err := b.body.Close()
	if !b.done {
		b.done = true
		b.release()
	}
	return err
}

// isXMLType reports whether a Content-Type names XML.
func isXMLType(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/xml" || mt == "text/xml" || strings.HasSuffix(mt, "+xml")
}

// mediaType returns the media type of a Content-Type without parameters.
func mediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return contentType
	}
	return mt
}
