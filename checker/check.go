package checker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Options control a check. The zero value checks the documents only, with
// the defaults below.
type Options struct {
	// BaseURL is the URL the Source is published at. Given to CheckDir,
	// it is the URL of the directory, inferred from the Source
	// Description when empty. Given to CheckURL, it is the URL that the URL
	// checked stands in for: a staging host, read as if it were BaseURL
	// (see places.go).
	BaseURL string
	// ResourceBaseURL is where the resources are published apart from the
	// documents (resource_base_url with copy_resources = false): resources
	// under it are part of the Source, never looked for in a checked
	// folder, and read from Resources.
	ResourceBaseURL string
	// Resources is where the resources under ResourceBaseURL are read: a
	// folder that holds them as published (the source folder), or the
	// URL they are served at; empty, at their own URLs.
	Resources string
	// VerifyContent also reads every listed resource and compares its
	// length and hash with the listing.
	VerifyContent bool
	// FollowExternal lets the check fetch documents and resources on hosts
	// other than the Source's.
	FollowExternal bool
	// MaxRequests bounds the number of fetches (default 10,000).
	MaxRequests int
	// MaxBytes bounds the bytes read over HTTP in all (default 16 GiB).
	MaxBytes int64
	// Timeout bounds each fetch, body included (default 30s).
	Timeout time.Duration
	// MaxTime bounds the whole check (default 10 minutes): past it the
	// check stops and reports max-time.
	MaxTime time.Duration
	// Concurrency bounds the fetches in flight (default 8), and
	// MaxPerHost those to one host (default 4), so that a check is polite
	// to the Source and to every host it reaches.
	Concurrency int
	MaxPerHost  int
	// Client is the HTTP client (default: a client with no cookies that
	// follows at most 10 redirects). Whatever the client, redirects to
	// other hosts are refused unless FollowExternal is set.
	Client *http.Client
	// Fetcher replaces the HTTP client altogether, for tests.
	Fetcher Fetcher
	// Limits bound the reading of each document.
	Limits Limits
	// MaxPackageBytes bounds the size of one dump package fetched over
	// HTTP, which is copied to a temporary file (default 4 GiB). A package
	// in a checked folder is read where it is, whatever its size.
	MaxPackageBytes int64
	// MaxUnzipBytes bounds the bytes the packages of the check decompress
	// to in all (default 16 GiB).
	MaxUnzipBytes int64
	// Outbox is a folder of pending notifications (a state folder's
	// outbox) that Check checks too (CheckOutbox).
	Outbox string
	// MaxUnzipRatio bounds what one package may decompress to: this many
	// times its size, or 16 MiB if that is more. The default, 1032, is
	// the most deflate can compress (zlib's technical details): the files
	// of a real package never decompress to more, however compressible
	// (5 GiB of zeros pack into 5 MB), while a package that declares more
	// cannot hold what it declares.
	MaxUnzipRatio int64
}

func (o Options) withDefaults() Options {
	if o.MaxRequests <= 0 {
		o.MaxRequests = 10000
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	if o.MaxPerHost <= 0 {
		o.MaxPerHost = 4
	}
	if o.MaxPackageBytes <= 0 {
		o.MaxPackageBytes = 4 << 30
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 16 << 30
	}
	if o.MaxTime <= 0 {
		o.MaxTime = 10 * time.Minute
	}
	if o.MaxUnzipBytes <= 0 {
		o.MaxUnzipBytes = 16 << 30
	}
	if o.MaxUnzipRatio <= 0 {
		o.MaxUnzipRatio = deflateMaxRatio
	}
	o.Limits = o.Limits.withDefaults()
	return o
}

// remote returns the fetcher for HTTP URLs. Its client follows redirects
// to other hosts only with FollowExternal, whatever client is given.
func (o Options) remote() Fetcher {
	if o.Fetcher != nil {
		return o.Fetcher
	}
	c := http.Client{}
	if o.Client != nil {
		c = *o.Client
	}
	c.CheckRedirect = redirectPolicy(o.FollowExternal, c.CheckRedirect)
	return httpFetcher{client: &c}
}

// timeLimitError is the cause of the context of a check that ran out of
// MaxTime.
type timeLimitError struct {
	after time.Duration
}

func (e *timeLimitError) Error() string {
	return fmt.Sprintf("the check took longer than %s (--max-time)", e.after)
}

// deadline bounds ctx by MaxTime.
func (o Options) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, o.MaxTime, &timeLimitError{after: o.MaxTime})
}

