package serve_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
	"github.com/rsgen/rsgen/serve"
)

const base = "http://127.0.0.1:8080/"

// t0 is the time of the first build; the source files are older.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fixture is a built site and a Handler over its output.
type fixture struct {
	t   *testing.T
	cfg *config.Config
	h   *serve.Handler
	n   int // files written so far
}

// newFixture builds a site with two sets: "texts" (texts/) and "all-json"
// (every .json file), so that texts/data.json is in both and top.txt in
// none. Each option, if any, changes the configuration first.
func newFixture(t *testing.T, options ...func(*config.Config)) *fixture {
	t.Helper()
	dir := t.TempDir()
	cfg := config.Default()
	cfg.Dir = dir
	cfg.Source, cfg.Out, cfg.State = filepath.Join(dir, "site"), filepath.Join(dir, "public"), filepath.Join(dir, "state")
	cfg.BaseURL = base
	cfg.Sets = []config.Set{{Name: "texts", Path: "texts"}, {Name: "all-json", Include: []string{"**/*.json"}}}
	for _, o := range options {
		o(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	fx := &fixture{t: t, cfg: &cfg}
	fx.write("texts/a.txt", "0123456789")
	fx.write("texts/data.json", `{"a": 1}`)
	fx.write("texts/README", "plain words, no extension")
	fx.write("texts/pack.zip", "PK\x05\x06"+strings.Repeat("\x00", 18))
	fx.write("top.txt", "outside every set")
	fx.write("docs/index.html", "<p>docs</p>")
	fx.build(t0)
	fx.h = fx.handler(serve.Options{Dir: cfg.Out, BaseURL: cfg.BaseURL})
	return fx
}

// handler returns a Handler over opts, closed when the test ends.
func (fx *fixture) handler(opts serve.Options) *serve.Handler {
	fx.t.Helper()
	h, err := serve.New(opts)
	if err != nil {
		fx.t.Fatal(err)
	}
	fx.t.Cleanup(func() {
		if err := h.Close(); err != nil {
			fx.t.Error(err)
		}
	})
	return h
}

// write writes a source file with an mtime well before t0, and different
// from the mtime of every file written before.
func (fx *fixture) write(name, content string) {
	fx.t.Helper()
	p := filepath.Join(fx.cfg.Source, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		fx.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		fx.t.Fatal(err)
	}
	fx.n++
	old := time.Date(2020, 5, 5, 5, 5, fx.n, 0, time.UTC)
	if err := os.Chtimes(p, old, old); err != nil {
		fx.t.Fatal(err)
	}
}

func (fx *fixture) build(now time.Time) {
	fx.t.Helper()
	if _, err := generator.Build(context.Background(), fx.cfg, generator.Options{Now: now}); err != nil {
		fx.t.Fatal(err)
	}
}

// do sends a request to the fixture's Handler.
func (fx *fixture) do(request string, headers ...string) *http.Response {
	fx.t.Helper()
	return do(fx.h, request, headers...)
}

// do sends a request to h, given as on the wire ("GET /path"), with
// headers "Name: value"; its Host is localhost unless a header says.
func do(h http.Handler, request string, headers ...string) *http.Response {
	method, target, _ := strings.Cut(request, " ")
	r := httptest.NewRequest(method, target, nil)
	r.Host = "localhost"
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		if k == "Host" {
			r.Host = v
		}
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestContentTypes(t *testing.T) {
	fx := newFixture(t)
	for target, want := range map[string]string{
		"/.well-known/resourcesync":              "application/xml",
		"/resourcesync/texts/capabilitylist.xml": "application/xml",
		"/resourcesync/texts/resourcelist.xml":   "application/xml",
		"/resourcesync/all-json/changelist.xml":  "application/xml",
		"/texts/a.txt":                           "text/plain",
		"/texts/data.json":                       "application/json",
		"/texts/pack.zip":                        "application/zip",
		"/texts/README":                          "text/plain", // published type, sniffed by the build
		"/docs/index.html":                       "text/html",
		"/docs/":                                 "text/html",
	} {
		resp := fx.do("GET " + target)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %s", target, resp.Status)
			continue
		}
		if got := resp.Header.Get("Content-Type"); got != want {
			t.Errorf("GET %s: Content-Type %q, want %q", target, got, want)
		}
		if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s: X-Content-Type-Options %q", target, got)
		}
	}
	if got := body(t, fx.do("GET /texts/a.txt")); got != "0123456789" {
		t.Errorf("body %q", got)
	}
}

func TestLinkHeader(t *testing.T) {
	fx := newFixture(t)
	texts := "<" + base + `resourcesync/texts/capabilitylist.xml>; rel="resourcesync"`
	json := "<" + base + `resourcesync/all-json/capabilitylist.xml>; rel="resourcesync"`
	for target, want := range map[string][]string{
		"/texts/a.txt":                           {texts},
		"/texts/data.json":                       {json, texts},
		"/top.txt":                               nil,
		"/.well-known/resourcesync":              nil,
		"/resourcesync/texts/capabilitylist.xml": nil,
	} {
		got := fx.do("GET " + target).Header.Values("Link")
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("GET %s: Link %q, want %q", target, got, want)
		}
	}
}

