package checker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
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
}

// dirFetcher maps URLs under base to files under dir.
type dirFetcher struct {
	base string // ends with "/"
	dir  string
}

// path returns the file that holds rawURL, or "" when the URL is not under
// the base.
func (f dirFetcher) path(rawURL string) string {
	rest, ok := strings.CutPrefix(rawURL, f.base)
	if !ok || rest == "" || strings.ContainsAny(rest, "?#") {
		return ""
	}
	p, err := url.PathUnescape(rest)
	if err != nil || !filepath.IsLocal(filepath.FromSlash(p)) {
		return ""
	}
	return filepath.Join(f.dir, filepath.FromSlash(p))
}

func (f dirFetcher) Fetch(_ context.Context, rawURL string) (*Resource, error) {
	p := f.path(rawURL)
	if p == "" {
		return nil, fmt.Errorf("%s is not under %s: %w", rawURL, f.base, ErrNotFound)
	}
	file, err := os.Open(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no file %s: %w", p, ErrNotFound)
		}
		return nil, fmt.Errorf("open %s: %w", p, err)
	}
	if st, err := file.Stat(); err == nil && st.IsDir() {
		file.Close()
		return nil, fmt.Errorf("%s is a directory: %w", p, ErrNotFound)
	}
	return &Resource{Body: file, URL: rawURL, File: p, Status: http.StatusOK}, nil
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
	}, nil
}

// errRequestLimit is returned once the check has made MaxRequests requests.
var errRequestLimit = errors.New("request limit reached")

// limiter bounds the requests of one check: how many in all, how many at
// once, and how long each may take.
type limiter struct {
	next    Fetcher
	max     int64
	count   atomic.Int64
	slots   chan struct{}
	timeout time.Duration
}

func newLimiter(next Fetcher, max, concurrency int, timeout time.Duration) *limiter {
	return &limiter{next: next, max: int64(max), slots: make(chan struct{}, concurrency), timeout: timeout}
}

func (l *limiter) Fetch(ctx context.Context, rawURL string) (*Resource, error) {
	if l.count.Add(1) > l.max {
		return nil, fmt.Errorf("fetch %s: %w (%d)", rawURL, errRequestLimit, l.max)
	}
	select {
	case l.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("fetch %s: %w", rawURL, ctx.Err())
	}
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	res, err := l.next.Fetch(ctx, rawURL)
	if err != nil {
		cancel()
		<-l.slots
		return nil, err
	}
	res.Body = &releasingBody{ReadCloser: res.Body, release: func() { cancel(); <-l.slots }}
	return res, nil
}

// releasingBody frees the limiter's slot and timer when closed.
type releasingBody struct {
	io.ReadCloser
	release func()
	done    bool
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
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
