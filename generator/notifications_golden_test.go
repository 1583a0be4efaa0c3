package generator

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGoldenNotifications builds the golden tree as TestGoldenDocuments
// does, with a hub and both channels of every set, and compares every
// document, the topics among them, with testdata/golden/notification: the
// Capability Lists advertise the channels, each topic serves its newest
// notification, and the Framework Notifications name the parts of the
// split Resource List with their index, never the index itself. Run with
// -update to rewrite them.
func TestGoldenNotifications(t *testing.T) {
	inBothModes(t, func(t *testing.T) {
		root := t.TempDir()
		src := filepath.Join(root, "site")
		writeTree(t, src, goldenTree)
		cfg := goldenConfig(t, root)
		cfg.Notification.Hub = "https://hub.example.net/"
		cfg.Notification.Framework = true
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		lim := limits{entries: 4, bytes: 50_000_000}

		buildAt(t, cfg, "2026-01-01T00:00:00Z", lim)
		writeTree(t, src, map[string]string{"articles/one.html": "<p>one, revised</p>", "data/new.csv": "a,b\n1,2\n"})
		if err := os.Remove(filepath.Join(src, "data", "records.json")); err != nil {
			t.Fatal(err)
		}
		buildAt(t, cfg, "2026-01-01T00:30:00Z", lim)
		writeTree(t, src, map[string]string{"articles/four.html": "<p>four</p>"})
		buildAt(t, cfg, "2026-01-01T02:00:00Z", lim)

		compareWithGolden(t, cfg.Out, "testdata/golden/notification")
	})
}
