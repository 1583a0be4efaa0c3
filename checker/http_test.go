package checker

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
)

// serveSite serves the valid site, changed by edits, on a loopback test
// server, with its URLs rewritten to the server's. wrap, when not nil,
// wraps the file server.
func serveSite(t *testing.T, edits []edit, wrap func(http.Handler) http.Handler) *httptest.Server {
	t.Helper()
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	ar, err := txtar.ParseFile(editSite(t, edits))
	if err != nil {
		t.Fatal(err)
	}
	for i := range ar.Files {
		ar.Files[i].Data = []byte(strings.ReplaceAll(string(ar.Files[i].Data), "http://example.org", srv.URL))
	}
	p := filepath.Join(t.TempDir(), "served.txtar")
	if err := os.WriteFile(p, txtar.Format(ar), 0o644); err != nil {
		t.Fatal(err)
	}
	h = http.FileServer(http.Dir(buildSite(t, p)))
	if wrap != nil {
		h = wrap(h)
	}
	return srv
}

// onPath answers requests for path with fn and passes the others on.
func onPath(path string, fn http.HandlerFunc) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == path {
				fn(w, r)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func checkURL(t *testing.T, u string, opts Options) Report {
	t.Helper()
	rep, err := CheckURL(t.Context(), u, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func wantRules(t *testing.T, rep Report, want ...string) {
	t.Helper()
	got := ruleSet(rep.Findings)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got rules %v, want %v:\n%s", got, want, findingLines(rep.Findings))
	}
}

// firstFinding checks that rep has findings of rule only and returns the
// first.
func firstFinding(t *testing.T, rep Report, rule string) Finding {
	t.Helper()
	wantRules(t, rep, rule)
	if len(rep.Findings) == 0 {
		t.FailNow()
	}
	return rep.Findings[0]
}

func TestHTTPValid(t *testing.T) {
	srv := serveSite(t, nil, nil)
	rep := checkURL(t, srv.URL+"/", Options{VerifyContent: true})
	wantRules(t, rep)
	if rep.Documents != 9 || rep.Packages != 2 {
		t.Errorf("read %d documents and %d packages, want 9 and 2 (a manifest copy is a document)", rep.Documents, rep.Packages)
	}
}

func TestHTTPStartAtDocument(t *testing.T) {
	srv := serveSite(t, nil, nil)
	rep := checkURL(t, srv.URL+"/changelist.xml", Options{})
	wantRules(t, rep)
	if rep.Documents != 9 || rep.Packages != 2 {
		t.Errorf("read %d documents and %d packages, want 9 and 2 (a manifest copy is a document)", rep.Documents, rep.Packages)
	}
}

func TestHTTPWellKnownNotXML(t *testing.T) {
	srv := serveSite(t, nil, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/"+wellKnown {
				w.Header().Set("Content-Type", "text/plain")
			}
			next.ServeHTTP(w, r)
		})
	})
	wantRules(t, checkURL(t, srv.URL, Options{}), "http-content-type")
}

func TestHTTPRobotsDiscovery(t *testing.T) {
	desc := strings.Replace(mustRead(t, ".well-known/resourcesync"), "<loc>", "<loc>", 1)
	srv := serveSite(t, []edit{
		{file: ".well-known/resourcesync"},
		{"description.xml", "", desc},
		{"capabilitylist.xml", "http://example.org/.well-known/resourcesync", "http://example.org/description.xml"},
		{"robots.txt", "", "User-agent: *\nSitemap: http://example.org/resourcelist-1.xml\n"},
	}, nil)
	rep := checkURL(t, srv.URL+"/", Options{})
	wantRules(t, rep, "well-known-missing")
	if rep.Documents != 9 || rep.Packages != 2 {
		t.Errorf("read %d documents and %d packages, want 9 and 2 (a manifest copy is a document)", rep.Documents, rep.Packages)
	}
}

func TestHTTPNoSourceDescription(t *testing.T) {
	srv := serveSite(t, []edit{{file: ".well-known/resourcesync"}}, nil)
	wantRules(t, checkURL(t, srv.URL+"/", Options{}), "description-missing", "well-known-missing")
}

func TestHTTPStatus(t *testing.T) {
	srv := serveSite(t, nil, onPath("/changelist.xml", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "broken", http.StatusInternalServerError)
	}))
	wantRules(t, checkURL(t, srv.URL+"/", Options{}), "http-status")
}

func TestHTTPRedirect(t *testing.T) {
	srv := serveSite(t, []edit{{"changelist-v2.xml", "", mustRead(t, "changelist.xml")}}, onPath("/changelist.xml", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/changelist-v2.xml", http.StatusMovedPermanently)
	}))
	wantRules(t, checkURL(t, srv.URL+"/", Options{}), "http-redirect")
}

func TestHTTPTimeout(t *testing.T) {
	srv := serveSite(t, nil, onPath("/changelist.xml", func(_ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // answer only when the client gives up
	}))
	wantRules(t, checkURL(t, srv.URL+"/", Options{Timeout: 50 * time.Millisecond}), "http-timeout")
}

