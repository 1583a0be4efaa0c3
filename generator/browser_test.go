package generator_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/serve"
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
	t.Skip("chromium not found: the stylesheet is not tested in a browser (apt-get install chromium)")
	return ""
}

// chromium runs headless Chromium on url with args and returns its stdout.
func chromium(t *testing.T, bin, url string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), url)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", url, err, stderr.String())
	}
	return string(out)
}

var (
	entryRow = regexp.MustCompile(`<tr class="entry">`)
	countDD  = regexp.MustCompile(`<dd id="count">(\d+)</dd>`)
	titleH1  = regexp.MustCompile(`<h1>([^<]*)</h1>`)
)

// TestStylesheetRendersInChromium opens a Resource List and a Change List
// in headless Chromium over loopback, as a person would, and checks that
// the stylesheet turned each into a table with one row per entry. It
// takes a screenshot of the Resource List, and of each with RSGEN_STRESS=1
// or $RSGEN_SCREENSHOTS set (where they are kept): a Chromium start each.
func TestStylesheetRendersInChromium(t *testing.T) {
	t.Parallel() // among the longest tests of the package: they overlap
	bin := chromiumPath(t)
	s := newSite(t, testBaseURL, func(c *config.Config) {
		c.Sets = []config.Set{{Name: "books", Path: "books"}}
		c.Publish.Stylesheet = true // off by default
	})
	for i := range 7 {
		s.write("books/b"+strconv.Itoa(i)+".txt", "book "+strconv.Itoa(i))
	}
	s.build(t0)
	s.replace("books/b1.txt", "changed")
	s.remove("books/b2.txt")
	s.write("books/new.txt", "new")
	s.build(t0.Add(time.Minute))

	h, err := serve.New(serve.Options{Dir: s.Out, BaseURL: testBaseURL})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	for _, tc := range []struct {
		doc, title string
		rows       int
	}{
		{"resourcesync/books/resourcelist.xml", "Resource List", 7},
		{"resourcesync/books/changelists/changelist-20240301T080000Z.xml", "Change List", 3},
		{"resourcesync/books/capabilitylist.xml", "Capability List", 2},
	} {
		url := srv.URL + "/pub/" + tc.doc
		dom := chromium(t, bin, url, "--dump-dom")
		if m := titleH1.FindStringSubmatch(dom); m == nil || m[1] != tc.title {
			t.Errorf("%s: heading %v, want %q; DOM:\n%.2000s", tc.doc, m, tc.title, dom)
		}
		if n := len(entryRow.FindAllString(dom, -1)); n != tc.rows {
			t.Errorf("%s: the table has %d rows, want %d", tc.doc, n, tc.rows)
		}
		if m := countDD.FindStringSubmatch(dom); m == nil || m[1] != strconv.Itoa(tc.rows) {
			t.Errorf("%s: count %v, want %d", tc.doc, m, tc.rows)
		}
		dir := os.Getenv("RSGEN_SCREENSHOTS")
		if dir == "" && !stress() && tc.title != "Resource List" {
			continue
		}
		if dir == "" {
			dir = t.TempDir()
		}
		shot := filepath.Join(dir, strings.ReplaceAll(filepath.Base(tc.doc), ".xml", ".png"))
		chromium(t, bin, url, "--window-size=1280,900", "--screenshot="+shot)
		if data, err := os.ReadFile(shot); err != nil || !strings.HasPrefix(string(data), "\x89PNG") || len(data) < 10000 {
			t.Errorf("no screenshot of a rendered page for %s (%d bytes): %v", tc.doc, len(data), err)
		}
	}
}