// TestLastModified: a listed resource's Last-Modified is its published
// lastmod (the build time, with lastmod = "content"), not its mtime.
func TestLastModified(t *testing.T) {
	fx := newFixture(t)
	resp := fx.do("GET /texts/a.txt")
	if got, want := resp.Header.Get("Last-Modified"), t0.Format(http.TimeFormat); got != want {
		t.Errorf("listed resource: Last-Modified %q, want the published lastmod %q", got, want)
	}
	info, err := os.Stat(filepath.Join(fx.cfg.Out, "top.txt"))
	if err != nil {
		t.Fatal(err)
	}
	resp = fx.do("GET /top.txt")
	if got, want := resp.Header.Get("Last-Modified"), info.ModTime().UTC().Format(http.TimeFormat); got != want {
		t.Errorf("unlisted file: Last-Modified %q, want its mtime %q", got, want)
	}
}

// TestIndexReload: a new build's Resource Lists are read again.
func TestIndexReload(t *testing.T) {
	fx := newFixture(t)
	if got := fx.do("GET /texts/a.txt").Header.Values("Link"); len(got) != 1 {
		t.Fatalf("Link %q", got)
	}
	fx.write("texts/b.txt", "new")
	fx.write("texts/a.txt", "changed")
	t1 := t0.Add(time.Hour)
	fx.build(t1)
	resp := fx.do("GET /texts/b.txt")
	if got := resp.Header.Values("Link"); len(got) != 1 {
		t.Errorf("new resource: Link %q", got)
	}
	if got, want := fx.do("GET /texts/a.txt").Header.Get("Last-Modified"), t1.Format(http.TimeFormat); got != want {
		t.Errorf("updated resource: Last-Modified %q, want %q", got, want)
	}
}

func TestConditionalGET(t *testing.T) {
	fx := newFixture(t)
	first := fx.do("GET /texts/a.txt")
	etag := first.Header.Get("ETag")
	if !strings.HasPrefix(etag, `"`) {
		t.Fatalf("ETag %q is not a strong validator", etag)
	}
	for _, c := range []struct {
		header string
		want   int
	}{
		{"If-None-Match: " + etag, http.StatusNotModified},
		{`If-None-Match: "other"`, http.StatusOK},
		{"If-Modified-Since: " + t0.Format(http.TimeFormat), http.StatusNotModified},
		{"If-Modified-Since: " + t0.Add(-time.Second).Format(http.TimeFormat), http.StatusOK},
	} {
		if resp := fx.do("GET /texts/a.txt", c.header); resp.StatusCode != c.want {
			t.Errorf("%s: %s, want %d", c.header, resp.Status, c.want)
		}
	}
	// A new version of the file has a new ETag.
	fx.write("texts/a.txt", "9876543210")
	fx.build(t0.Add(time.Hour))
	if resp := fx.do("GET /texts/a.txt", "If-None-Match: "+etag); resp.StatusCode != http.StatusOK {
		t.Errorf("after an update: %s, want 200", resp.Status)
	}
}

func TestRange(t *testing.T) {
	fx := newFixture(t)
	resp := fx.do("GET /texts/a.txt", "Range: bytes=2-5")
	if resp.StatusCode != http.StatusPartialContent {
		t.Fatalf("%s, want 206", resp.Status)
	}
	if got := resp.Header.Get("Content-Range"); got != "bytes 2-5/10" {
		t.Errorf("Content-Range %q", got)
	}
	if got := body(t, resp); got != "2345" {
		t.Errorf("body %q", got)
	}
	etag := resp.Header.Get("ETag")
	if resp := fx.do("GET /texts/a.txt", "Range: bytes=2-5", `If-Range: "stale"`); resp.StatusCode != http.StatusOK {
		t.Errorf("If-Range with a stale ETag: %s, want the whole file", resp.Status)
	}
	if resp := fx.do("GET /texts/a.txt", "Range: bytes=2-5", "If-Range: "+etag); resp.StatusCode != http.StatusPartialContent {
		t.Errorf("If-Range with the ETag: %s, want 206", resp.Status)
	}
	if resp := fx.do("GET /texts/a.txt", "Range: bytes=20-30"); resp.StatusCode != http.StatusRequestedRangeNotSatisfiable {
		t.Errorf("range past the end: %s, want 416", resp.Status)
	}
}

