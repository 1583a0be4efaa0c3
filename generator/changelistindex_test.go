package generator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/checker"
	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/internal/sitemaptest"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
)

// noIndexConfig is a configuration without a Change List Index, with the
// Change List Archive it needs and Change Lists rotating hourly.
func noIndexConfig(t *testing.T, root string) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Dir, cfg.BaseURL = root, "https://data.example.org/"
	cfg.ChangeList = config.ChangeList{Rotate: config.Duration{Duration: time.Hour}, Index: false}
	cfg.Archives.ChangeLists = true
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return &cfg
}

// TestChangeListWithoutIndex builds five times 90 minutes apart, each
// build from the third closing the Change List of the one before, with
// [changelist] index = false, and checks after every build that the
// Capability List's changelist entry is the open Change List (a urlset,
// which resync 2.0.1 can read, where it cannot read an index), that no
// Change List Index is published, that the Change List Archive lists
// every closed list, so that every change stays reachable, and that rsgen
// check --strict passes.
func TestChangeListWithoutIndex(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "site")
	cfg := noIndexConfig(t, root)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var entries []string
	for i := range 5 {
		writeTree(t, src, map[string]string{"a.txt": fmt.Sprintf("a%d", i)})
		buildAt(t, cfg, start.Add(time.Duration(i)*90*time.Minute).Format(time.RFC3339), limits{})
		open := checkOpenListIsCapabilityEntry(t, cfg)
		// The baseline has no events; the next build's go to the list it
		// opened; from then on, each build closes the open list.
		if i >= 2 && slices.Contains(entries, open) {
			t.Errorf("build %d: the Capability List points at %s, as an earlier build did; the lists rotate hourly", i, open)
		}
		entries = append(entries, open)
		if _, err := os.Stat(filepath.Join(cfg.Out, filepath.FromSlash(layout.ChangeListIndex("default")))); !os.IsNotExist(err) {
			t.Errorf("build %d: a Change List Index is published (stat: %v)", i, err)
		}
		checkClosedListsArchived(t, cfg, open, max(0, i-1))
		checkStrict(t, cfg)
		checkReferences(t, cfg)
	}
}

// TestChangeListIndexTurnedOff builds with the Change List Index, then
// without: the index leaves the output and the Capability List points at
// the open Change List.
func TestChangeListIndexTurnedOff(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "site")
	cfg := noIndexConfig(t, root)
	cfg.ChangeList.Index = true
	for i, at := range []string{"2026-01-01T00:00:00Z", "2026-01-01T01:30:00Z", "2026-01-01T03:00:00Z"} {
		writeTree(t, src, map[string]string{"a.txt": fmt.Sprint("a", i)})
		buildAt(t, cfg, at, limits{}) // the last closes a list
	}
	index := filepath.Join(cfg.Out, filepath.FromSlash(layout.ChangeListIndex("default")))
	if _, err := os.Stat(index); err != nil {
		t.Fatalf("with index = true: %v", err)
	}
	cfg.ChangeList.Index = false
	writeTree(t, src, map[string]string{"a.txt": "a3"})
	buildAt(t, cfg, "2026-01-01T03:30:00Z", limits{})
	if _, err := os.Stat(index); !os.IsNotExist(err) {
		t.Errorf("the Change List Index is still published after index = false (stat: %v)", err)
	}
	open := checkOpenListIsCapabilityEntry(t, cfg)
	checkClosedListsArchived(t, cfg, open, 1)
	checkStrict(t, cfg)
	// Not checkReferences: the list closed before the switch is immutable
	// and keeps its rel="index" link to the index no longer published.
}

// TestChangeListWithoutIndexRecovered loses the state of a Source without
// a Change List Index: the recovery finds the Change Lists through the
// Change List Archive and the Capability List, so the next build goes on
// from them instead of dropping the closed lists.
func TestChangeListWithoutIndexRecovered(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "site")
	cfg := noIndexConfig(t, root)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 4 {
		writeTree(t, src, map[string]string{"a.txt": fmt.Sprintf("a%d", i)})
		buildAt(t, cfg, start.Add(time.Duration(i)*90*time.Minute).Format(time.RFC3339), limits{})
	}
	if err := os.RemoveAll(cfg.State); err != nil {
		t.Fatal(err)
	}
	writeTree(t, src, map[string]string{"a.txt": "a4"})
	buildAt(t, cfg, start.Add(4*90*time.Minute).Format(time.RFC3339), limits{})
	open := checkOpenListIsCapabilityEntry(t, cfg)
	checkClosedListsArchived(t, cfg, open, 3)
	checkStrict(t, cfg)
}

// checkOpenListIsCapabilityEntry checks that the changelist entry of the
// default set's Capability List is its open Change List, and returns its
// URL.
func checkOpenListIsCapabilityEntry(t *testing.T, cfg *config.Config) string {
	t.Helper()
	capList, err := sitemaptest.ReadFile(filepath.Join(cfg.Out, filepath.FromSlash(layout.CapabilityList("default"))))
	if err != nil {
		t.Fatal(err)
	}
	var loc string
	for _, e := range capList.Entries() {
		if e.MD().Capability == rs.CapChangeList {
			loc = e.Loc
		}
	}
	doc := readDocAt(t, cfg, loc)
	if doc.XMLName.Local != "urlset" || doc.MD().Capability != rs.CapChangeList || doc.MD().Until != "" {
		t.Errorf("the Capability List's changelist entry %s is a %s of capability %q, until %q; want the open Change List, a urlset",
			loc, doc.XMLName.Local, doc.MD().Capability, doc.MD().Until)
	}
	return loc
}

// checkClosedListsArchived checks that the Change List Archive lists every
// Change List of the output but the open one, and that there are n.
func checkClosedListsArchived(t *testing.T, cfg *config.Config, open string, n int) {
	t.Helper()
	var archived []string
	if n > 0 {
		for _, e := range readDocAt(t, cfg, cfg.BaseURL+layout.Archive("default", rs.CapChangeList)).Entries() {
			archived = append(archived, e.Loc)
		}
	}
	lists, err := filepath.Glob(filepath.Join(cfg.Out, "resourcesync", "default", "changelists", "*.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var closed []string
	for _, l := range lists {
		rel, _ := filepath.Rel(cfg.Out, l)
		if u := cfg.BaseURL + filepath.ToSlash(rel); u != open {
			closed = append(closed, u)
		}
	}
	if len(closed) != n || !slices.Equal(closed, archived) {
		t.Errorf("%d closed Change Lists expected: %v; the archive lists %v", n, closed, archived)
	}
}

// readDocAt reads the output document at URL u.
func readDocAt(t *testing.T, cfg *config.Config, u string) *sitemaptest.Doc {
	t.Helper()
	rel, ok := strings.CutPrefix(u, cfg.BaseURL)
	if !ok {
		t.Fatalf("%q is not under %s", u, cfg.BaseURL)
	}
	doc, err := sitemaptest.ReadFile(filepath.Join(cfg.Out, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// checkStrict runs the checker over the output as rsgen check --strict
// does: a warning fails too.
func checkStrict(t *testing.T, cfg *config.Config) {
	t.Helper()
	rep, err := checker.CheckDir(context.Background(), cfg.Out, checker.Options{BaseURL: cfg.BaseURL, VerifyContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK(true) {
		for _, f := range rep.Findings {
			t.Errorf("rsgen check --strict: %s", f)
		}
	}
}
