package serve_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// chromiumPath returns the Chromium binary, or skips the test when there
// is none, unless RSGEN_REQUIRE_CHROMIUM=1 (then it fails).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("RSGEN_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("chromium not found and RSGEN_REQUIRE_CHROMIUM=1 (apt-get install chromium)")
	}
	t.Skip("chromium not found: live reload is not tested in a browser (apt-get install chromium)")
	return ""
}

// dumpDOM runs headless Chromium on url and returns the DOM it ends with.
func dumpDOM(t *testing.T, bin, url string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir(), "--dump-dom"}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), url)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", url, err, stderr.String())
	}
	return string(out)
}

// TestLiveReloadInChromium runs the live-reload script in headless
// Chromium: a page open during a failed build shows the error over
// itself without reloading, and reloads, without the error, after the
// next build. The server drives the steps from the page's own requests:
// its subscription starts the failed build, the page's report that it
// shows the error starts the good one, and the page's load (an image the
// server holds) ends only once it was loaded again.
func TestLiveReloadInChromium(t *testing.T) {
	bin := chromiumPath(t)
	fx, dev := devFixture(t)
	fx.put("page.html", `<html><body><img src="/hold"><script>
var n = +(sessionStorage.getItem("loads") || 0) + 1;
sessionStorage.setItem("loads", n);
document.body.setAttribute("data-loads", n);
new MutationObserver(function () {
  if (document.getElementById("rsgen-dev-error")) fetch("/shown?loads=" + n);
}).observe(document.body, {childList: true});
</script></body></html>`)
	var (
		mu         sync.Mutex
		loads      int
		shownAt    string // the page's loads when it showed the error
		subscribed sync.Once
		reloaded   = make(chan struct{})
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page.html":
			mu.Lock()
			if loads++; loads == 2 {
				close(reloaded)
			}
			mu.Unlock()
		case "/resourcesync/_dev/events":
			subscribed.Do(func() { go dev.Built(errors.New("scan site: permission denied")) })
		case "/shown":
			mu.Lock()
			shownAt = r.URL.Query().Get("loads")
			mu.Unlock()
			go dev.Built(nil)
			return
		case "/hold":
			select {
			case <-reloaded:
			case <-r.Context().Done():
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		dev.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	dom := dumpDOM(t, bin, srv.URL+"/page.html")
	mu.Lock()
	defer mu.Unlock()
	if shownAt != "1" {
		t.Errorf("the error was shown at load %q, want over the first load, without reloading", shownAt)
	}
	if loads != 2 || !strings.Contains(dom, `data-loads="2"`) {
		t.Errorf("%d loads, want the page reloaded once after the good build; DOM:\n%s", loads, dom)
	}
	if strings.Contains(dom, `<pre id="rsgen-dev-error"`) || strings.Contains(dom, "data-error") {
		t.Errorf("the error is still shown after the good build; DOM:\n%s", dom)
	}
}

// TestBuildErrorOverlayUnderCSP: the overlay that shows a failed build is
// styled on the document browser's own page, whose Content-Security-Policy
// refuses inline styles: it covers the page (position fixed), instead of
// landing unstyled below the footer of a page that looks healthy. The
// page is served by the development server with a probe of the test's
// (a script of the same origin, which the policy allows) that reports the
// overlay's computed style, and an image the server holds until then.
func TestBuildErrorOverlayUnderCSP(t *testing.T) {
	bin := chromiumPath(t)
	_, dev := devFixture(t)
	const probe = `new MutationObserver(function () {
  var box = document.getElementById("rsgen-dev-error");
  if (!box || document.documentElement.dataset.overlay) return;
  var cs = getComputedStyle(box);
  document.documentElement.dataset.overlay = cs.position + " " + cs.zIndex;
  fetch("/shown");
}).observe(document.documentElement, {childList: true, subtree: true});`
	var subscribed sync.Once
	shown := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/probe.js":
			w.Header().Set("Content-Type", "text/javascript")
			io.WriteString(w, probe)
			return
		case "/shown":
			once.Do(func() { close(shown) })
			return
		case "/hold":
			select {
			case <-shown:
			case <-r.Context().Done():
			}
			w.WriteHeader(http.StatusNoContent)
			return
		case "/resourcesync/_dev/events":
			subscribed.Do(func() { go dev.Built(errors.New("scan site: permission denied")) })
		case "/resourcesync/":
			rec := httptest.NewRecorder()
			dev.ServeHTTP(rec, r)
			page := rec.Body.String()
			if !strings.Contains(page, "Content-Security-Policy") {
				t.Errorf("the document browser's page has no Content-Security-Policy:\n%s", page)
			}
			page = strings.Replace(page, "<head>", `<head><script src="/probe.js"></script>`, 1)
			page = strings.Replace(page, "</body>", `<img src="/hold" alt="">`+"</body>", 1)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, page)
			return
		}
		dev.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	dom := dumpDOM(t, bin, srv.URL+"/resourcesync/")
	if !strings.Contains(dom, `data-overlay="fixed 2147483647"`) {
		t.Errorf("the build error's overlay is not styled over the page (want position fixed on top); DOM:\n%s", dom)
	}
	if !strings.Contains(dom, "scan site: permission denied") {
		t.Errorf("the build error is not shown; DOM:\n%s", dom)
	}
}
