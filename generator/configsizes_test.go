package generator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
)

// TestConfiguredSizesAreCheckedFirst: a Source Description that the
// configured sets and their describedby cannot fit in a document (here,
// documents of lim) is a configuration error before anything is written,
// not a build that fails with "document is full" once the output exists.
func TestConfiguredSizesAreCheckedFirst(t *testing.T) {
	long := "https://data.example.org/about/" + strings.Repeat("d", 1900)
	for _, tc := range []struct {
		name string
		lim  limits
	}{
		{"more sets than entries", limits{entries: 2, bytes: 50_000_000}},
		{"more bytes than a document", limits{entries: 100, bytes: 5000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			cfg := config.Default()
			cfg.Dir, cfg.BaseURL = root, "https://data.example.org/"
			for _, name := range []string{"a", "b", "c"} {
				cfg.Sets = append(cfg.Sets, config.Set{Name: name, DescribedBy: long})
			}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(cfg.Source, 0o755); err != nil {
				t.Fatal(err)
			}
			_, err := Build(context.Background(), &cfg, Options{Now: time.Unix(1e9, 0), limits: tc.lim})
			var ce *config.Error
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "Source Description") {
				t.Fatalf("err = %v, want a configuration error about the Source Description", err)
			}
			for _, dir := range []string{cfg.Out, cfg.State} {
				if _, err := os.Stat(dir); err == nil {
					t.Errorf("%s was created", filepath.Base(dir))
				}
			}
		})
	}
}
