package generator_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
)

// TestRewrittenPagesTrustedWhileTagsStay: a page html_link rewrote is not
// read again by a build while its source and the tags stay the same (its
// record keeps its source's size beside the published one); it is read
// again, and published with its new tags, when the sets change, and
// published again when the output was wiped.
func TestRewrittenPagesTrustedWhileTagsStay(t *testing.T) {
	s := newSite(t, testBaseURL, func(c *config.Config) { c.Publish.HTMLLink = true })
	page := "<html><head><title>p</title></head><body>" + strings.Repeat("p", 100) + "</body></html>"
	s.write("a/page.html", page)
	s.write("b.txt", "b")
	for _, p := range []string{"a/page.html", "b.txt"} {
		s.touch(p, time.Now().Add(-time.Hour)) // older than the scan: trusted by stat
	}
	s.build(t0)
	published := string(s.outFile("a/page.html"))
	if !strings.Contains(published, `rel="resourcesync"`) {
		t.Fatalf("published page %q has no link", published)
	}
	if sum := s.build(t0.Add(time.Hour)); sum.Hashed != 0 {
		t.Errorf("a build with nothing changed read %d files; want none", sum.Hashed)
	}
	if got := string(s.outFile("a/page.html")); got != published {
		t.Errorf("the page was published again as %q", got)
	}
	s.Cfg.Sets = []config.Set{{Name: "default"}, {Name: "pages", Path: "a"}}
	if sum := s.build(t0.Add(2 * time.Hour)); sum.Hashed != 1 {
		t.Errorf("a build after the sets changed read %d files; want the page", sum.Hashed)
	}
	if got := string(s.outFile("a/page.html")); !strings.Contains(got, "/pages/capabilitylist.xml") {
		t.Errorf("the page keeps its old tags: %q", got)
	}
	if err := os.RemoveAll(s.Out); err != nil {
		t.Fatal(err)
	}
	if sum := s.build(t0.Add(3 * time.Hour)); sum.Hashed != 1 {
		t.Errorf("a build into a wiped output read %d files; want the page", sum.Hashed)
	}
	if _, err := os.Stat(filepath.Join(s.Out, "a", "page.html")); err != nil {
		t.Errorf("the page is not published again: %v", err)
	}
}
