package generator

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/snapshot"
)

// linksConfig gives two sets every link rule of §14: mirrors, metadata,
// alternates, collections and versions with patches in one, and a
// republished set with canonical links in the other.
func linksConfig(t *testing.T, root string) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Dir, cfg.BaseURL = root, "https://data.example.org/"
	cfg.Sets = []config.Set{
		{Name: "collection", Path: "collection", SetLinks: config.SetLinks{
			Mirrors: []config.Mirror{{BaseURL: "https://mirror1.example.net/", Pri: 1}, {BaseURL: "https://mirror2.example.net/data/", Pri: 2}},
			Metadata: []config.Metadata{{Objects: "data/*.pdf", Records: "metadata/*.dc.xml",
				Profile: "http://purl.org/dc/elements/1.1/"}},
			Alternates:   "alternate",
			Collections:  []config.Collection{{Href: "https://data.example.org/collections/maps", Match: []string{"maps"}}},
			KeepVersions: true,
			Patches:      true,
		}},
		{Name: "republished", Path: "origin", SetLinks: config.SetLinks{
			Via: "https://origin.example.org/harbour/", Alternates: "canonical"}},
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return &cfg
}

// TestGoldenLinks checks the links of every relation of §14 in Resource
// Lists and Change Lists, the kept versions, TimeMaps and JSON Patches.
func TestGoldenLinks(t *testing.T) {
	inBothModes(t, func(t *testing.T) {
		root := t.TempDir()
		src := filepath.Join(root, "site")
		writeTree(t, src, map[string]string{
			"collection/data/report.pdf":         "%PDF-1.4 report",
			"collection/data/unpaired.pdf":       "%PDF-1.4 no record",
			"collection/metadata/report.dc.xml":  "<dc><title>Report</title></dc>",
			"collection/maps/harbour.html":       "<p>harbour</p>",
			"collection/maps/harbour.png":        "\x89PNG\r\n\x1a\n",
			"collection/records.json":            `{"records":[{"id":1,"name":"pier"}],"count":1}`,
			"origin/tides.csv":                   "time,height\n",
			"origin/tides.json":                  `{"tides":[]}`,
			"collection/maps/notes/harbour.txt":  "not a sibling: another folder",
			"collection/metadata/orphan.dc.xml":  "<dc/>",
			"collection/data/sub/report.pdf":     "%PDF-1.4 the * matches one path element only",
			"collection/metadata/sub/report.xml": "<dc/>",
		})
		// The republished files carry the origin's Last-Modified, as fetch
		// tools (wget -N, curl -R) leave it.
		origin := time.Date(2025, 12, 24, 6, 0, 0, 0, time.UTC)
		for _, p := range []string{"origin/tides.csv", "origin/tides.json"} {
			if err := os.Chtimes(filepath.Join(src, p), origin, origin); err != nil {
				t.Fatal(err)
			}
		}
		cfg := linksConfig(t, root)
		buildAt(t, cfg, "2026-01-01T00:00:00Z", limits{})
		writeTree(t, src, map[string]string{
			"collection/records.json":    `{"records":[{"id":1,"name":"pier"},{"id":2,"name":"a/b~c"}],"count":2}`,
			"collection/data/report.pdf": "%PDF-1.4 report, revised",
		})
		buildAt(t, cfg, "2026-01-01T00:30:00Z", limits{})
		writeTree(t, src, map[string]string{"collection/records.json": `{"records":[{"id":2,"name":"a/b~c"}],"count":1,"note":null}`})
		if err := os.Remove(filepath.Join(src, "collection/maps/harbour.png")); err != nil {
			t.Fatal(err)
		}
		buildAt(t, cfg, "2026-01-01T01:00:00Z", limits{})
		compareWithGolden(t, cfg.Out, "testdata/golden/links")
	})
}

// TestSameStemSearchesOneRun: the files sharing a stem are found in walk
// order by searching the run of paths that begin with it, skipping a
// folder whose name begins so, and leaving out the files whose stem only
// begins so.
func TestSameStemSearchesOneRun(t *testing.T) {
	var recs []snapshot.Record
	for _, p := range []string{
		"a/report", "a/report-2.txt", "a/report.a.txt", "a/report.d/report.x", "a/report.d/z.txt",
		"a/report.html", "a/report.html.bak", "a/report.pdf", "a/report/x.txt", "a/reports.txt", "b/report.txt",
	} {
		recs = append(recs, snapshot.Record{Path: p})
	}
	slices.SortFunc(recs, func(x, y snapshot.Record) int { return layout.ComparePaths(x.Path, y.Path) })
	files := snapshot.RecordsOf(recs...)
	var got []string
	group, err := sameStem(&files, "a/report")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range group {
		got = append(got, r.Path)
	}
	if want := []string{"a/report.html", "a/report.pdf"}; !slices.Equal(got, want) {
		t.Errorf("sameStem(a/report) = %q, want %q", got, want)
	}
	if got, err := sameStem(&files, "a/missing"); len(got) != 0 || err != nil {
		t.Errorf("sameStem(a/missing) = %v, %v", got, err)
	}
}