// TestHTTPStartTimesOutOnce: a starting document that times out is
// fetched once, not a second time to walk from it (which doubled the time
// a check of an unresponsive Source took), and the check fails saying so.
func TestHTTPStartTimesOutOnce(t *testing.T) {
	var fetches atomic.Int64
	srv := serveSite(t, nil, onPath("/changelist.xml", func(_ http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		<-r.Context().Done() // answer only when the client gives up
	}))
	_, err := CheckURL(t.Context(), srv.URL+"/changelist.xml", Options{Timeout: 50 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "timed out after 50ms") {
		t.Errorf("error %v, want the timeout", err)
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("the starting document was fetched %d times, want once", n)
	}
}

// TestHTTPPartsAtOnce: the parts of a Resource List Index are fetched
// at once, not one after the other: each part here is answered only once
// both are asked for (or after a while, so that a check that asks for one
// at a time ends).
func TestHTTPPartsAtOnce(t *testing.T) {
	var inFlight, most atomic.Int64
	both := make(chan struct{})
	var once sync.Once
	part := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.URL.Path, "/resourcelist-") || strings.HasPrefix(r.URL.Path, "/resourcelist-index") {
				next.ServeHTTP(w, r)
				return
			}
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			if n == 2 {
				once.Do(func() { close(both) })
			}
			select {
			case <-both:
			case <-time.After(5 * time.Second):
			}
			next.ServeHTTP(w, r)
		})
	}
	srv := serveSite(t, nil, part)
	wantRules(t, checkURL(t, srv.URL+"/", Options{}))
	if m := most.Load(); m != 2 {
		t.Errorf("at most %d of the index's 2 parts were fetched at once, want both", m)
	}
}

// TestLimiterPerHost: however many fetches the check makes at once, no
// more than MaxPerHost go to one host.
func TestLimiterPerHost(t *testing.T) {
	var inFlight, most atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
	}))
	defer srv.Close()
	l := newLimiter(Options{}.remote(), Options{Concurrency: 8, MaxPerHost: 2, MaxRequests: 100, MaxBytes: 1 << 20, Timeout: time.Minute})
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			res, err := l.Fetch(t.Context(), fmt.Sprintf("%s/%d", srv.URL, i))
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
		})
	}
	for inFlight.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // time for the other four to arrive, were they let through
	close(release)
	wg.Wait()
	if m := most.Load(); m != 2 {
		t.Errorf("%d requests to one host at once, want at most MaxPerHost (2)", m)
	}
}

func TestHTTPRequestLimit(t *testing.T) {
	var requests atomic.Int64
	srv := serveSite(t, nil, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			next.ServeHTTP(w, r)
		})
	})
	// The finding says how to check on (a Source of 11,464 resources,
	// Go's src/, needs more than the default 10,000 requests).
	if f := firstFinding(t, checkURL(t, srv.URL+"/", Options{MaxRequests: 3}), "http-limit"); !strings.Contains(f.Message, "(--max-requests raises the limit)") {
		t.Errorf("finding %q does not name --max-requests", f.Message)
	}
	if n := requests.Load(); n != 3 {
		t.Errorf("server saw %d requests, want 3", n)
	}
	if f := firstFinding(t, checkURL(t, srv.URL+"/", Options{MaxBytes: 100}), "http-limit"); !strings.Contains(f.Message, "(--max-bytes raises the limit)") {
		t.Errorf("finding %q does not name --max-bytes", f.Message)
	}
}

// TestHTTPExternalHost checks that the check stays on the Source's host
// unless told otherwise.
func TestHTTPExternalHost(t *testing.T) {
	var external atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		external.Add(1)
		http.NotFound(w, nil)
	}))
	defer other.Close()
	srv := serveSite(t, []edit{{"capabilitylist.xml", "http://example.org/changedump.xml", other.URL + "/changedump.xml"}}, nil)

	wantRules(t, checkURL(t, srv.URL+"/", Options{}), "external-skipped")
	if n := external.Load(); n != 0 {
		t.Errorf("the other host saw %d requests without --follow-external", n)
	}
	wantRules(t, checkURL(t, srv.URL+"/", Options{FollowExternal: true}), "document-missing")
	if n := external.Load(); n != 1 {
		t.Errorf("the other host saw %d requests with --follow-external, want 1", n)
	}
}

func TestHTTPUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close()
	if _, err := CheckURL(t.Context(), u+"/", Options{}); err == nil {
		t.Fatal("no error for a server that does not answer")
	}
}

// mustRead returns a file of the valid site archive.
func mustRead(t *testing.T, name string) string {
	t.Helper()
	ar, err := txtar.ParseFile("testdata/sites/valid.txtar")
	if err != nil {
		t.Fatal(err)
	}
	i := fileIndex(ar, name)
	if i < 0 {
		t.Fatalf("no %s in valid.txtar", name)
	}
	return string(ar.Files[i].Data)
}

// TestPackageSizeLimit: a package fetched over HTTP is copied to a
// temporary file of at most MaxPackageBytes; one in a checked folder is
// read where it is, whatever its size. The valid site's packages hold
// about 1,000 bytes.
func TestPackageSizeLimit(t *testing.T) {
	srv := serveSite(t, nil, nil)
	rep := checkURL(t, srv.URL+"/", Options{MaxPackageBytes: 500})
	if f := firstFinding(t, rep, "http-limit"); !strings.Contains(f.Message, "larger than 500 bytes (--max-package)") {
		t.Errorf("got %s", f)
	}
	wantRules(t, checkDir(t, buildSite(t, "testdata/sites/valid.txtar"), Options{MaxPackageBytes: 500}))
}

// TestVerifyContentBoundedByLength: a resource served without end is read
// one byte past the length its listing gives, and reported as longer (its
// hash, of a part, is not compared), not read until --max-bytes.
func TestVerifyContentBoundedByLength(t *testing.T) {
	srv := serveSite(t, nil, onPath("/res/a.txt", func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("x"), 1<<10)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	rep := checkURL(t, srv.URL+"/", Options{VerifyContent: true, MaxBytes: 64 << 20})
	if f := firstFinding(t, rep, "content-length"); !strings.Contains(f.Message, "/res/a.txt has more than 6 bytes; length says 6") {
		t.Errorf("got %s", f)
	}
}
