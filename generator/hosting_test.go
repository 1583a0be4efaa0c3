package generator_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
)

var allTargets = config.Targets

// hostingSite is a site with a folder-shaped set, a set chosen by a glob,
// and a file in no set; Change Lists rotate every hour.
func hostingSite(t *testing.T, baseURL string, tweak func(*config.Config)) *site {
	t.Helper()
	s := newSite(t, baseURL, func(c *config.Config) {
		c.Sets = []config.Set{
			{Name: "books", Path: "books"},
			{Name: "tables", Path: "data", Include: []string{"*.csv"}},
		}
		c.ChangeList.Rotate = config.Duration{Duration: time.Hour}
		c.Publish.Targets = allTargets
		c.Publish.Stylesheet = true // its host rules are checked too
		if tweak != nil {
			tweak(c)
		}
	})
	s.write("books/a.txt", "a")
	s.write("books/deep/b.txt", "b")
	s.write("data/t.csv", "x,y\n")
	s.write("data/notes.txt", "not in a set")
	s.write("index.html", "<html><head></head></html>")
	return s
}

func TestHostingFilesFollowTheTargets(t *testing.T) {
	s := hostingSite(t, testBaseURL, nil)
	s.build(t0)
	for _, f := range []string{".nojekyll", "_headers", "rsgen-nginx.conf", ".htaccess"} {
		if _, err := os.Stat(filepath.Join(s.Out, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(s.Out, "robots.txt")); err == nil {
		t.Error("robots.txt written though [publish] robots is off")
	}
	// The hosting files are not resources.
	rl := string(s.outFile("resourcesync/books/resourcelist.xml")) + string(s.outFile("resourcesync/tables/resourcelist.xml"))
	for _, f := range []string{"_headers", ".nojekyll", "rsgen-nginx.conf", ".htaccess", generator.StylesheetPath} {
		if strings.Contains(rl, f+"</loc>") {
			t.Errorf("a Resource List lists %s", f)
		}
	}

	// A target turned off has its file removed by the next build.
	s.Cfg.Publish.Targets = []config.Target{"netlify"}
	s.build(t0.Add(time.Minute))
	for _, f := range []string{".nojekyll", "rsgen-nginx.conf", ".htaccess"} {
		if _, err := os.Stat(filepath.Join(s.Out, f)); err == nil {
			t.Errorf("%s still there after its target was turned off", f)
		}
	}
	if _, err := os.Stat(filepath.Join(s.Out, "_headers")); err != nil {
		t.Errorf("_headers removed though netlify is still a target: %v", err)
	}
	s.Cfg.Publish.Stylesheet = false
	s.Cfg.Publish.Targets = nil
	s.build(t0.Add(2 * time.Minute))
	for _, f := range []string{"_headers", generator.StylesheetPath} {
		if _, err := os.Stat(filepath.Join(s.Out, f)); err == nil {
			t.Errorf("%s still there after it was turned off", f)
		}
	}
	if bytes.Contains(s.outFile("resourcesync/books/resourcelist.xml"), []byte("xml-stylesheet")) {
		t.Error("the stylesheet instruction is still written with stylesheet = false")
	}
}

func TestHostingFileInTheSourceFailsTheBuild(t *testing.T) {
	s := hostingSite(t, testBaseURL, func(c *config.Config) { c.Publish.Robots = true })
	s.write("robots.txt", "User-agent: *\n")
	_, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: t0})
	if err == nil || !strings.Contains(err.Error(), "robots.txt would be overwritten by the file rsgen writes for [publish]") {
		t.Fatalf("build error %v, want one naming robots.txt and [publish]", err)
	}
}

func TestHeadersFileCachePolicyAndLinks(t *testing.T) {
	s := hostingSite(t, testBaseURL, nil)
	s.build(t0)
	s.write("books/c.txt", "c")
	s.build(t0.Add(time.Minute))
	s.write("books/d.txt", "d")
	s.build(t0.Add(90 * time.Minute)) // closes the books' first Change List, which holds an event
	rules := parseHeaders(t, string(s.outFile("_headers")))

	capURL := func(set string) string {
		return "<" + testBaseURL + "resourcesync/" + set + `/capabilitylist.xml>; rel="resourcesync"`
	}
	want := map[string][]string{
		"/pub/.well-known/resourcesync": {"Content-Type: application/xml", "Cache-Control: public, max-age=300"},
		"/pub/resourcesync/books/changelists/changelist-20240301T080000Z.xml": {"Content-Type: application/xml",
			"Cache-Control: public, max-age=31536000, immutable"},
		"/pub/resourcesync/books/changelists/changelist-20240301T093000Z.xml": {"Content-Type: application/xml",
			"Cache-Control: public, max-age=300"},
		"/pub/resourcesync/books/resourcelist.xml":    {"Content-Type: application/xml", "Cache-Control: public, max-age=300"},
		"/pub/resourcesync/tables/capabilitylist.xml": {"Content-Type: application/xml", "Cache-Control: public, max-age=300"},
		"/pub/resourcesync/_stylesheet.xsl":           {"Content-Type: application/xslt+xml", "Cache-Control: public, max-age=300"},
		// A folder-shaped set is one rule; a set chosen by a glob, one per file.
		"/pub/books/*":     {"Link: " + capURL("books")},
		"/pub/data/t.csv":  {"Link: " + capURL("tables")},
		"/pub/index.html":  nil,
		"/pub/data/*":      nil,
		"/pub/books/a.txt": nil,
	}
	for pattern, headers := range want {
		got, ok := rules[pattern]
		if headers == nil {
			if ok {
				t.Errorf("_headers has a rule for %s: %v", pattern, got)
			}
			continue
		}
		if strings.Join(got, "\n") != strings.Join(headers, "\n") {
			t.Errorf("_headers rule %s:\n%s\nwant\n%s", pattern, strings.Join(got, "\n"), strings.Join(headers, "\n"))
		}
	}
}

