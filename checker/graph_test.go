package checker

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// edit changes the valid site: it replaces old by new in file; with old
// and new empty it removes file (every member of a package for "P.zip!/");
// with only new it adds file.
type edit struct {
	file, old, new string
}

// siteCases break the valid site in one way each; the check must report
// the rule and nothing else.
var siteCases = []struct {
	rule   string
	verify bool
	edits  []edit
}{
	{"description-missing", false, []edit{{file: ".well-known/resourcesync"}, {file: "capabilitylist.xml"}}},
	{"document-missing", false, []edit{{"capabilitylist.xml", "http://example.org/changedump.xml", "http://example.org/gone.xml"}}},
	{"capability-mismatch", false, []edit{{"capabilitylist.xml", `<loc>http://example.org/changedump.xml</loc>
    <rs:md capability="changedump"/>`, `<loc>http://example.org/changedump.xml</loc>
    <rs:md capability="resourcedump-archive"/>`}}},
	{"capability-conflict", false, []edit{{"capabilitylist.xml", "http://example.org/changedump.xml", "http://example.org/changelist.xml"}}},
	{"up-mismatch", false, []edit{{"changelist.xml", `rel="up" href="http://example.org/capabilitylist.xml"`, `rel="up" href="http://example.org/other-capabilitylist.xml"`}}},
	{"index-link-missing", false, []edit{{"resourcelist-2.xml", `  <rs:ln rel="index" href="http://example.org/resourcelist-index.xml"/>` + "\n", ""}}},
	{"index-link-mismatch", false, []edit{{"resourcelist-2.xml", `rel="index" href="http://example.org/resourcelist-index.xml"`, `rel="index" href="http://example.org/resourcelist-1.xml"`}}},
	{"index-nested", false, []edit{
		{"resourcelist-index.xml", "</sitemapindex>", "  <sitemap>\n    <loc>http://example.org/resourcelist-index-2.xml</loc>\n  </sitemap>\n</sitemapindex>"},
		{"resourcelist-index-2.xml", "", `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="http://example.org/capabilitylist.xml"/>
  <rs:md capability="resourcelist" at="2026-01-01T00:00:00Z"/>
  <sitemap>
    <loc>http://example.org/resourcelist-2.xml</loc>
  </sitemap>
</sitemapindex>
`}}},
	{"index-child-time", false, []edit{{"resourcelist-index.xml", `<rs:md at="2026-01-01T00:00:00Z"/>`, `<rs:md at="2025-01-01T00:00:00Z"/>`}}},
	{"index-part-time", false, []edit{{"resourcelist-2.xml", `at="2026-01-01T00:00:00Z"`, `at="2025-12-31T00:00:00Z"`}}},
	{"loc-duplicate", false, []edit{{"resourcelist-2.xml", "</urlset>", "  <url>\n    <loc>http://example.org/res/a.txt</loc>\n  </url>\n</urlset>"}}},
	{"package-range", false, []edit{
		{"changedump-1.zip!/manifest.xml", `from="2025-12-01T00:00:00Z" until="2025-12-02T00:00:00Z"`, `from="2025-11-30T00:00:00Z" until="2025-12-02T00:00:00Z"`}}},
	{"external-skipped", false, []edit{{"capabilitylist.xml", "http://example.org/changedump.xml", "http://elsewhere.example.net/changedump.xml"}}},
	{"set-dump-missing", false, []edit{
		{"resourcedump-1.zip!/manifest.xml", "<url>\n    <loc>http://example.org/res/b.txt</loc>\n    <rs:md path=\"/res/b.txt\" length=\"5\" type=\"text/plain\"/>\n  </url>\n", ""},
		{"resourcedump-1-manifest.xml", "<url>\n    <loc>http://example.org/res/b.txt</loc>\n    <rs:md path=\"/res/b.txt\" length=\"5\" type=\"text/plain\"/>\n  </url>\n", ""},
		{file: "resourcedump-1.zip!/res/b.txt"}}},
	{"set-dump-extra", false, []edit{ // c d.txt leaves the list, b.txt moves to its part, so that no part is empty
		{"resourcelist-1.xml", "<url>\n    <loc>http://example.org/res/b.txt</loc>", "<url>\n    <loc>http://example.org/res/c%20d.txt</loc>"},
		{"resourcelist-2.xml", "<url>\n    <loc>http://example.org/res/c%20d.txt</loc>", "<url>\n    <loc>http://example.org/res/b.txt</loc>"},
		{"resourcelist-1.xml", "<url>\n    <loc>http://example.org/res/c%20d.txt</loc>\n    <lastmod>2025-12-01T11:00:00Z</lastmod>\n    <rs:md hash=\"sha-256:f2c82decdd7181cf98945929a62598db7e6b477e11f6e0eb0ae97020eff151ad\" length=\"5\" type=\"text/plain\"/>\n  </url>\n", ""}}},
	{"set-change-unknown", false, []edit{{"changelist.xml", "http://example.org/res/b.txt", "http://example.org/res/z.txt"}}},
	{"set-deleted-listed", false, []edit{{"changelist.xml", "http://example.org/res/old.txt", "http://example.org/res/c%20d.txt"}}},
	{"zip-invalid", false, []edit{{file: "resourcedump-1.zip!/"}, {"resourcedump-1.zip", "", "not a ZIP file\n"}}},
	{"zip-manifest-missing", false, []edit{{file: "changedump-1.zip!/manifest.xml"}}},
	{"zip-path-missing", false, []edit{{file: "changedump-1.zip!/changes/b.txt"}}},
	{"zip-entry-unlisted", false, []edit{{"changedump-1.zip!/changes/extra.txt", "", "extra\n"}}},
	{"zip-length", false, []edit{{"changedump-1.zip!/changes/a.txt", "alpha", "alpha!"}}},
	{"zip-hash", false, []edit{{"resourcedump-1.zip!/res/a.txt", "alpha", "alpHa"}}},
	{"contents-mismatch", false, []edit{{"resourcedump-1-manifest.xml", `at="2026-01-01T00:00:00Z"`, `at="2026-01-01T00:00:00.0Z"`}}},
	{"package-length", false, []edit{{"changedump.xml", `length="{{len:changedump-1.zip}}"`, `length="10"`}}},
	{"package-hash", false, []edit{{"resourcedump.xml", `hash="sha-256:{{sha-256:resourcedump-1.zip}}"`, `hash="sha-256:{{sha-256:changedump-1.zip}}"`}}},
	{"content-missing", true, []edit{{file: "res/b.txt"}}},
	{"content-length", true, []edit{{"resourcelist-1.xml", `length="5"`, `length="50"`}}},
	{"content-hash", true, []edit{{"res/a.txt", "alpha", "alpHa"}}},
	// A change after the Resource List's at says what the resource is now.
	{"content-length", true, []edit{{"changelist.xml", `<rs:md change="created" datetime="2025-12-01T11:00:00Z"/>`,
		`<rs:md change="updated" datetime="2026-01-02T00:00:00Z" length="50"/>`}}},
}

