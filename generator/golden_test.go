package generator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/viewer"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenFormatFile records the output format the golden files were made
// with, and their digest (see TestGoldenFilesRecordTheOutputFormat).
const goldenFormatFile = "testdata/golden/FORMAT"

// TestMain records, after a run with -update that passed, the output
// format and the digest of the golden files it wrote; it fails when they
// changed and OutputFormat did not.
func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if code == 0 && *update {
		if err := recordGoldenFormat(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// TestGoldenFilesRecordTheOutputFormat: the golden files are those made
// with this OutputFormat. A change that changes their bytes must bump it,
// so that a build whose state was written by an rsgen of another format
// writes every document again, rather than trust what the older rsgen
// published (see unchanged.go).
func TestGoldenFilesRecordTheOutputFormat(t *testing.T) {
	if *update {
		t.Skip("a run with -update records the format once the golden tests have written their files (TestMain)")
	}
	format, digest, err := readGoldenFormat()
	if err != nil {
		t.Fatal(err)
	}
	if got := goldenDigest(t); got != digest || format != OutputFormat {
		t.Errorf("%s records output format %d and digest %s; the golden files have digest %s and OutputFormat is %d: "+
			"a change of the documents' bytes bumps OutputFormat (generator/unchanged.go) and runs go test ./generator -run Golden -update",
			goldenFormatFile, format, digest, got, OutputFormat)
	}
}

// readGoldenFormat reads goldenFormatFile.
func readGoldenFormat() (format int, digest string, err error) {
	data, err := os.ReadFile(goldenFormatFile)
	if err != nil {
		return 0, "", err
	}
	if _, err := fmt.Sscanf(string(data), "output format %d\nsha256 %s\n", &format, &digest); err != nil {
		return 0, "", fmt.Errorf("%s: %w", goldenFormatFile, err)
	}
	return format, digest, nil
}

// recordGoldenFormat writes goldenFormatFile after the golden files were
// written again, and refuses files that changed under the same format.
func recordGoldenFormat() error {
	format, digest, err := readGoldenFormat()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	got := goldenDigest(nil)
	switch {
	case got == digest && format == OutputFormat:
		return nil
	case got != digest && format == OutputFormat:
		return fmt.Errorf("the golden files changed, and OutputFormat is still %d: bump it (generator/unchanged.go) and run -update again", format)
	}
	return os.WriteFile(goldenFormatFile, fmt.Appendf(nil, "output format %d\nsha256 %s\n", OutputFormat, got), 0o644)
}

// goldenDigest returns the SHA-256 of the golden files, their paths and
// bytes, in walk order.
func goldenDigest(t *testing.T) string {
	h := sha256.New()
	err := filepath.WalkDir("testdata/golden", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == filepath.FromSlash(goldenFormatFile) {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(p), len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		if t != nil {
			t.Fatal(err)
		}
		return "unreadable: " + err.Error()
	}
	return hex.EncodeToString(h.Sum(nil))
}

// goldenTree is a small source tree whose builds cover every document
// shape rsgen writes.
var goldenTree = map[string]string{
	"index.html":                    "<!doctype html><title>Home</title>",
	"articles/one.html":             "<p>one</p>",
	"articles/two & three.html":     "<p>two</p>",
	"data/records.json":             `{"records":[]}`,
	"data/report.pdf":               "%PDF-1.4 fake",
	"media/café #1.png":             "\x89PNG\r\n\x1a\n",
	"media/sheet.xls":               "not really a spreadsheet",
	".well-known/security.txt":      "Contact: mailto:x@example.org",
	".hidden":                       "never published",
	"articles/drafts/unfinished.md": "draft",
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func goldenConfig(t *testing.T, root string) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Dir = root
	cfg.BaseURL = "https://data.example.org/"
	cfg.Hashes = []rs.HashAlgorithm{rs.MD5, rs.SHA256}
	cfg.DescribedBy = "https://data.example.org/about.html"
	cfg.ChangeList.Rotate = config.Duration{Duration: time.Hour}
	cfg.Sets = []config.Set{
		{Name: "articles", Path: "articles", Exclude: []string{"drafts"}, DescribedBy: "https://data.example.org/articles.html"},
		{Name: "everything"},
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return &cfg
}

func buildAt(t *testing.T, cfg *config.Config, at string, lim limits) *Summary {
	t.Helper()
	now, err := time.Parse(time.RFC3339, at)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Build(context.Background(), cfg, Options{Now: now, limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	CheckPublished(t, cfg)
	return sum
}

// TestGoldenDocuments builds the golden tree three times (a baseline, a
// build with changes, a build after the rotation period) with lists limited
// to four entries so that the Resource List is split, and compares every
// document with testdata/golden. Run with -update to rewrite them.
func TestGoldenDocuments(t *testing.T) {
	inBothModes(t, func(t *testing.T) {
		root := t.TempDir()
		src := filepath.Join(root, "site")
		writeTree(t, src, goldenTree)
		cfg := goldenConfig(t, root)
		lim := limits{entries: 4, bytes: 50_000_000}

		buildAt(t, cfg, "2026-01-01T00:00:00Z", lim)
		writeTree(t, src, map[string]string{"articles/one.html": "<p>one, revised</p>", "data/new.csv": "a,b\n1,2\n"})
		if err := os.Remove(filepath.Join(src, "data", "records.json")); err != nil {
			t.Fatal(err)
		}
		buildAt(t, cfg, "2026-01-01T00:30:00Z", lim)
		writeTree(t, src, map[string]string{"articles/four.html": "<p>four</p>"})
		buildAt(t, cfg, "2026-01-01T02:00:00Z", lim)

		compareWithGolden(t, cfg.Out, "testdata/golden/sets")
	})
}

// TestGoldenSpec10 checks the shape of Change Lists for ResourceSync 1.0
// destinations: no datetime attribute.
func TestGoldenSpec10(t *testing.T) {
	inBothModes(t, func(t *testing.T) {
		root := t.TempDir()
		src := filepath.Join(root, "site")
		writeTree(t, src, map[string]string{"a.txt": "a", "b.txt": "b"})
		cfg := config.Default()
		cfg.Dir, cfg.BaseURL, cfg.SpecVersion = root, "https://data.example.org/", "1.0"
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		buildAt(t, &cfg, "2026-01-01T00:00:00Z", limits{})
		writeTree(t, src, map[string]string{"a.txt": "changed", "c.txt": "c"})
		buildAt(t, &cfg, "2026-01-01T00:10:00Z", limits{})
		compareWithGolden(t, cfg.Out, "testdata/golden/spec10")
	})
}

// TestGoldenDumps checks the shape of Resource Dump and Change Dump
// documents, their indexes and the manifests' published copies.
func TestGoldenDumps(t *testing.T) {
	inBothModes(t, func(t *testing.T) {
		root := t.TempDir()
		src := filepath.Join(root, "site")
		writeTree(t, src, map[string]string{"a.txt": "a", "b/c.html": "<p>c</p>", "d.png": "\x89PNG", "gone.txt": "x"})
		cfg := dumpConfig(t, root)
		cfg.Dumps.PackageSize = 1 << 20
		buildAt(t, cfg, "2026-01-01T00:00:00Z", limits{})
		writeTree(t, src, map[string]string{"a.txt": "a, revised", "e.json": "{}"})
		os.Remove(filepath.Join(src, "gone.txt"))
		buildAt(t, cfg, "2026-01-01T00:30:00Z", limits{})
		compareWithGolden(t, cfg.Out, "testdata/golden/dumps")
	})
}

// inBothModes runs f twice: with every build spilling its scan's records
// into the state folder, as the tests' builds do, and with every build
// holding them in memory, as a build of fewer files than
// snapshot.DefaultSpillAfter does. Both must give the golden files.
func inBothModes(t *testing.T, f func(t *testing.T)) {
	for _, mode := range []struct {
		name  string
		after int
	}{{"spilled", 1}, {"in memory", 0}} {
		t.Run(mode.name, func(t *testing.T) {
			defer func(after int) { spillAfter = after }(spillAfter)
			spillAfter = mode.after
			f(t)
		})
	}
}

// compareWithGolden compares every document under out with the file of the
// same path under golden.
func compareWithGolden(t *testing.T, out, golden string) {
	t.Helper()
	if *update {
		os.RemoveAll(golden)
	}
	seen := 0
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		if !strings.HasPrefix(rel, "resourcesync") && !strings.HasPrefix(rel, ".well-known/resourcesync") {
			return nil // a resource, not a document
		}
		if strings.HasSuffix(rel, ".zip") {
			return nil // packages are checked by the dump tests: deflate's bytes may change with Go
		}
		if rel == StylesheetPath || isViewerFile(rel) {
			return nil // embedded files, the same in every output
		}
		seen++
		got, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		want := filepath.Join(golden, rel)
		if *update {
			if err := os.MkdirAll(filepath.Dir(want), 0o755); err != nil {
				return err
			}
			return os.WriteFile(want, got, 0o644)
		}
		wantBytes, err := os.ReadFile(want)
		if err != nil {
			t.Errorf("%s: no golden file (run go test ./generator -run Golden -update): %v", rel, err)
			return nil
		}
		if string(got) != string(wantBytes) {
			t.Errorf("%s differs from %s\n--- got\n%s\n--- want\n%s", rel, want, got, wantBytes)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	goldenCount := 0
	filepath.WalkDir(golden, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			goldenCount++
		}
		return nil
	})
	if goldenCount != seen {
		t.Errorf("output has %d documents, golden has %d", seen, goldenCount)
	}
}

// isViewerFile reports whether rel is a file of the document browser,
// which package viewer tests.
func isViewerFile(rel string) bool {
	return slices.ContainsFunc(viewer.Files(), func(f viewer.File) bool { return f.Path == filepath.ToSlash(rel) })
}
