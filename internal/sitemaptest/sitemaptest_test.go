package sitemaptest

import (
	"errors"
	"path/filepath"
	"testing"
)

// TestReadsSpecExamples reads two of the spec's examples (vendored under
// testdata/spec-examples at the repository root) and checks what a test
// would look at.
func TestReadsSpecExamples(t *testing.T) {
	d, err := ReadFile(filepath.Join("..", "..", "testdata", "spec-examples", "ex-02.xml"))
	if err != nil {
		t.Fatal(err)
	}
	es := d.Entries()
	if d.XMLName.Local != "urlset" || d.MD().Capability != "resourcelist" || d.MD().At != "2013-01-03T09:00:00Z" || len(es) != 2 {
		t.Fatalf("ex-02: %+v", d)
	}
	if es[0].Lastmod != "2013-01-02T13:00:00Z" || es[0].MD().Hash != "md5:1584abdf8ebdc9802ac0c6a7402c03b6" || len(es[0].Links) != 0 {
		t.Errorf("ex-02 entry 1: %+v", es[0])
	}
	if len(es[1].Links) != 1 || es[1].Links[0].Rel != "duplicate" || es[1].Links[0].Href != "http://mirror.example.com/res2" {
		t.Errorf("ex-02 entry 2 links: %+v", es[1].Links)
	}
	if a := es[1].Links[0].Attrs(); len(a) != 2 || a[0].Name.Local != "rel" || a[1].Value != "http://mirror.example.com/res2" {
		t.Errorf("ex-02 entry 2 link attributes: %+v", a)
	}

	d, err = ReadFile(filepath.Join("..", "..", "testdata", "spec-examples", "ex-12.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if d.MD().Capability != "capabilitylist" || d.Link("up") != "http://example.com/resourcesync_description.xml" || len(d.URLs) != 4 || d.URLs[3].MD().Capability != "changedump" {
		t.Errorf("ex-12: %+v", d)
	}
	if _, err := Parse([]byte(`<urlset/>`)); !errors.Is(err, ErrNotSitemap) {
		t.Errorf("a root outside the Sitemap namespace: %v", err)
	}
}
