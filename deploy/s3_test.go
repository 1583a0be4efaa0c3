package deploy

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/checker"
	"github.com/rsgen/rsgen/layout"
)

// TestS3ExampleSite deploys the example site to a real S3 server, checks
// it as a Destination would over the bucket's website endpoint, deploys
// again with nothing changed (one request), then changes the source,
// rebuilds and deploys the difference, checking the order of every
// request on the way.
func TestS3ExampleSite(t *testing.T) {
	v := startVersity(t)
	p := newProxy(t, v.endpoint)
	s := exampleSite(t, v.website)
	store := v.store(t, p.srv.URL, "")

	// First deploy: everything, in order.
	start := time.Now()
	sum := run(t, s.options(store))
	logDeploy(t, "example site, first deploy", sum, time.Since(start))
	final := s.outputFiles(t, store)
	uploads, _, _ := sum.Uploads()
	if uploads != len(final) || sum.Files != len(final) {
		t.Errorf("first deploy uploaded %d of %d files", uploads, len(final))
	}
	view := replay(t, p.take(), final, bucketView{}, s.cfg.BaseURL, "")
	checkView(t, view, final, s.cfg.Out, s.cfg.BaseURL)
	wantKeys := append(keysOf(final), MetaDir+"/manifest")
	if got := v.keys(t, ""); !slices.Equal(sorted(got), sorted(wantKeys)) {
		t.Errorf("bucket holds %v\nwant %v", got, wantKeys)
	}
	checkDestination(t, v.website)
	checkHeaders(t, v.website, final)

	// Nothing changed: one conditional GET of the manifest, nothing sent.
	start = time.Now()
	sum = run(t, s.options(store))
	logDeploy(t, "example site, nothing changed", sum, time.Since(start))
	if log := p.take(); len(log) != 1 || log[0].method != http.MethodGet || log[0].status != http.StatusNotModified {
		t.Errorf("a deploy with nothing changed made %d requests: %v", len(log), describe(log))
	}
	if u, r, _ := sum.Uploads(); u+r+sum.Deletes != 0 || sum.Unchanged != len(final) || sum.Hashed != 0 {
		t.Errorf("no-change deploy: %+v", sum)
	}

	// A fresh CI runner: the output and the state restored, every file
	// touched by the checkout, no deploy cache. One GET of the whole
	// manifest; every file is read again, none is sent.
	touched := time.Now().Add(-time.Minute)
	for rel := range final {
		os.Chtimes(filepath.Join(s.cfg.Out, filepath.FromSlash(rel)), touched, touched)
	}
	if err := os.RemoveAll(filepath.Join(s.cfg.State, "deploy")); err != nil {
		t.Fatal(err)
	}
	sum = run(t, s.options(store))
	if log := p.take(); len(log) != 1 || log[0].method != http.MethodGet || log[0].status != http.StatusOK {
		t.Errorf("a fresh runner's deploy with nothing changed made %d requests: %v", len(log), describe(log))
	}
	if u, r, _ := sum.Uploads(); u+r != 0 || sum.Hashed != len(final) {
		t.Errorf("fresh runner: %d uploads, %d re-headed, %d files read of %d", u, r, sum.Hashed, len(final))
	}

	// Change a resource, add one, delete one; rebuild; deploy.
	s.write(t, "collection/manuscripts/ms-001.json", `{"id": "ms-001", "title": "Harbour ledger, revised"}`)
	s.write(t, "data/new.csv", "a,b\n1,2\n")
	s.remove(t, "collection/maps/index.json")
	s.build(t)
	sum = run(t, s.options(store))
	final2 := s.outputFiles(t, store)
	view = replay(t, p.take(), final2, view, s.cfg.BaseURL, "")
	checkView(t, view, final2, s.cfg.Out, s.cfg.BaseURL)
	if _, ok := view["collection/maps/index.json"]; ok {
		t.Error("the deleted resource is still in the bucket")
	}
	if uploads, _, _ := sum.Uploads(); uploads == 0 || uploads > len(final2)/2 || sum.Deletes != 1 {
		t.Errorf("incremental deploy: %d uploads, %d deletes of %d files", uploads, sum.Deletes, len(final2))
	}
	checkDestination(t, v.website)
}

