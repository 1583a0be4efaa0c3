package generator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
)

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRecoveryAfterKilledRetries replays, step by step, the sequence the
// crash test once hit: a build publishes a new file's Resource List entry
// and its created event, and is killed before saving its state; a retry
// from the old state rotates, rewriting that Change List as closed without
// the event, and is killed before writing the index and the Resource List;
// then the state is lost. The recovering build must still publish the
// file's creation.
func TestRecoveryAfterKilledRetries(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "site")
	writeTree(t, src, map[string]string{"a.txt": "a"})
	cfg := config.Default()
	cfg.Dir, cfg.BaseURL = root, "https://data.example.org/"
	cfg.ChangeList.Rotate = config.Duration{Duration: 6 * time.Minute}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	buildAt(t, &cfg, "2026-01-01T00:00:00Z", limits{})
	stateFile := filepath.Join(cfg.State, "state")
	copyFile(t, stateFile, filepath.Join(root, "state.0"))

	// Build 1 publishes n.txt (Resource List and event) ...
	writeTree(t, src, map[string]string{"n.txt": "new"})
	buildAt(t, &cfg, "2026-01-01T00:01:00Z", limits{})
	set := filepath.Join(cfg.Out, "resourcesync", "default")
	copyFile(t, filepath.Join(set, "resourcelist.xml"), filepath.Join(root, "rl.1"))
	copyFile(t, filepath.Join(set, "changelist.xml"), filepath.Join(root, "index.1"))
	// ... and is "killed" before its state is saved.
	copyFile(t, filepath.Join(root, "state.0"), stateFile)

	// The retry rotates, then is "killed" after closing the old list but
	// before the new list, the index and the Resource List.
	buildAt(t, &cfg, "2026-01-01T00:07:00Z", limits{})
	copyFile(t, filepath.Join(root, "rl.1"), filepath.Join(set, "resourcelist.xml"))
	copyFile(t, filepath.Join(root, "index.1"), filepath.Join(set, "changelist.xml"))
	if err := os.Remove(filepath.Join(set, "changelists", "changelist-20260101T000700Z.xml")); err != nil {
		t.Fatal(err)
	}

	// The state is lost; the next build recovers from the output.
	if err := os.RemoveAll(cfg.State); err != nil {
		t.Fatal(err)
	}
	buildAt(t, &cfg, "2026-01-01T00:08:00Z", limits{})

	var created bool
	var idx struct {
		Locs []string `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 sitemap>loc"`
	}
	readXML(t, filepath.Join(set, "changelist.xml"), &idx)
	for _, loc := range idx.Locs {
		data, err := os.ReadFile(outFile(cfg.Out, loc))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "n.txt</loc>") && strings.Contains(string(data), `change="created"`) {
			created = true
		}
	}
	if !created {
		t.Error("n.txt is in the Resource List, but no indexed Change List has its creation: a change was lost")
	}
}