// ErrNoBaseURL is returned by CheckDir when the base URL is not given and
// cannot be inferred from the Source Description.
var ErrNoBaseURL = errors.New("cannot infer the base URL; give it with --base-url")

// Check checks target: an http or https URL, a directory or a file; and
// then the notifications pending in opts.Outbox, if set.
func Check(ctx context.Context, target string, opts Options) (Report, error) {
	rep, err := checkTarget(ctx, target, opts)
	if err != nil || opts.Outbox == "" {
		return rep, err
	}
	pending, err := CheckOutbox(ctx, opts.Outbox, opts)
	if err != nil {
		return rep, err
	}
	rep.Documents += pending.Documents
	rep.Findings = append(rep.Findings, pending.Findings...)
	return rep, nil
}

func checkTarget(ctx context.Context, target string, opts Options) (Report, error) {
	if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
		return CheckURL(ctx, target, opts)
	}
	st, err := os.Stat(target)
	if err != nil {
		return Report{}, fmt.Errorf("check %s: %w", target, err)
	}
	if st.IsDir() {
		return CheckDir(ctx, target, opts)
	}
	return CheckFile(ctx, target, opts)
}

// CheckFile checks one document on its own: the per-document rules, with
// the rules about its place in a Source as warnings.
func CheckFile(ctx context.Context, path string, opts Options) (Report, error) {
	opts = opts.withDefaults()
	ctx, cancel := opts.deadline(ctx)
	defer cancel()
	if err := ctx.Err(); err != nil {
		return Report{}, err
	}
	f, err := openLocal(path)
	if err != nil {
		return Report{}, fmt.Errorf("check %s: %w", path, err)
	}
	defer f.Close()
	rep := &reporter{url: path, file: path}
	doc := readDocument(ctxReader{ctx, f}, path, opts.Limits, rep)
	if doc.readErr != nil {
		return Report{}, fmt.Errorf("check %s: %w", path, doc.readErr)
	}
	if !doc.Fatal {
		checkDocument(doc, rep, true)
	}
	sortFindings(rep.findings)
	return Report{Documents: 1, Findings: rep.findings}, nil
}

// CheckDir checks a local output directory: the Source Description at
// DIR/.well-known/resourcesync and every document it leads to, with URLs
// mapped to files under dir through opts.BaseURL.
func CheckDir(ctx context.Context, dir string, opts Options) (report Report, err error) {
	st, err := os.Stat(dir)
	if err != nil {
		return Report{}, fmt.Errorf("check %s: %w", dir, err)
	}
	if !st.IsDir() {
		return Report{}, fmt.Errorf("check %s: not a directory", dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return Report{}, fmt.Errorf("check %s: %w", dir, err)
	}
	defer root.Close()
	base := opts.BaseURL
	if base == "" {
		if base, err = inferBase(root, dir, opts.Limits); err != nil {
			return Report{}, fmt.Errorf("check %s: %w", dir, err)
		}
	}
	if base, err = absoluteBase("base URL", base); err != nil {
		return Report{}, fmt.Errorf("check %s: %w", dir, err)
	}
	local := func(Fetcher) Fetcher { return dirFetcher{base: base, dir: dir, root: root} }
	report, err = checkSource(ctx, base, local, filepath.Join(dir, filepath.FromSlash(wellKnown)), opts)
	if err != nil {
		return report, fmt.Errorf("check %s: %w", dir, err)
	}
	return report, nil
}

// checkSource checks the Source published at base, read with source (see
// newWalker), from its Source Description, which is at where.
func checkSource(ctx context.Context, base string, source func(remote Fetcher) Fetcher, where string, opts Options) (Report, error) {
	opts = opts.withDefaults()
	if err := opts.checkResources(); err != nil {
		return Report{}, err
	}
	ctx, cancel := opts.deadline(ctx)
	defer cancel()
	w := newWalker(opts, base+wellKnown, source, func(u string) bool { return strings.HasPrefix(u, base) })
	release, err := w.mountResources()
	if err != nil {
		return Report{}, err
	}
	defer release()
	if !w.walkSite(ctx, base+wellKnown) {
		w.rootReport("description-missing", base+wellKnown, "no Source Description at %s", where)
	}
	return w.finish(ctx)
}

// absoluteBase returns u, the URL of a folder named what, ending with "/",
// or why it cannot be one.
func absoluteBase(what, u string) (string, error) {
	u = withSlash(u)
	if p, err := url.Parse(u); err != nil || !isAbsoluteURI(u) || p.Host == "" {
		return "", fmt.Errorf("%s %q is not an absolute http(s) URL", what, u)
	}
	return u, nil
}

// checkResources checks ResourceBaseURL, and makes it end with "/".
func (o *Options) checkResources() error {
	if o.ResourceBaseURL == "" {
		if o.Resources != "" {
			return errors.New("resources are read from " + o.Resources + " only under a resource base URL; give it (resource_base_url)")
		}
		return nil
	}
	var err error
	o.ResourceBaseURL, err = absoluteBase("resource base URL", o.ResourceBaseURL)
	return err
}

// CheckURL checks a Source over HTTP. A URL with an empty path or "/" is a
// site: the check starts at /.well-known/resourcesync, else at the
// Sitemaps of robots.txt. Any other URL is a document: the check climbs its
// up links to the Source Description and starts there. With
// opts.BaseURL, rawURL is where the Source published at the base URL is
// staged, a folder: the check starts at its Source Description, and reads
// every URL under the base URL at the same place under rawURL.
func CheckURL(ctx context.Context, rawURL string, opts Options) (Report, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return Report{}, fmt.Errorf("check %s: not an absolute http(s) URL", rawURL)
	}
	if opts.BaseURL != "" {
		return checkStaged(ctx, u, opts)
	}
	opts = opts.withDefaults()
	if err := opts.checkResources(); err != nil {
		return Report{}, fmt.Errorf("check %s: %w", rawURL, err)
	}
	ctx, cancel := opts.deadline(ctx)
	defer cancel()
	origin := u.Scheme + "://" + u.Host
	w := newWalker(opts, rawURL, nil, func(s string) bool { return sameHost(s, u.Host) })
	release, err := w.mountResources()
	if err != nil {
		return Report{}, fmt.Errorf("check %s: %w", rawURL, err)
	}
	defer release()
	if u.Path == "" || u.Path == "/" {
		w.discover(ctx, origin)
	} else {
		w.climb(ctx, rawURL)
	}
	report, err := w.finish(ctx)
	if err != nil {
		return report, fmt.Errorf("check %s: %w", rawURL, err)
	}
	return report, nil
}

