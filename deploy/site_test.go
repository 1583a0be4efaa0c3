package deploy

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
	"github.com/rsgen/rsgen/snapshot"
)

// site is a built rsgen site in a temporary folder.
type site struct {
	dir string // holds site/ (the source), public/, .rsgen/ and rsgen.toml
	cfg *config.Config
	now time.Time
}

// exampleSite copies rsgen's example site (every capability on) and builds
// it with base_url base.
func exampleSite(t *testing.T, base string) *site {
	t.Helper()
	dir := t.TempDir()
	copyTree(t, filepath.Join("..", "example-site", "site"), filepath.Join(dir, "site"))
	data, err := os.ReadFile(filepath.Join("..", "example-site", "rsgen.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return newSite(t, dir, string(data), base)
}

// newSite builds the source in dir/site with configuration text, served at
// base.
func newSite(t *testing.T, dir, text, base string) *site {
	t.Helper()
	path := filepath.Join(dir, "rsgen.toml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s := loadSite(t, path, base)
	s.build(t)
	return s
}

// loadSite loads the configuration of a site at path, served at base.
func loadSite(t *testing.T, path, base string) *site {
	t.Helper()
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.BaseURL = base
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return &site{dir: filepath.Dir(path), cfg: &cfg, now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// build builds the site, an hour after its last build.
func (s *site) build(t *testing.T) {
	t.Helper()
	s.now = s.now.Add(time.Hour)
	if _, err := generator.Build(context.Background(), s.cfg, generator.Options{Now: s.now}); err != nil {
		t.Fatal(err)
	}
}

// write writes a source file, creating its folders.
func (s *site) write(t *testing.T, rel, content string) {
	t.Helper()
	p := filepath.Join(s.dir, "site", filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (s *site) remove(t *testing.T, rel string) {
	t.Helper()
	if err := os.Remove(filepath.Join(s.dir, "site", filepath.FromSlash(rel))); err != nil {
		t.Fatal(err)
	}
}

// options returns the deploy options of the site to store.
func (s *site) options(store Store) Options {
	return Options{Out: s.cfg.Out, State: s.cfg.State, BaseURL: s.cfg.BaseURL, CopyResources: s.cfg.CopyResources,
		ShortCache: s.cfg.Publish.ShortCache.Duration, Store: store, MaxDeletes: -1}
}

// types returns the media types the last build of s recorded for the
// output files whose names say nothing, as a deploy reads them.
func (s *site) types(t *testing.T) map[string]string {
	t.Helper()
	st, err := snapshot.Load(s.cfg.State)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b, err := readBuilt(st, s.cfg.CopyResources, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b.close()
	return b.types
}

// outputFiles returns the output paths of the site's files that store
// publishes, with their SHA-256.
func (s *site) outputFiles(t *testing.T, store Store) map[string][32]byte {
	t.Helper()
	root, err := os.OpenRoot(s.cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	_, list, err := scanFiles(t, root, store.Publishes, "", func(Event) {})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][32]byte{}
	for _, f := range list {
		files[f.rel] = f.sum
	}
	return files
}

// copyTree copies the regular files of src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// run deploys with opts and fails the test on an error.
func run(t *testing.T, opts Options) *Summary {
	t.Helper()
	sum, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatalf("deploy: %v", err)
	}
	return sum
}

// tinySite builds a small site of n text files, served at base.
func tinySite(t *testing.T, base string, n int) *site {
	t.Helper()
	dir := t.TempDir()
	for i := range n {
		p := filepath.Join(dir, "site", "docs", fmt.Sprintf("file-%03d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return newSite(t, dir, "", base)
}

// openRoot opens dir as an os.Root, closed with the test.
func openRoot(t *testing.T, dir string) *os.Root {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root
}
