package generator_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/internal/freeport"
	"github.com/rsgen/rsgen/internal/servertest"
)

// nginxPath returns the nginx binary, or skips the test when there is
// none, unless RSGEN_REQUIRE_NGINX=1 (then it fails).
func nginxPath(t *testing.T) string {
	t.Helper()
	if p := servertest.Nginx(t); p != "" {
		return p
	}
	t.Skip("nginx not found: the generated snippet is not tested in nginx (apt-get install nginx)")
	return ""
}

// TestNginxServesWithTheSnippet serves a built site with Debian's nginx on
// loopback, configured by nothing but the generated rsgen-nginx.conf
// included in a plain server block, and checks with a real HTTP client the
// content types, the cache policy and the Link headers.
func TestNginxServesWithTheSnippet(t *testing.T) {
	bin := nginxPath(t)
	port := freeport.Get(t)
	base := fmt.Sprintf("http://127.0.0.1:%d/", port)
	s := hostingSite(t, base, func(c *config.Config) {
		c.Publish.Targets = []config.Target{"nginx"}
		c.Dumps.ResourceDump = true
	})
	s.write("books/a b#1.txt", "odd name")
	s.build(t0)
	s.write("books/c.txt", "c")
	s.build(t0.Add(time.Minute))
	s.write("books/d.txt", "d")
	s.build(t0.Add(90 * time.Minute)) // closes the books' first Change List, which holds an event

	servertest.ServeNginx(t, bin, s.Out, port)
	client := &http.Client{Timeout: 5 * time.Second}

	const short, forever = "public, max-age=300", "public, max-age=31536000, immutable"
	books := "<" + base + `resourcesync/books/capabilitylist.xml>; rel="resourcesync"`
	tables := "<" + base + `resourcesync/tables/capabilitylist.xml>; rel="resourcesync"`
	pkg := s.doc("resourcesync/books/resourcedump.xml").Entries[0].Loc
	for _, tc := range []struct {
		path, contentType, cache string
		links                    []string
		status                   int
	}{
		{path: ".well-known/resourcesync", contentType: "application/xml", cache: short},
		{path: "resourcesync/books/capabilitylist.xml", contentType: "application/xml", cache: short},
		{path: "resourcesync/books/resourcelist.xml", contentType: "application/xml", cache: short},
		{path: "resourcesync/books/changelist.xml", contentType: "application/xml", cache: short},
		{path: "resourcesync/books/changelists/changelist-20240301T080000Z.xml", contentType: "application/xml", cache: forever},
		{path: "resourcesync/books/changelists/changelist-20240301T093000Z.xml", contentType: "application/xml", cache: short},
		{path: strings.TrimPrefix(pkg, base), contentType: "application/zip", cache: forever},
		{path: "resourcesync/_stylesheet.xsl", contentType: "application/xslt+xml", cache: short},
		{path: "books/a.txt", contentType: "text/plain", links: []string{books}},
		{path: "books/deep/b.txt", contentType: "text/plain", links: []string{books}},
		{path: "books/a%20b%231.txt", contentType: "text/plain", links: []string{books}},
		{path: "data/t.csv", links: []string{tables}},
		{path: "data/notes.txt", contentType: "text/plain"},
		{path: "rsgen-nginx.conf", status: http.StatusNotFound},
	} {
		resp, err := client.Get(base + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := tc.status
		if want == 0 {
			want = http.StatusOK
		}
		if resp.StatusCode != want {
			t.Errorf("GET /%s: %s, want %d", tc.path, resp.Status, want)
			continue
		}
		if want != http.StatusOK {
			continue
		}
		if ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";"); tc.contentType != "" && ct != tc.contentType {
			t.Errorf("GET /%s: Content-Type %q, want %q", tc.path, ct, tc.contentType)
		}
		if cc := resp.Header.Get("Cache-Control"); cc != tc.cache {
			t.Errorf("GET /%s: Cache-Control %q, want %q", tc.path, cc, tc.cache)
		}
		if links := resp.Header.Values("Link"); !slices.Equal(links, tc.links) {
			t.Errorf("GET /%s: Link %q, want %q", tc.path, links, tc.links)
		}
	}
}
