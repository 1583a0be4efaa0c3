package generator

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/internal/sitemaptest"
	"github.com/rsgen/rsgen/snapshot"
)

// archiveConfig is a configuration with every archive on, Change Lists
// rotating hourly and a snapshot every two hours.
func archiveConfig(t *testing.T, root string, keep config.Retention) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Dir, cfg.BaseURL = root, "https://data.example.org/"
	cfg.ChangeList.Rotate = config.Duration{Duration: time.Hour}
	cfg.Dumps.ResourceDump, cfg.Dumps.ChangeDump = true, true
	cfg.Archives = config.Archives{ChangeLists: true, ChangeDumps: true, ResourceLists: true, ResourceDumps: true,
		SnapshotEvery: config.Duration{Duration: 2 * time.Hour}, Keep: keep}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return &cfg
}

// TestGoldenArchives checks the shape of the four archives, of an Archive
// Index (limits of eight entries split them) and of archived Resource Lists
// and Resource Dumps, and the archives links of the live documents.
func TestGoldenArchives(t *testing.T) {
	inBothModes(t, func(t *testing.T) {
		root := t.TempDir()
		src := filepath.Join(root, "site")
		writeTree(t, src, map[string]string{"a.txt": "a0", "b.txt": "b"})
		cfg := archiveConfig(t, root, config.Retention{})
		cfg.ChangeList.Rotate.Duration = 3 * time.Hour
		cfg.Archives.SnapshotEvery.Duration = time.Hour // 11 snapshots: an Archive Index over two parts
		lim := limits{entries: 8, bytes: 50_000_000}    // the Capability List has 8 entries
		for i := range 11 {
			writeTree(t, src, map[string]string{"a.txt": fmt.Sprintf("a%d", i)})
			buildAt(t, cfg, fmt.Sprintf("2026-01-01T%02d:00:00Z", i), lim)
		}
		compareWithGolden(t, cfg.Out, "testdata/golden/archives")
	})
}

// TestRetentionKeepsReferenced builds often with a short retention, by age
// and by count, and checks after every build that every document and
// package a published document points at exists, that retention did
// remove old documents, and that what it removed left the state archive
// too.
func TestRetentionKeepsReferenced(t *testing.T) {
	t.Parallel() // among the longest tests of the package: they overlap
	for _, keep := range []config.Retention{{Count: 1}, {Age: 3 * time.Hour}} {
		t.Run(fmt.Sprint(keep), func(t *testing.T) {
			root := t.TempDir()
			src := filepath.Join(root, "site")
			cfg := archiveConfig(t, root, keep)
			cfg.Dumps.PackageSize = 1 // one package per file: archived dumps keep packages the live one dropped
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			for i := range 24 {
				files := map[string]string{"a.txt": fmt.Sprintf("a%d", i), "fixed.txt": "fixed"}
				if i%3 == 0 {
					files[fmt.Sprintf("n%d.txt", i)] = "new"
				}
				writeTree(t, src, files)
				if i%3 == 1 {
					os.Remove(filepath.Join(src, fmt.Sprintf("n%d.txt", i-1)))
				}
				buildAt(t, cfg, start.Add(time.Duration(i)*time.Hour).Format(time.RFC3339), limits{})
				checkReferences(t, cfg)
			}
			// Without retention: 24 Change Lists, 12 snapshots of each
			// kind, 23 Change Dump packages with their manifests.
			for dir, most := range map[string]int{"changelists": 12, "resourcelists": 6, "resourcedumps": 6, "changedump": 23} {
				n := countFiles(t, filepath.Join(cfg.Out, "resourcesync", "default", dir))
				if n == 0 || n > most {
					t.Errorf("%s: %d files after 24 builds; retention should keep a few, at most %d", dir, n, most)
				}
			}
			checkStateArchive(t, cfg)
		})
	}
}

// checkReferences reads every document of the output and fails on a
// <loc> or href under resourcesync/ that names no file.
func checkReferences(t *testing.T, cfg *config.Config) {
	t.Helper()
	docsBase := cfg.BaseURL + "resourcesync/"
	err := filepath.WalkDir(cfg.Out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".xml") && !strings.HasSuffix(p, "resourcesync") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		doc, err := sitemaptest.Parse(data)
		if errors.Is(err, sitemaptest.ErrNotSitemap) {
			return nil // a resource, not a document
		}
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		var refs []string
		for _, l := range doc.Links {
			refs = append(refs, l.Href)
		}
		for _, e := range doc.Entries() {
			refs = append(refs, e.Loc)
			for _, l := range e.Links {
				refs = append(refs, l.Href)
			}
		}
		for _, r := range refs {
			if rel, ok := strings.CutPrefix(r, docsBase); ok {
				if _, err := os.Stat(filepath.Join(cfg.Out, "resourcesync", filepath.FromSlash(rel))); err != nil {
					t.Errorf("%s points at %s: %v", p, r, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkStateArchive checks that the state archive keeps what the output
// publishes and cannot be made again, and nothing else: every file it
// holds is published, and every closed Change List is in it.
func checkStateArchive(t *testing.T, cfg *config.Config) {
	t.Helper()
	archive := filepath.Join(cfg.State, snapshot.ArchiveDir)
	kept := map[string]bool{}
	filepath.WalkDir(archive, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(archive, p)
			kept[rel] = true
			if _, err := os.Stat(filepath.Join(cfg.Out, rel)); err != nil {
				t.Errorf("the state archive keeps %s, which the output no longer publishes", rel)
			}
		}
		return nil
	})
	lists, _ := filepath.Glob(filepath.Join(cfg.Out, "resourcesync", "*", "changelists", "*.xml"))
	open := 0
	for _, l := range lists {
		rel, _ := filepath.Rel(cfg.Out, l)
		if !kept[rel] {
			open++
		}
	}
	if sets := len(cfg.SetsOrDefault()); open != sets {
		t.Errorf("%d Change Lists are not in the state archive, want %d (the open one of each set)", open, sets)
	}
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}