// editSite applies edits to the archive of the valid site and writes the
// result to a new file.
func editSite(t *testing.T, edits []edit) string {
	t.Helper()
	ar, err := txtar.ParseFile("testdata/sites/valid.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range edits {
		applyEdit(t, ar, e)
	}
	p := filepath.Join(t.TempDir(), "site.txtar")
	if err := os.WriteFile(p, txtar.Format(ar), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func applyEdit(t *testing.T, ar *txtar.Archive, e edit) {
	i := fileIndex(ar, e.file)
	switch {
	case e.old == "" && e.new == "":
		kept := ar.Files[:0]
		for _, f := range ar.Files {
			if f.Name != e.file && !(strings.HasSuffix(e.file, "!/") && strings.HasPrefix(f.Name, e.file)) {
				kept = append(kept, f)
			}
		}
		if len(kept) == len(ar.Files) {
			t.Fatalf("no file %s to remove", e.file)
		}
		ar.Files = kept
	case e.old == "" && i < 0:
		ar.Files = append(ar.Files, txtar.File{Name: e.file, Data: []byte(e.new)})
	case i < 0:
		t.Fatalf("no file %s in valid.txtar", e.file)
	case !strings.Contains(string(ar.Files[i].Data), e.old):
		t.Fatalf("%s does not contain %q", e.file, e.old)
	default:
		ar.Files[i].Data = []byte(strings.Replace(string(ar.Files[i].Data), e.old, e.new, 1))
	}
}

func fileIndex(ar *txtar.Archive, name string) int {
	for i, f := range ar.Files {
		if f.Name == name {
			return i
		}
	}
	return -1
}

func TestSiteRules(t *testing.T) {
	for _, tc := range siteCases {
		t.Run(tc.rule, func(t *testing.T) {
			dir := buildSite(t, editSite(t, tc.edits))
			rep, err := CheckDir(t.Context(), dir, Options{BaseURL: "http://example.org/", VerifyContent: tc.verify})
			if err != nil {
				t.Fatal(err)
			}
			if got := ruleSet(rep.Findings); len(got) != 1 || got[0] != tc.rule {
				t.Errorf("got rules %v, want only %s:\n%s", got, tc.rule, findingLines(rep.Findings))
			}
		})
	}
}

func ruleSet(fs []Finding) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range fs {
		if !seen[f.Rule] {
			seen[f.Rule] = true
			out = append(out, f.Rule)
		}
	}
	sort.Strings(out)
	return out
}
