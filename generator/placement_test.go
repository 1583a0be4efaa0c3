package generator

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/internal/chunked"
	"github.com/rsgen/rsgen/layout"
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

// TestFailedColdBuildTakesBackEveryResource: a cold build that fails after
// its scan linked resources into more than two chunks of output.added
// (a source file in rsgen's own folder is refused only then) leaves no
// resource in the output.
func TestFailedColdBuildTakesBackEveryResource(t *testing.T) {
	cfg := placementConfig(t)
	files := map[string]string{layout.DocumentsDir + "/mine.txt": "in the way"}
	for i := range 2*chunked.Size + 10 {
		files[fmt.Sprintf("d%d/f%04d.txt", i%7, i)] = fmt.Sprint(i)
	}
	writeTree(t, cfg.Source, files)
	now, _ := time.Parse(time.RFC3339, "2026-01-01T00:00:00Z")
	_, err := Build(context.Background(), cfg, Options{Now: now})
	if err == nil || !strings.Contains(err.Error(), "would be overwritten by rsgen's own documents") {
		t.Fatalf("build: %v; want the refusal of %s", err, layout.DocumentsDir+"/mine.txt")
	}
	var left []string
	filepath.WalkDir(cfg.Out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("the failed build left %d files in the output, such as %s", len(left), left[0])
	}
}
