package serve_test

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/serve"
)

const scriptTag = `<script src="/resourcesync/_dev/reload.js" data-events="/resourcesync/_dev/events?build=`

// devFixture is a fixture with a development Handler beside the plain one.
func devFixture(t *testing.T) (*fixture, *serve.Handler) {
	fx := newFixture(t)
	return fx, fx.handler(serve.Options{Dir: fx.cfg.Out, BaseURL: base, Dev: true})
}

// TestDevInjects: in development, HTML responses get the live-reload
// script before </body> (or at the end), with no ETag and no ranges;
// other files are served byte for byte as without it, and nothing is
// written into the output.
func TestDevInjects(t *testing.T) {
	fx, dev := devFixture(t)
	fx.put("page.html", "<html><body><p>x</p></BODY></html>")
	fx.put("bare.html", "<p>no body element</p>")
	for target, want := range map[string]string{
		"/page.html":       "<html><body><p>x</p>" + scriptTag + `0"></script></BODY></html>`,
		"/bare.html":       "<p>no body element</p>" + scriptTag + `0"></script>`,
		"/docs/":           "<p>docs</p>" + scriptTag + `0"></script>`,
		"/docs/index.html": "<p>docs</p>" + scriptTag + `0"></script>`,
	} {
		resp := do(dev, "GET "+target, "Range: bytes=0-3")
		if got := body(t, resp); resp.StatusCode != http.StatusOK || got != want {
			t.Errorf("GET %s: %s\n got %q\nwant %q", target, resp.Status, got, want)
		}
		if resp.Header.Get("ETag") != "" || resp.Header.Get("Last-Modified") != "" || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s: headers %v", target, resp.Header)
		}
		if resp.Header.Get("Content-Length") != "" && resp.ContentLength != int64(len(want)) {
			t.Errorf("GET %s: Content-Length %d, want %d", target, resp.ContentLength, len(want))
		}
	}
	viewer := body(t, do(dev, "GET /resourcesync/"))
	if !strings.Contains(viewer, scriptTag) {
		t.Errorf("the document browser has no script:\n%s", viewer)
	}
	if resp := do(dev, "HEAD /page.html"); body(t, resp) != "" || resp.StatusCode != http.StatusOK {
		t.Errorf("HEAD: %s", resp.Status)
	}
	data, err := os.ReadFile(filepath.Join(fx.cfg.Out, "page.html"))
	if err != nil || string(data) != "<html><body><p>x</p></BODY></html>" {
		t.Errorf("the file on disk: %q, %v", data, err)
	}
	// Without Dev, and for other files, nothing changes.
	if got := body(t, fx.do("GET /page.html")); got != "<html><body><p>x</p></BODY></html>" {
		t.Errorf("without Dev: %q", got)
	}
	for _, target := range []string{"/texts/a.txt", "/resourcesync/texts/resourcelist.xml", "/.well-known/resourcesync"} {
		plain, injected := fx.do("GET "+target), do(dev, "GET "+target)
		if a, b := body(t, plain), body(t, injected); a != b {
			t.Errorf("GET %s differs in Dev:\n%s\n%s", target, a, b)
		}
		if injected.Header.Get("ETag") == "" {
			t.Errorf("GET %s in Dev: no ETag", target)
		}
	}
	if resp := do(dev, "GET /texts/a.txt", "Range: bytes=2-5"); resp.StatusCode != http.StatusPartialContent {
		t.Errorf("a range of a text file in Dev: %s", resp.Status)
	}
	if resp := do(dev, "HEAD /resourcesync/_dev/events"); resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("HEAD of the events: %s, %v", resp.Status, resp.Header)
	}
	// The live-reload paths exist only in Dev.
	if resp := fx.do("GET /resourcesync/_dev/reload.js"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the script without Dev: %s", resp.Status)
	}
	if resp := do(dev, "GET /resourcesync/_dev/reload.js"); resp.StatusCode != http.StatusOK || !strings.Contains(body(t, resp), "EventSource") {
		t.Errorf("the script in Dev: %s", resp.Status)
	}
}

// stream is a client of the live-reload events.
type stream struct {
	t    *testing.T
	resp *http.Response
	r    *bufio.Reader
}

// subscribe opens the event stream as a page showing build shown would,
// and returns once the server has subscribed it.
func subscribe(t *testing.T, url string, shown int) *stream {
	t.Helper()
	req, err := http.NewRequest("GET", url+"/resourcesync/_dev/events?build="+strconv.Itoa(shown), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %s, %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	s := &stream{t: t, resp: resp, r: bufio.NewReader(resp.Body)}
	if ev := s.next(); !strings.Contains(ev, ": subscribed") {
		t.Fatalf("first event %q", ev)
	}
	return s
}

// next returns the next event, the lines up to a blank one.
func (s *stream) next() string {
	s.t.Helper()
	var ev strings.Builder
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			s.t.Fatalf("event stream: %v after %q", err, ev.String())
		}
		if line == "\n" {
			return ev.String()
		}
		ev.WriteString(line)
	}
}

// TestDevEvents: after Built, open pages get "reload", or after a failed
// build "build-error" with the error, which the HTML pages then show.
func TestDevEvents(t *testing.T) {
	_, dev := devFixture(t)
	srv := httptest.NewServer(dev)
	t.Cleanup(srv.Close) // after the streams' own cleanups close them

	s := subscribe(t, srv.URL, 0)
	dev.Built(nil)
	if ev := s.next(); ev != "event: reload\ndata: {\"build\":1}\n" {
		t.Errorf("after a build: %q", ev)
	}
	dev.Built(errors.New("scan site: <a> & \"b\"\nsecond line"))
	if ev := s.next(); ev != `event: build-error`+"\n"+`data: {"build":2,"error":"scan site: \u003ca\u003e \u0026 \"b\"\nsecond line"}`+"\n" {
		t.Errorf("after a failed build: %q", ev)
	}
	page := body(t, do(dev, "GET /docs/"))
	want := scriptTag + `2" data-error="scan site: &lt;a&gt; &amp; &#34;b&#34;` + "\nsecond line\"></script>"
	if !strings.HasSuffix(page, want) {
		t.Errorf("a page after a failed build:\n got %q\nwant suffix %q", page, want)
	}
	dev.Built(nil)
	if ev := s.next(); ev != "event: reload\ndata: {\"build\":3}\n" {
		t.Errorf("after the next build: %q", ev)
	}
	if page := body(t, do(dev, "GET /docs/")); strings.Contains(page, "data-error") {
		t.Errorf("the error stays after a good build: %q", page)
	}

	// A page that shows an older build than the last gets the news at
	// once: it missed it between its response and its subscription.
	late := subscribe(t, srv.URL, 2)
	if ev := late.next(); ev != "event: reload\ndata: {\"build\":3}\n" {
		t.Errorf("a late subscriber: %q", ev)
	}
}

// TestDevShutdown: shutting the server down ends the event streams, which
// would otherwise hold it until its deadline.
func TestDevShutdown(t *testing.T) {
	_, dev := devFixture(t)
	srv, err := serve.Start("127.0.0.1:0", dev)
	if err != nil {
		t.Fatal(err)
	}
	s := subscribe(t, "http://"+srv.Addr().String(), 0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with an open stream: %v", err)
	}
	if _, err := s.r.ReadString('\n'); err == nil {
		t.Error("the stream is still open")
	}
}
