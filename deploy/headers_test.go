package deploy

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/layout"
)

// TestOutputPolicy checks rsgen's header policy on a site whose first
// Change List was closed by a later build, and which has a resource (and
// its versions) with no extension.
func TestOutputPolicy(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(dir+"/site", 0o755)
	os.WriteFile(dir+"/site/README", []byte("plain words\n"), 0o644)
	os.WriteFile(dir+"/site/a.json", []byte(`{"a":1}`), 0o644)
	s := newSite(t, dir, "[changelist]\nrotate = \"24h\"\n[dumps]\nresource_dump = true\n[[set]]\nname = \"default\"\nkeep_versions = true\npatches = true\n", "https://data.example.org/")
	s.write(t, "a.json", `{"a":2}`)
	s.write(t, "README", "other words\n")
	s.build(t)
	s.now = s.now.Add(48 * time.Hour) // past rotate: the next build closes the Change List
	s.write(t, "b.txt", "new\n")
	s.build(t)

	root := openRoot(t, s.cfg.Out)
	files := s.outputFiles(t, &DirStore{})
	var rels []string
	for rel := range files {
		rels = append(rels, rel)
	}
	policy, err := OutputPolicy(root, rels, s.cfg.BaseURL, []string{"default"}, 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	const short = "public, max-age=300"
	var closed, open, memento, patch, pkg int
	for _, rel := range rels {
		h := policy(rel)
		switch {
		case rel == "README":
			if h != (Headers{ContentType: "text/plain"}) {
				t.Errorf("README: %+v; want the type its Resource List gives, no Cache-Control", h)
			}
		case strings.HasPrefix(rel, "resourcesync/mementos/") && strings.HasSuffix(rel, "/README"):
			memento++
			if h != (Headers{"text/plain", ImmutableCache}) {
				t.Errorf("%s: %+v", rel, h)
			}
		case strings.HasPrefix(rel, "resourcesync/patches/"):
			patch++
			if h != (Headers{layout.TypePatch, ImmutableCache}) {
				t.Errorf("%s: %+v", rel, h)
			}
		case strings.Contains(rel, "/changelists/"):
			if h.CacheControl == ImmutableCache {
				closed++
			} else if h.CacheControl == short {
				open++
			}
		case strings.HasSuffix(rel, ".zip"):
			pkg++
			if h != (Headers{layout.TypeZIP, ImmutableCache}) {
				t.Errorf("%s: %+v", rel, h)
			}
		case rel == layout.SourceDescription || strings.HasSuffix(rel, ".timemap"):
			if h.CacheControl != short || h.ContentType != layout.ContentType(rel) {
				t.Errorf("%s: %+v", rel, h)
			}
		case rel == "a.json":
			if h != (Headers{ContentType: "application/json"}) {
				t.Errorf("%s: %+v", rel, h)
			}
		}
	}
	if closed != 1 || open != 1 || memento != 2 || patch != 1 || pkg == 0 {
		t.Errorf("%d closed and %d open Change Lists, %d README mementos, %d patches, %d packages; want 1, 1, 2, 1, some",
			closed, open, memento, patch, pkg)
	}
}

// TestS3HeaderPolicyChange re-applies changed headers in place: a changed
// short_cache makes copies of the documents onto themselves, and sends no
// object's bytes again.
func TestS3HeaderPolicyChange(t *testing.T) {
	v := startVersity(t)
	p := newProxy(t, v.endpoint)
	s := tinySite(t, v.website, 3)
	store := v.store(t, p.srv.URL, "")
	run(t, s.options(store))
	p.take()

	opts := s.options(store)
	opts.ShortCache = 10 * time.Minute
	sum := run(t, opts)
	uploads, reheaders, _ := sum.Uploads()
	if uploads != 0 || reheaders == 0 {
		t.Errorf("%d uploads, %d headers re-applied; want 0, some", uploads, reheaders)
	}
	for _, r := range p.take() {
		if objectPut(r) {
			t.Errorf("%s was uploaded again for a change of headers", r.key)
		}
	}
	resp, err := http.Head(v.website + layout.SourceDescription)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if cc, ct := resp.Header.Get("Cache-Control"), resp.Header.Get("Content-Type"); cc != "public, max-age=600" || ct != "application/xml" {
		t.Errorf("Source Description served with Cache-Control %q, Content-Type %q", cc, ct)
	}
	if sum := run(t, opts); sum.Unchanged != sum.Files {
		t.Errorf("the next deploy changed headers again: %+v", sum)
	}
}
