package generator

import (
	"bytes"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rsgen/rsgen/snapshot"
)

// outputFiles returns the bytes and mtime of every file in out.
func outputFiles(t *testing.T, out string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		files[rel] = info.ModTime().Format(time.RFC3339Nano) + "\x00" + string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestRecoveryKeepsDumps loses the state of a site that publishes dumps,
// with closed Change Dumps and Change Dump packages of earlier builds, and
// checks that the build that recovers the state from the output changes
// nothing in it: no package rebuilt, no package or Change Dump forgotten.
func TestRecoveryKeepsDumps(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "site")
	writeTree(t, src, map[string]string{"a.txt": "a", "b/c.txt": "c", "d.png": "\x89PNG"})
	cfg := dumpConfig(t, root)
	cfg.ChangeList.Rotate.Duration = time.Hour
	buildAt(t, cfg, "2026-01-01T00:00:00Z", limits{})
	writeTree(t, src, map[string]string{"a.txt": "a2", "e.txt": "e"})
	buildAt(t, cfg, "2026-01-01T00:30:00Z", limits{})
	writeTree(t, src, map[string]string{"b/c.txt": "c2"})
	buildAt(t, cfg, "2026-01-01T02:00:00Z", limits{}) // closes the first segment
	os.Remove(filepath.Join(src, "d.png"))
	buildAt(t, cfg, "2026-01-01T02:10:00Z", limits{})
	before := outputFiles(t, cfg.Out)

	if err := os.RemoveAll(cfg.State); err != nil {
		t.Fatal(err)
	}
	buildAt(t, cfg, "2026-01-01T02:20:00Z", limits{})
	after := outputFiles(t, cfg.Out)
	if !maps.Equal(before, after) {
		for p := range after {
			if before[p] != after[p] {
				t.Errorf("%s changed or appeared after the recovery", p)
			}
		}
		for p := range before {
			if _, ok := after[p]; !ok {
				t.Errorf("%s removed after the recovery", p)
			}
		}
	}
	// The next real change lists every earlier Change Dump package still.
	writeTree(t, src, map[string]string{"f.txt": "f"})
	buildAt(t, cfg, "2026-01-01T02:30:00Z", limits{})
	d := readDoc(t, filepath.Join(cfg.Out, "resourcesync/default/changedumps/changedump-20260101T020000Z.xml"))
	if len(d.URLs) != 3 { // the builds of 02:00, 02:10 and 02:30
		t.Errorf("the open Change Dump lists %d packages after the recovery, want 3", len(d.URLs))
	}
	archived, err := os.ReadFile(filepath.Join(cfg.State, snapshot.ArchiveDir, "resourcesync/default/changedumps/changedump-20260101T000000Z.xml"))
	if err != nil || !bytes.Contains(archived, []byte("until=")) {
		t.Errorf("the closed Change Dump is not back in the state archive: %v", err)
	}
}