// logDeploy logs what a deploy did, for the README's figures (go test -v).
func logDeploy(t *testing.T, name string, sum *Summary, took time.Duration) {
	uploads, reheaders, bytes := sum.Uploads()
	r := sum.Requests
	t.Logf("%s: %d files: %d uploads (%d bytes), %d re-headed, %d deletes; %d requests (%d PUT, %d COPY, %d GET, %d HEAD, %d DELETE), %d bytes sent, in %s",
		name, sum.Files, uploads, bytes, reheaders, sum.Deletes, r.Total(), r.Put, r.Copy, r.Get, r.Head, r.Delete, r.BytesSent, took.Round(time.Millisecond))
}

// checkDestination checks the Source at url as a Destination reads it:
// every document, every resource's length, hash and content type.
func checkDestination(t *testing.T, url string) {
	t.Helper()
	rep, err := checker.CheckURL(context.Background(), url, checker.Options{VerifyContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Severity == checker.Error || strings.HasPrefix(f.Rule, "http-") || f.Rule == "content-type" {
			t.Errorf("destination: %v", f)
		}
	}
}

// checkHeaders checks the headers the website endpoint serves files of
// the example site with: one file of each kind.
func checkHeaders(t *testing.T, website string, files map[string][32]byte) {
	t.Helper()
	const short, forever = "public, max-age=300", "public, max-age=31536000, immutable"
	kinds := []struct {
		match        func(string) bool
		contentType  string
		cacheControl string
	}{
		{func(k string) bool { return k == ".well-known/resourcesync" }, "application/xml", short},
		{func(k string) bool { return k == "collection/manuscripts/ms-001 folio 1r.png" }, "image/png", ""},
		{func(k string) bool { return k == "index.html" }, "text/html", ""},
		{func(k string) bool { return strings.Contains(k, "/resourcedump/") && strings.HasSuffix(k, ".zip") }, "application/zip", forever},
		{func(k string) bool {
			return strings.Contains(k, "/resourcedump/") && strings.HasSuffix(k, "-manifest.xml")
		}, "application/xml", forever},
		{func(k string) bool { return strings.HasSuffix(k, ".timemap") }, "application/link-format", short},
		{func(k string) bool {
			return strings.HasPrefix(k, "resourcesync/mementos/") && strings.HasSuffix(k, ".json")
		}, "application/json", forever},
		{func(k string) bool { return strings.Contains(k, "/changelists/changelist-") }, "application/xml", short}, // open
		{func(k string) bool { return strings.Contains(k, "/resourcelists/resourcelist-") }, "application/xml", forever},
		{func(k string) bool { return strings.HasSuffix(k, "/capabilitylist.xml") }, "application/xml", short},
		{func(k string) bool { return k == "resourcesync/_viewer/viewer.js" }, "text/javascript", short},
	}
	for _, kind := range kinds {
		var key string
		for k := range files {
			if kind.match(k) {
				key = k
				break
			}
		}
		if key == "" {
			t.Errorf("the example site has no file of a kind checked (%q)", kind.contentType)
			continue
		}
		resp, err := http.Head(website + string(layout.AppendEscapedPath(nil, key)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if ct, cc := resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"); resp.StatusCode != 200 || ct != kind.contentType || cc != kind.cacheControl {
			t.Errorf("%s: %d, Content-Type %q, Cache-Control %q; want %q, %q", key, resp.StatusCode, ct, cc, kind.contentType, kind.cacheControl)
		}
	}
}

func keysOf(m map[string][32]byte) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

func describe(log []*request) []string {
	var d []string
	for _, r := range log {
		d = append(d, r.method+" "+r.key)
	}
	return d
}