// checkStaged checks the Source published at opts.BaseURL where it is
// staged, at the folder URL staged.
func checkStaged(ctx context.Context, staged *url.URL, opts Options) (Report, error) {
	if !strings.HasSuffix(staged.Path, "/") && staged.Path != "" {
		return Report{}, fmt.Errorf("check %s: with --base-url, give the URL of the folder that stands for the base URL, ending with /", staged)
	}
	base, err := absoluteBase("base URL", opts.BaseURL)
	if err != nil {
		return Report{}, fmt.Errorf("check %s: %w", staged, err)
	}
	at := withSlash(staged.String())
	source := func(remote Fetcher) Fetcher { return rebased{from: base, to: at, next: remote} }
	report, err := checkSource(ctx, base, source, at+wellKnown, opts)
	if err != nil {
		return report, fmt.Errorf("check %s: %w", staged, err)
	}
	return report, nil
}

func sameHost(rawURL, host string) bool {
	u, err := url.Parse(rawURL)
	return err == nil && strings.EqualFold(u.Host, host)
}

const wellKnown = ".well-known/resourcesync"

// inferBase finds the base URL of an output directory from the Source
// Description's entries: the shortest URL prefix such that the rest of
// every entry's URL is a file under dir.
func inferBase(root *os.Root, dir string, lim Limits) (string, error) {
	f, err := openIn(root, filepath.Join(dir, filepath.FromSlash(wellKnown)), wellKnown)
	if err != nil {
		return "", fmt.Errorf("read the Source Description: %w", err)
	}
	defer f.Close()
	doc := readDocument(f, wellKnown, lim, &reporter{})
	base := ""
	for _, e := range doc.Entries {
		b := baseOf(root, e.Loc)
		if b == "" || (base != "" && b != base) {
			return "", ErrNoBaseURL
		}
		base = b
	}
	if base == "" {
		return "", ErrNoBaseURL
	}
	return base, nil
}

// baseOf returns the shortest prefix of loc, ending in "/", whose rest is a
// file under root.
func baseOf(root *os.Root, loc string) string {
	u, err := url.Parse(loc)
	if err != nil || u.Host == "" {
		return ""
	}
	origin := u.Scheme + "://" + u.Host
	p := u.EscapedPath()
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		f := dirFetcher{base: origin + p[:i+1]}
		if rel := f.rel(loc); rel != "" {
			if st, err := root.Stat(filepath.FromSlash(rel)); err == nil && st.Mode().IsRegular() {
				return f.base
			}
		}
	}
	return ""
}
