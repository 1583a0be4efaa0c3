package checker

import (
	"strings"
	"testing"
)

// manifestEntry is the entry of a Resource Dump Manifest for res/a.txt at
// path.
func manifestEntry(path string) string {
	return "  <url>\n    <loc>http://example.org/res/a.txt</loc>\n    <rs:md path=\"" + path + "\" length=\"6\" type=\"text/plain\"/>\n  </url>\n</urlset>"
}

// manifestHead is the Resource Dump Manifest of the valid site up to its
// first entry.
func manifestHead(t *testing.T) string {
	m := mustRead(t, "resourcedump-1-manifest.xml")
	return m[:strings.Index(m, "  <url>")]
}

// TestLocDuplicateInDumps checks that a resource is listed once in a
// Resource Dump: within one manifest (the document rule) and across the
// manifests of its packages (the walk).
func TestLocDuplicateInDumps(t *testing.T) {
	tests := []struct {
		name   string
		edits  []edit
		inFile string // the document the finding is about
	}{
		{"one manifest", []edit{
			{"resourcedump-1.zip!/manifest.xml", "</urlset>", manifestEntry("/res/a-again.txt")},
			{"resourcedump-1-manifest.xml", "</urlset>", manifestEntry("/res/a-again.txt")},
			{"resourcedump-1.zip!/res/a-again.txt", "", "alpha\n"},
		}, "resourcedump-1.zip!/manifest.xml"},
		{"two packages", []edit{
			{"resourcedump.xml", "</urlset>", "  <url>\n    <loc>http://example.org/resourcedump-2.zip</loc>\n    <rs:md type=\"application/zip\" length=\"{{len:resourcedump-2.zip}}\"/>\n  </url>\n</urlset>"},
			{"resourcedump-2.zip!/manifest.xml", "", manifestHead(t) + manifestEntry("/res/a.txt") + "\n"},
			{"resourcedump-2.zip!/res/a.txt", "", "alpha\n"},
		}, "resourcedump-2.zip!/manifest.xml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := buildSite(t, editSite(t, tt.edits))
			rep, err := CheckDir(t.Context(), dir, Options{BaseURL: "http://example.org/"})
			if err != nil {
				t.Fatal(err)
			}
			wantRules(t, rep, "loc-duplicate")
			for _, f := range rep.Findings {
				if !strings.HasSuffix(f.File, tt.inFile) || f.Severity != Error {
					t.Errorf("finding %s; want an error in %s", f, tt.inFile)
				}
			}
		})
	}
}
