package checker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// archivedDump adds to the valid site a Resource Dump Archive that lists
// one earlier Resource Dump of one package.
var archivedDump = []edit{
	{"capabilitylist.xml", "</urlset>", `  <url>
    <loc>http://example.org/resourcedump-archive.xml</loc>
    <rs:md capability="resourcedump-archive"/>
  </url>
</urlset>`},
	{"resourcedump-archive.xml", "", `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="http://example.org/capabilitylist.xml"/>
  <rs:md capability="resourcedump-archive"/>
  <url>
    <loc>http://example.org/resourcedump-old.xml</loc>
    <rs:md at="2025-06-01T00:00:00Z"/>
  </url>
</urlset>
`},
	{"resourcedump-old.xml", "", `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="http://example.org/capabilitylist.xml"/>
  <rs:md capability="resourcedump" at="2025-06-01T00:00:00Z"/>
  <url>
    <loc>http://example.org/resourcedump-old-1.zip</loc>
    <rs:md type="application/zip" length="{{len:resourcedump-old-1.zip}}"/>
  </url>
</urlset>
`},
	{"resourcedump-old-1.zip!/manifest.xml", "", `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="http://example.org/capabilitylist.xml"/>
  <rs:md capability="resourcedump-manifest" at="2025-06-01T00:00:00Z"/>
  <url>
    <loc>http://example.org/res/a.txt</loc>
    <rs:md path="/res/a.txt" hash="md5:9f9f90dbe3e5ee1218c86b8839db1995" length="6" type="text/plain"/>
  </url>
</urlset>
`},
	{"resourcedump-old-1.zip!/res/a.txt", "", "alpha\n"},
}

// TestArchivedDumpPackages checks that --verify-content reads the packages
// of archived Resource Dumps like those of the current one.
func TestArchivedDumpPackages(t *testing.T) {
	check := func(t *testing.T, dir string, verify bool) Report {
		t.Helper()
		rep, err := CheckDir(t.Context(), dir, Options{BaseURL: "http://example.org/", VerifyContent: verify})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	t.Run("valid", func(t *testing.T) {
		dir := buildSite(t, editSite(t, archivedDump))
		rep := check(t, dir, true)
		wantRules(t, rep)
		// the valid site's 9, the archive and the archived dump; the
		// archived dump's package besides the valid site's 2
		if rep.Documents != 11 || rep.Packages != 3 {
			t.Errorf("read %d documents and %d packages, want 11 and 3", rep.Documents, rep.Packages)
		}
		wantRules(t, check(t, dir, false))
	})
	t.Run("package deleted", func(t *testing.T) {
		dir := buildSite(t, editSite(t, archivedDump))
		if err := os.Remove(filepath.Join(dir, "resourcedump-old-1.zip")); err != nil {
			t.Fatal(err)
		}
		wantRules(t, check(t, dir, true), "document-missing")
		wantRules(t, check(t, dir, false)) // packages of archived dumps are read with --verify-content only
	})
	t.Run("a resource in two packages", func(t *testing.T) {
		edits := append(append([]edit(nil), archivedDump...),
			edit{"resourcedump-old.xml", "</urlset>", "  <url>\n    <loc>http://example.org/resourcedump-old-2.zip</loc>\n    <rs:md type=\"application/zip\" length=\"{{len:resourcedump-old-2.zip}}\"/>\n  </url>\n</urlset>"},
			edit{"resourcedump-old-2.zip!/manifest.xml", "", archivedManifest(t)},
			edit{"resourcedump-old-2.zip!/res/a.txt", "", "alpha\n"})
		rep := check(t, buildSite(t, editSite(t, edits)), true)
		wantRules(t, rep, "loc-duplicate")
		if f := rep.Findings[0]; !strings.HasSuffix(f.File, "resourcedump-old-2.zip!/manifest.xml") {
			t.Errorf("finding %s; want it in the second package's manifest", f)
		}
	})
	t.Run("bitstream altered", func(t *testing.T) {
		edits := append(append([]edit(nil), archivedDump...), edit{"resourcedump-old-1.zip!/res/a.txt", "alpha", "alpHa"})
		wantRules(t, check(t, buildSite(t, editSite(t, edits)), true), "zip-hash")
	})
}

// archivedManifest is the manifest of the archived dump's package.
func archivedManifest(t *testing.T) string {
	for _, e := range archivedDump {
		if e.file == "resourcedump-old-1.zip!/manifest.xml" {
			return e.new
		}
	}
	t.Fatal("archivedDump has no manifest")
	return ""
}
