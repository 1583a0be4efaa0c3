package generator

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
)

func placementConfig(t *testing.T) *config.Config {
	t.Helper()
	root := t.TempDir()
	writeTree(t, filepath.Join(root, "site"), map[string]string{"a.txt": "a", "b/c.txt": "c"})
	cfg := config.Default()
	cfg.Dir, cfg.BaseURL = root, "https://data.example.org/"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return &cfg
}

func buildWith(t *testing.T, cfg *config.Config, at string, opts Options) *Summary {
	t.Helper()
	now, err := time.Parse(time.RFC3339, at)
	if err != nil {
		t.Fatal(err)
	}
	opts.Now = now
	sum, err := Build(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// TestRebuildTrustsPlacementUntilVerify: a rebuild does not stat the output
// copies of unchanged resources, so one deleted by hand stays deleted until
// --verify, which checks every copy and puts it back.
func TestRebuildTrustsPlacementUntilVerify(t *testing.T) {
	cfg := placementConfig(t)
	buildWith(t, cfg, "2026-01-01T00:00:00Z", Options{})
	gone := filepath.Join(cfg.Out, "b", "c.txt")
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if sum := buildWith(t, cfg, "2026-01-01T00:01:00Z", Options{}); sum.ResourcesPlaced != 0 {
		t.Errorf("a rebuild placed %d resources; it should trust the last build's placement", sum.ResourcesPlaced)
	}
	sum := buildWith(t, cfg, "2026-01-01T00:02:00Z", Options{Verify: true})
	if sum.ResourcesPlaced != 1 {
		t.Errorf("--verify placed %d resources, want the 1 deleted by hand", sum.ResourcesPlaced)
	}
	if data, err := os.ReadFile(gone); err != nil || string(data) != "c" {
		t.Errorf("after --verify, %s holds %q (%v), want the source's bytes", gone, data, err)
	}
}

// TestNewResourceReplacesWhatIsInTheWay: a resource the last build never
// had is linked without a look first; when something is in the way (a
// foreign file, in an output adopted with Force), the link fails and the
// general path replaces it.
func TestNewResourceReplacesWhatIsInTheWay(t *testing.T) {
	cfg := placementConfig(t)
	writeTree(t, cfg.Out, map[string]string{"a.txt": "not from the source"})
	buildWith(t, cfg, "2026-01-01T00:00:00Z", Options{Force: true})
	if data, err := os.ReadFile(filepath.Join(cfg.Out, "a.txt")); err != nil || string(data) != "a" {
		t.Errorf("out/a.txt holds %q (%v), want the source's bytes", data, err)
	}
	CheckPublished(t, cfg)
}
