package checker

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestEmptyDocuments: of the documents with no entries, only an open
// Change List passes --strict; any other is a warning (an empty <urlset>
// or <sitemapindex> fails sitemap.xsd), and a closed one an error.
func TestEmptyDocuments(t *testing.T) {
	const head = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<%s xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">` +
		"\n" + `  <rs:ln rel="up" href="http://example.com/capabilitylist.xml"/>` + "\n"
	for _, c := range []struct {
		name, root, md string
		want           []string
	}{
		{"open change list", "urlset", `capability="changelist" from="2026-01-01T00:00:00Z"`, nil},
		{"closed change list", "urlset", `capability="changelist" from="2026-01-01T00:00:00Z" until="2026-01-02T00:00:00Z"`, []string{"empty-closed"}},
		{"open change dump", "urlset", `capability="changedump" from="2026-01-01T00:00:00Z"`, []string{"empty-document"}},
		{"resource list", "urlset", `capability="resourcelist" at="2026-01-01T00:00:00Z"`, []string{"empty-document"}},
		{"change list index", "sitemapindex", `capability="changelist" from="2026-01-01T00:00:00Z"`, []string{"empty-document"}},
		{"change list archive", "urlset", `capability="changelist-archive"`, []string{"empty-document"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "doc.xml")
			doc := []byte(fmt.Sprintf(head, c.root) + `  <rs:md ` + c.md + `/>` + "\n</" + c.root + ">\n")
			if err := os.WriteFile(p, doc, 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err := CheckFile(t.Context(), p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			wantRules(t, rep, c.want...)
		})
	}
}