// parseHeaders reads a _headers file into its rules: pattern -> header lines.
func parseHeaders(t *testing.T, text string) map[string][]string {
	t.Helper()
	rules := map[string][]string{}
	pattern := ""
	for line := range strings.SplitSeq(text, "\n") {
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "  "):
			rules[pattern] = append(rules[pattern], strings.TrimSpace(line))
		default:
			if _, dup := rules[line]; dup {
				t.Errorf("_headers has two rules for %s", line)
			}
			pattern = line
			rules[pattern] = nil
		}
	}
	return rules
}

func TestRobotsNamesEveryResourceList(t *testing.T) {
	s := hostingSite(t, "https://data.example.org/", func(c *config.Config) { c.Publish.Robots = true })
	s.build(t0)
	got := string(s.outFile("robots.txt"))
	for _, set := range []string{"books", "tables"} {
		if line := "Sitemap: https://data.example.org/resourcesync/" + set + "/resourcelist.xml\n"; !strings.Contains(got, line) {
			t.Errorf("robots.txt lacks %q:\n%s", line, got)
		}
	}
}

func TestHTMLLinkIsInsertedBeforeHashing(t *testing.T) {
	t.Run("linked", func(t *testing.T) { testHTMLLink(t, "") })
	t.Run("copied", func(t *testing.T) {
		other := otherDeviceDir(t)
		if other == "" {
			t.Skip("no second file system for the source (set RSGEN_OTHER_FS)")
		}
		testHTMLLink(t, other)
	})
}

// testHTMLLink builds pages with html_link, their source under srcRoot
// when it is set (another file system: resources are copied, not linked).
func testHTMLLink(t *testing.T, srcRoot string) {
	s := newSite(t, testBaseURL, func(c *config.Config) {
		if srcRoot != "" {
			c.Source = filepath.Join(srcRoot, "src")
		}
		c.Sets = []config.Set{{Name: "pages", Path: "pages"}}
		c.Publish.HTMLLink = true
		c.Dumps.ResourceDump, c.Dumps.ChangeDump = true, true
	})
	page := "<!DOCTYPE html>\n<HTML><Head lang=\"en\">\n<title>t</title></head><body><header>h</header></body></HTML>\n"
	s.write("pages/p.html", page)
	s.write("pages/no-head.html", "<p>fragment</p>")
	s.write("pages/p.txt", "<head>")
	s.write("outside.html", "<html><head></head></html>")
	s.buildExpecting(t0, "pages/no-head.html: html_link: no <head> start tag") // CheckPublished verifies every length and hash against the output's bytes

	tag := `<link rel="resourcesync" href="` + testBaseURL + `resourcesync/pages/capabilitylist.xml">`
	want := strings.Replace(page, `<Head lang="en">`, `<Head lang="en">`+tag, 1)
	if got := string(s.outFile("pages/p.html")); got != want {
		t.Errorf("published page:\n%s\nwant\n%s", got, want)
	}
	for rel, src := range map[string]string{"pages/no-head.html": "<p>fragment</p>", "pages/p.txt": "<head>", "outside.html": "<html><head></head></html>"} {
		if got := string(s.outFile(rel)); got != src {
			t.Errorf("%s published as %q, want it unchanged", rel, got)
		}
	}
	if sameFile(t, s.src("pages/p.html"), filepath.Join(s.Out, "pages/p.html")) {
		t.Error("the rewritten page is a hard link to its source")
	}
	if got := string(readFileT(t, s.src("pages/p.html"))); got != page {
		t.Errorf("the source page was changed: %q", got)
	}

	// Unchanged, a build rewrites nothing; an edit is one update.
	before := statTree(t, s.Out)
	sum := s.build(t0.Add(time.Minute))
	if len(sum.Events) != 0 {
		t.Errorf("a build without changes found events %v", sum.Events)
	}
	if d := diffTrees(before, statTree(t, s.Out), true); len(d) > 0 {
		t.Errorf("a build without changes rewrote files:\n%v", d)
	}
	s.replace("pages/p.html", strings.Replace(page, "<title>t", "<title>u", 1))
	if sum := s.build(t0.Add(2 * time.Minute)); sum.Updated != 1 {
		t.Errorf("an edited page: %d updates, want 1", sum.Updated)
	}

	// A new base URL of the same length (confirmed: a rebase) changes the
	// inserted tag, not the source or its stat: the page is rewritten all
	// the same.
	s.Cfg.BaseURL = strings.Replace(testBaseURL, ".org/", ".net/", 1)
	s.Cfg.Dumps.ChangeDump = false
	s.buildWithOpts(generator.Options{Now: t0.Add(150 * time.Second), Rebase: true})
	if got := string(s.outFile("pages/p.html")); !strings.Contains(got, `href="`+s.Cfg.BaseURL+`resourcesync/pages/capabilitylist.xml"`) {
		t.Errorf("after a base URL change the page links\n%s", got)
	}

	// Turned off, the pages are published as their sources are.
	s.Cfg.Publish.HTMLLink = false
	s.build(t0.Add(3 * time.Minute))
	if got, src := s.outFile("pages/p.html"), readFileT(t, s.src("pages/p.html")); !bytes.Equal(got, src) {
		t.Errorf("with html_link off the page is published as\n%s", got)
	}
}

func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	ia, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	ib, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	return os.SameFile(ia, ib)
}

func readFileT(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