func TestHEAD(t *testing.T) {
	fx := newFixture(t)
	resp := fx.do("HEAD /texts/a.txt")
	if resp.StatusCode != http.StatusOK {
		t.Fatal(resp.Status)
	}
	if got := body(t, resp); got != "" {
		t.Errorf("HEAD has a body: %q", got)
	}
	if got := resp.Header.Get("Content-Length"); got != "10" {
		t.Errorf("Content-Length %q", got)
	}
	if resp.Header.Get("Link") == "" || resp.Header.Get("ETag") == "" || resp.Header.Get("Last-Modified") == "" {
		t.Errorf("HEAD lacks headers: %v", resp.Header)
	}
	if resp := fx.do("POST /texts/a.txt"); resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %s, Allow %q", resp.Status, resp.Header.Get("Allow"))
	}
}

func TestTraversal(t *testing.T) {
	fx := newFixture(t)
	secret := filepath.Join(filepath.Dir(fx.cfg.Out), "secret.txt")
	if err := os.WriteFile(secret, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{
		"/../secret.txt",
		"/%2e%2e/secret.txt",
		"/%2E%2E/secret.txt",
		"/texts/%2e%2e/%2e%2e/secret.txt",
		"/..%2fsecret.txt",
		"/%2e%2e%2fsecret.txt",
		"/texts/..",
		"/texts/a.txt%00",
	} {
		resp := fx.do("GET " + target)
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET %s: %s, want 400", target, resp.Status)
		}
		if strings.Contains(body(t, resp), "secret") {
			t.Errorf("GET %s: served the secret", target)
		}
	}
	// Double encoding is a file name with percent signs: not found.
	if resp := fx.do("GET /%252e%252e/secret.txt"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("double-encoded: %s, want 404", resp.Status)
	}
}

func TestSymlinks(t *testing.T) {
	fx := newFixture(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"out-file":    filepath.Join(outside, "secret.txt"),
		"out-dir":     outside,
		"out-rel":     "../../" + filepath.Base(filepath.Dir(outside)) + "/" + filepath.Base(outside) + "/secret.txt",
		"in-file":     "texts/a.txt",
		"texts/up-in": "../top.txt",
	} {
		if err := os.Symlink(target, filepath.Join(fx.cfg.Out, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, target := range []string{"/out-file", "/out-dir/secret.txt", "/out-rel"} {
		resp := fx.do("GET " + target)
		if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 403 or 404", target, resp.Status)
		}
		if strings.Contains(body(t, resp), "secret") {
			t.Errorf("GET %s: served the secret", target)
		}
	}
	for target, want := range map[string]string{"/in-file": "0123456789", "/texts/up-in": "outside every set"} {
		if resp := fx.do("GET " + target); resp.StatusCode != http.StatusOK || body(t, resp) != want {
			t.Errorf("GET %s: %s, want the linked file", target, resp.Status)
		}
	}
}

// TestHidden: temporary files of a build in progress, and folders without
// an index.html, are not found.
func TestHidden(t *testing.T) {
	fx := newFixture(t)
	for _, p := range []string{".rsgen-tmp-123", "resourcesync/texts/.rsgen-tmp-456"} {
		if err := os.WriteFile(filepath.Join(fx.cfg.Out, filepath.FromSlash(p)), []byte("<half"), 0o644); err != nil {
			t.Fatal(err)
		}
		if resp := fx.do("GET /" + p); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET /%s: %s, want 404", p, resp.Status)
		}
	}
	for _, target := range []string{"/texts/", "/resourcesync/texts/"} {
		if resp := fx.do("GET " + target); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404", target, resp.Status)
		}
	}
}

