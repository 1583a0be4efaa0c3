package viewer

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/rsgen/rsgen/internal/sitemaptest"
)

// This file builds sites with the real rsgen and reads their documents
// with encoding/xml, independently of the browser's script, so that what
// the browser shows can be compared with what the documents say.

// rsgenBinary is cmd/rsgen, built once for all the tests of a run and
// removed by TestMain.
var rsgenBinary struct {
	once sync.Once
	dir  string
	err  error
}

// buildRsgen returns the path of cmd/rsgen, built on first use.
func buildRsgen(t *testing.T) string {
	t.Helper()
	rsgenBinary.once.Do(func() {
		dir, err := os.MkdirTemp("", "rsgen-viewer-test-")
		if err != nil {
			rsgenBinary.err = err
			return
		}
		rsgenBinary.dir = dir
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "rsgen"), "../cmd/rsgen").CombinedOutput(); err != nil {
			rsgenBinary.err = fmt.Errorf("go build ../cmd/rsgen: %v\n%s", err, out)
		}
	})
	if rsgenBinary.err != nil {
		t.Fatal(rsgenBinary.err)
	}
	return filepath.Join(rsgenBinary.dir, "rsgen")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if rsgenBinary.dir != "" {
		os.RemoveAll(rsgenBinary.dir)
	}
	os.Exit(code)
}

// rsgenBuild runs rsgen build with a configuration at a build time.
func rsgenBuild(t *testing.T, bin, config, now string) {
	t.Helper()
	out, err := exec.Command(bin, "build", "--config", config, "--now", now, "--quiet").CombinedOutput()
	if err != nil {
		t.Fatalf("rsgen build --config %s --now %s: %v\n%s", config, now, err, out)
	}
}

// exampleHistory is four builds of the example site over four days, with
// edits in between, so that it has every kind of change event (a Change
// List with a deletion beside a creation among them), closed and open
// Change Lists, archives, Change Dump packages, mementos and JSON
// patches.
var exampleHistory = []struct {
	now   string
	edits map[string]string // path under site/ → new content, "" deletes
}{
	{"2026-01-01T10:00:00Z", nil},
	{"2026-01-01T15:00:00Z", map[string]string{
		"collection/manuscripts/ms-001.json": `{"id": "ms-001", "title": "Harbour ledger, revised"}` + "\n",
		"collection/manuscripts/ms-003.html": "<!doctype html><title>ms-003</title><p>A new manuscript.</p>\n",
	}},
	{"2026-01-02T12:00:00Z", map[string]string{
		"collection/manuscripts/ms-002 folio 3v.png": "",
		"collection/manuscripts/ms-002 note.txt":     "Folio 3v withdrawn for conservation.\n",
		"data/catalogue.csv":                         "id,title\n1,Harbour ledger\n",
	}},
	{"2026-01-04T09:00:00Z", map[string]string{
		"collection/maps/index.json": `{"maps": ["survey-1843"]}` + "\n",
	}},
}

// buildExample copies example-site into a temporary folder, builds it
// through exampleHistory and returns its output folder.
func buildExample(t *testing.T) string {
	t.Helper()
	bin := buildRsgen(t)
	dir := t.TempDir()
	copyTree(t, "../example-site/site", filepath.Join(dir, "site"))
	cfg, err := os.ReadFile("../example-site/rsgen.toml")
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "rsgen.toml")
	writeFile(t, config, string(cfg))
	for _, step := range exampleHistory {
		for path, content := range step.edits {
			p := filepath.Join(dir, "site", filepath.FromSlash(path))
			if content == "" {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				continue
			}
			writeFile(t, p, content)
		}
		rsgenBuild(t, bin, config, step.now)
	}
	return filepath.Join(dir, "public")
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		writeFile(t, filepath.Join(dst, rel), string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// xmlDoc is a ResourceSync document as the shared test reader reads it.
type xmlDoc = sitemaptest.Doc

// rels returns the link relations of the document and its entries.
func rels(d *xmlDoc) []string {
	seen := map[string]bool{}
	for _, l := range d.Links {
		seen[l.Rel] = true
	}
	for _, e := range d.Entries() {
		for _, l := range e.Links {
			seen[l.Rel] = true
		}
	}
	return sortedKeys(seen)
}

// entryAttributes returns the names of the rs:md attributes of the
// document's entries.
func entryAttributes(d *xmlDoc) []string {
	seen := map[string]bool{}
	for _, e := range d.Entries() {
		for _, a := range e.MD().Attrs() {
			seen[a.Name.Local] = true
		}
	}
	return sortedKeys(seen)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// readDocuments reads every ResourceSync document of an output folder,
// by its path relative to the folder.
func readDocuments(t *testing.T, out string) map[string]*xmlDoc {
	t.Helper()
	docs := map[string]*xmlDoc{}
	read := func(p string) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		d, err := sitemaptest.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		rel, _ := filepath.Rel(out, p)
		docs[filepath.ToSlash(rel)] = d
	}
	read(filepath.Join(out, ".well-known", "resourcesync"))
	err := filepath.WalkDir(filepath.Join(out, "resourcesync"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".xml") {
			return err
		}
		if strings.Contains(filepath.ToSlash(p), "/mementos/") {
			return nil // copies of resources, not documents
		}
		read(p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// changeCounts counts the change events of the documents under prefix by
// day and change, as "2026-01-01 created" → count.
func changeCounts(docs map[string]*xmlDoc, prefix string) map[string]int {
	counts := map[string]int{}
	for path, d := range docs {
		if !strings.HasPrefix(path, prefix) || d.MD().Capability != "changelist" {
			continue
		}
		for _, e := range d.URLs {
			day := e.MD().Datetime
			if day == "" {
				day = e.Lastmod
			}
			counts[fmt.Sprintf("%s %s", day[:10], e.MD().Change)]++
		}
	}
	return counts
}

// typeCounts counts the entries of a Resource List by media type.
func typeCounts(d *xmlDoc) map[string]int {
	counts := map[string]int{}
	for _, e := range d.URLs {
		counts[e.MD().Type]++
	}
	return counts
}
