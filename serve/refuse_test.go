package serve_test

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
)

// put writes a file straight into the output folder, as a stray .git or a
// secret left there would be.
func (fx *fixture) put(name, content string) {
	fx.t.Helper()
	p := filepath.Join(fx.cfg.Out, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		fx.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		fx.t.Fatal(err)
	}
}

// TestDotfilesRefused: a path with a dot-segment is not found, unless the
// Resource Lists list it; a folder named with its dot is not redirected
// either, which would tell that it exists.
func TestDotfilesRefused(t *testing.T) {
	fx := newFixture(t)
	fx.put(".git/config", "[remote] url = secret")
	fx.put(".secret", "secret")
	fx.put("texts/.env", "secret")
	fx.put(".well-known/.secret", "secret")
	for _, target := range []string{"/.git/config", "/.git", "/.git/", "/.secret", "/texts/.env", "/.well-known/.secret",
		"/.well-known/", "/%2egit/config"} {
		resp := fx.do("GET " + target)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404", target, resp.Status)
		}
		if strings.Contains(body(t, resp), "secret") {
			t.Errorf("GET %s: served the secret", target)
		}
	}
	if resp := fx.do("GET /.well-known/resourcesync"); resp.StatusCode != http.StatusOK {
		t.Errorf("the Source Description: %s", resp.Status)
	}
}

// TestDotfilesPublished: the files of .well-known are served, and so are
// the other dotfiles that include_dotfiles published when the Resource
// Lists list them, and rsgen's versions of them.
func TestDotfilesPublished(t *testing.T) {
	fx := newFixture(t, func(c *config.Config) {
		c.IncludeDotfiles = []string{".well-known", "texts/.hidden", ".unlisted"}
		c.Sets[0].KeepVersions = true
	})
	fx.write(".well-known/security.txt", "Contact: mailto:a@example.org")
	fx.write(".unlisted/x.txt", "in no set")
	fx.write("texts/.hidden/v.txt", "one")
	fx.build(t0.Add(time.Hour))
	fx.write("texts/.hidden/v.txt", "two")
	fx.build(t0.Add(2 * time.Hour))
	memento := "/resourcesync/mementos/" + t0.Add(time.Hour).Format("20060102150405") + "/texts/.hidden/v.txt"
	for target, want := range map[string]string{
		"/.well-known/security.txt": "Contact: mailto:a@example.org",
		"/texts/.hidden/v.txt":      "two",
		memento:                     "one",
		"/resourcesync/timemaps/texts/.hidden/v.txt.timemap": "",
	} {
		resp := fx.do("GET " + target)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %s, want 200", target, resp.Status)
			continue
		}
		if got := body(t, resp); want != "" && got != want {
			t.Errorf("GET %s: %q, want %q", target, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(fx.cfg.Out, ".unlisted", "x.txt")); err != nil {
		t.Fatal(err)
	}
	if resp := fx.do("GET /.unlisted/x.txt"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a dotfile in no set: %s, want 404", resp.Status)
	}
}

// TestHostingFilesRefused: the files rsgen writes for the hosts are not
// served, as no host they configure serves them; robots.txt is. Every
// file at the top of an output built with every target is checked, so
// that a hosting file added to the generator and not here fails.
func TestHostingFilesRefused(t *testing.T) {
	fx := newFixture(t, func(c *config.Config) {
		c.Publish.Targets = slices.Clone(config.Targets)
		c.Publish.Robots = true
	})
	if resp := fx.do("GET /robots.txt"); resp.StatusCode != http.StatusOK {
		t.Errorf("robots.txt: %s, want 200", resp.Status)
	}
	entries, err := os.ReadDir(fx.cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	source := map[string]bool{"texts": true, "top.txt": true, "docs": true, "resourcesync": true, ".well-known": true, "robots.txt": true}
	var refused []string
	for _, e := range entries {
		if source[e.Name()] {
			continue
		}
		refused = append(refused, e.Name())
		if resp := fx.do("GET /" + e.Name()); resp.StatusCode != http.StatusNotFound {
			t.Errorf("hosting file %s: %s, want 404", e.Name(), resp.Status)
		}
	}
	if len(refused) < len(layout.HostingFiles) {
		t.Errorf("hosting files found: %q; the build wrote fewer than the %d expected", refused, len(layout.HostingFiles))
	}
}

// TestHostingFileNameAsResource: a resource that happens to have the name
// of a hosting file rsgen did not write is listed, and served.
func TestHostingFileNameAsResource(t *testing.T) {
	fx := newFixture(t, func(c *config.Config) { c.Sets = nil })
	fx.write("_headers", "a resource")
	fx.build(t0.Add(time.Hour))
	if resp := fx.do("GET /_headers"); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /_headers: %s, want 200", resp.Status)
	}
}

// TestSlashes: a file named with a trailing slash is not found; a folder
// named without one is redirected to it, as static hosts do.
func TestSlashes(t *testing.T) {
	fx := newFixture(t)
	for _, target := range []string{"/texts/a.txt/", "/top.txt/", "/.well-known/resourcesync/"} {
		if resp := fx.do("GET " + target); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404", target, resp.Status)
		}
	}
	resp := fx.do("GET /docs")
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/docs/" {
		t.Errorf("GET /docs: %s to %q, want 302 to /docs/", resp.Status, resp.Header.Get("Location"))
	}
	if resp := fx.do("GET /docs/"); resp.StatusCode != http.StatusOK || body(t, resp) != "<p>docs</p>" {
		t.Errorf("GET /docs/: %s", resp.Status)
	}
}