// TestReload: a new configuration's base URL takes effect at once; a
// failed Reload keeps the last one.
func TestReload(t *testing.T) {
	fx := newFixture(t)
	if err := fx.h.Reload(serve.Options{Dir: fx.cfg.Out, BaseURL: base + "pub/"}); err != nil {
		t.Fatal(err)
	}
	if resp := fx.do("GET /pub/texts/a.txt"); resp.StatusCode != http.StatusOK {
		t.Errorf("under the new base path: %s", resp.Status)
	}
	if resp := fx.do("GET /texts/a.txt"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("under the old base path: %s, want 404", resp.Status)
	}
	if err := fx.h.Reload(serve.Options{Dir: filepath.Join(fx.cfg.Out, "nosuch"), BaseURL: base}); err == nil {
		t.Error("Reload to a missing folder: no error")
	}
	if resp := fx.do("GET /pub/texts/a.txt"); resp.StatusCode != http.StatusOK {
		t.Errorf("after a failed Reload: %s", resp.Status)
	}
}

// TestMisdirected: a server answers 421 Misdirected Request, and serves
// nothing, to a request for a name it does not answer for (a page that
// rebound its own name to this machine), and serves the names it listens
// as.
func TestMisdirected(t *testing.T) {
	fx := newFixture(t)
	srv, err := serve.Start("127.0.0.1:0", fx.h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	addr := srv.Addr().String()
	get := func(host string) (*http.Response, string) {
		req, err := http.NewRequest("GET", "http://"+addr+"/texts/a.txt", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return resp, body(t, resp)
	}
	for _, host := range []string{"evil.example", "evil.example:" + strconv.Itoa(srv.Addr().(*net.TCPAddr).Port)} {
		resp, text := get(host)
		if resp.StatusCode != http.StatusMisdirectedRequest || strings.Contains(text, "0123456789") {
			t.Errorf("Host %s: %s %q, want 421 and no file", host, resp.Status, text)
		}
	}
	for _, host := range []string{addr, "localhost", "127.0.0.1:8080"} {
		if resp, text := get(host); resp.StatusCode != http.StatusOK || text != "0123456789" {
			t.Errorf("Host %s: %s %q, want the file", host, resp.Status, text)
		}
	}
}

// TestCacheControlAsTheHosts: every file of an output is served with the
// Cache-Control that the hosting files tell the hosts (here Netlify's
// _headers): a year for what rsgen never rewrites (a closed Change List,
// kept versions), short_cache for what it rewrites (the open Change List
// too), the host's default (none) for the resources.
func TestCacheControlAsTheHosts(t *testing.T) {
	fx := newFixture(t, func(c *config.Config) {
		c.Publish.Targets = []config.Target{config.TargetNetlify}
		c.Publish.ShortCache.Duration = 10 * time.Minute
		c.ChangeList.Rotate.Duration = time.Hour
		c.Sets[0].KeepVersions = true
	})
	fx.write("texts/a.txt", "changed")
	fx.build(t0.Add(2 * time.Hour))
	fx.write("texts/b.txt", "new")
	fx.build(t0.Add(4 * time.Hour))
	fx.h = fx.handler(serve.Options{Dir: fx.cfg.Out, BaseURL: fx.cfg.BaseURL, ShortCache: 10 * time.Minute})

	rules := headersRules(t, filepath.Join(fx.cfg.Out, "_headers"))
	seen := map[string]bool{}
	err := filepath.WalkDir(fx.cfg.Out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(fx.cfg.Out, p)
		rel = filepath.ToSlash(rel)
		if rel == "_headers" {
			return nil
		}
		want := rules.cacheControl("/" + rel)
		seen[want] = true
		resp := fx.do("GET /" + rel)
		if got := resp.Header.Get("Cache-Control"); resp.StatusCode != http.StatusOK || got != want {
			t.Errorf("%s: %s, Cache-Control %q; _headers says %q", rel, resp.Status, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"", "public, max-age=600", "public, max-age=31536000, immutable"} {
		if !seen[want] {
			t.Errorf("no file of the output has Cache-Control %q: the test no longer covers it", want)
		}
	}
}

// headerRules are the Cache-Control values of a _headers file, by path
// pattern (a trailing * matches everything below).
type headerRules map[string]string

func headersRules(t *testing.T, file string) headerRules {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rules := headerRules{}
	pattern := ""
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "/"):
			pattern = line
		case strings.HasPrefix(line, "  Cache-Control: "):
			rules[pattern] = strings.TrimPrefix(line, "  Cache-Control: ")
		}
	}
	return rules
}

// cacheControl returns the Cache-Control of the rule that matches p, ""
// when none does (the host's default).
func (r headerRules) cacheControl(p string) string {
	if cc, ok := r[p]; ok {
		return cc
	}
	for pattern, cc := range r {
		if prefix, ok := strings.CutSuffix(pattern, "*"); ok && strings.HasPrefix(p, prefix) {
			return cc
		}
	}
	return ""
}
