package serve_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
	"github.com/rsgen/rsgen/serve"
)

// TestTopLeadsToViewer: the top of a site without an index.html leads to
// the document browser; a site's own index.html is its top.
func TestTopLeadsToViewer(t *testing.T) {
	fx := newFixture(t)
	resp := fx.do("GET /")
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/resourcesync/" {
		t.Fatalf("GET /: %s to %q, want 302 to /resourcesync/", resp.Status, resp.Header.Get("Location"))
	}
	resp = fx.do("GET /resourcesync/")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body(t, resp), "<title>") {
		t.Errorf("GET /resourcesync/: %s", resp.Status)
	}
	fx.write("index.html", "<p>home</p>")
	fx.build(t0.Add(time.Hour))
	if resp := fx.do("GET /"); resp.StatusCode != http.StatusOK || body(t, resp) != "<p>home</p>" {
		t.Errorf("GET / with an index.html: %s", resp.Status)
	}
}

// TestNoViewer: without the document browser, the top of a site without
// an index.html is not found.
func TestNoViewer(t *testing.T) {
	fx := newFixture(t, func(c *config.Config) { c.Publish.Viewer = false })
	if resp := fx.do("GET /"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /: %s, want 404", resp.Status)
	}
}

// TestBasePath: an output published at a base URL with a path is served
// at that path, as the hosts serve it; the top of the server leads there.
func TestBasePath(t *testing.T) {
	fx := newFixture(t, func(c *config.Config) { c.BaseURL = base + "pub/" })
	for target, location := range map[string]string{"/": "/pub/", "/pub": "/pub/", "/pub/": "/pub/resourcesync/"} {
		resp := fx.do("GET " + target)
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != location {
			t.Errorf("GET %s: %s to %q, want 302 to %s", target, resp.Status, resp.Header.Get("Location"), location)
		}
	}
	resp := fx.do("GET /pub/texts/a.txt")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Link") != "<"+base+`pub/resourcesync/texts/capabilitylist.xml>; rel="resourcesync"` {
		t.Errorf("GET /pub/texts/a.txt: %s, Link %q", resp.Status, resp.Header.Get("Link"))
	}
	for _, target := range []string{"/texts/a.txt", "/.well-known/resourcesync", "/publish"} {
		if resp := fx.do("GET " + target); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s, outside the base path: %s, want 404", target, resp.Status)
		}
	}
	if resp := fx.do("GET /pub/.well-known/resourcesync"); resp.StatusCode != http.StatusOK {
		t.Errorf("the Source Description: %s", resp.Status)
	}
}

// TestPublishedBaseURL: with no base URL configured, the Handler serves
// the output at the base URL its Source Description was published under,
// and follows a build for another one.
func TestPublishedBaseURL(t *testing.T) {
	fx := newFixture(t)
	got, err := serve.PublishedBaseURL(fx.cfg.Out)
	if err != nil || got != base {
		t.Fatalf("PublishedBaseURL: %q, %v; want %q", got, err, base)
	}
	h := fx.handler(serve.Options{Dir: fx.cfg.Out})
	want := "<" + base + `resourcesync/texts/capabilitylist.xml>; rel="resourcesync"`
	if resp := do(h, "GET /texts/a.txt"); resp.Header.Get("Link") != want {
		t.Errorf("Link %q, want %q", resp.Header.Get("Link"), want)
	}

	other := "http://localhost:9999/data/"
	fx.cfg.BaseURL = other
	if _, err := generator.Build(context.Background(), fx.cfg, generator.Options{Now: t0.Add(time.Hour), Rebase: true}); err != nil {
		t.Fatal(err)
	}
	want = "<" + other + `resourcesync/texts/capabilitylist.xml>; rel="resourcesync"`
	if resp := do(h, "GET /data/texts/a.txt"); resp.StatusCode != http.StatusOK || resp.Header.Get("Link") != want {
		t.Errorf("after a build for %s: %s, Link %q, want %q", other, resp.Status, resp.Header.Get("Link"), want)
	}

	empty := t.TempDir()
	if _, err := serve.PublishedBaseURL(empty); err == nil || !strings.Contains(err.Error(), "no Source Description") {
		t.Errorf("an empty folder: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(empty, ".well-known"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(empty, ".well-known", "resourcesync"), []byte("<html/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := serve.PublishedBaseURL(empty); err == nil || !strings.Contains(err.Error(), "not a ResourceSync") {
		t.Errorf("a Source Description that is not one: %v", err)
	}
}

// TestBrokenList: a Resource List that does not read is a server error
// naming it, not a silent lack of Link headers.
func TestBrokenList(t *testing.T) {
	fx := newFixture(t)
	fx.put("resourcesync/texts/resourcelist.xml", "<urlset")
	resp := fx.do("GET /texts/a.txt")
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body(t, resp), "resourcesync/texts/resourcelist.xml") {
		t.Errorf("%s", resp.Status)
	}
}

func TestSiteURL(t *testing.T) {
	loopback := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8000}
	anywhere := &net.TCPAddr{IP: net.IPv4zero, Port: 8000}
	for _, c := range []struct {
		base string
		addr *net.TCPAddr
		want string
		ok   bool
	}{
		{"http://localhost:8000/", loopback, "http://localhost:8000/", true},
		{"http://127.0.0.1:8000/pub/", loopback, "http://127.0.0.1:8000/pub/", true},
		{"http://localhost:8000/", anywhere, "http://localhost:8000/", true},
		{"http://[::1]:8000/", anywhere, "http://127.0.0.1:8000/", false}, // 0.0.0.0 is IPv4 only
		{"http://127.0.0.1:8001/", loopback, "http://127.0.0.1:8000/", false},
		{"https://localhost:8000/", loopback, "http://127.0.0.1:8000/", false},
		{"http://localhost/", loopback, "http://127.0.0.1:8000/", false},
		{"https://data.example.org/a%20b/", loopback, "http://127.0.0.1:8000/a%20b/", false},
	} {
		got, ok := serve.SiteURL(c.base, c.addr)
		if got != c.want || ok != c.ok {
			t.Errorf("SiteURL(%s, %s) = %s, %v; want %s, %v", c.base, c.addr, got, ok, c.want, c.ok)
		}
	}
	// A name that resolves to the listening address.
	host, err := os.Hostname()
	if err != nil {
		t.Skip(err)
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		t.Skipf("%s does not resolve: %v", host, err)
	}
	addr := &net.TCPAddr{IP: ips[0], Port: 8000}
	if got, ok := serve.SiteURL("http://"+host+":8000/", addr); !ok {
		t.Errorf("SiteURL(http://%s:8000/, %s) = %s, not the base", host, addr, got)
	}
}
