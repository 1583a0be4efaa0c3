package deploy

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsgen/rsgen/hosting"
	"github.com/rsgen/rsgen/layout"
)

func file(rel, content string) *localFile {
	return &localFile{rel: rel, size: int64(len(content)), sum: sha256.Sum256([]byte(content))}
}

// TestMakePlan: what a diff against the manifest writes, re-heads, leaves
// and deletes.
func TestMakePlan(t *testing.T) {
	short := Headers{ContentType: "application/xml", CacheControl: "public, max-age=300"}
	policy := func(rel string) Headers {
		switch {
		case rel == "resourcesync/s/resourcedump/p.zip":
			return Headers{layout.TypeZIP, hosting.ImmutableCacheControl}
		case rel == "resourcesync/s/resourcelist.xml":
			return short
		}
		return Headers{ContentType: "text/plain"}
	}
	files := []*localFile{
		file("same.txt", "same"), file("changed.txt", "new"), file("new.txt", "new"),
		file("resourcesync/s/resourcedump/p.zip", "zip"), file("resourcesync/s/resourcelist.xml", "list"),
		file("pending.txt", "p"), file("back.txt", "back"),
	}
	landedAs := func(f *localFile, h Headers) *entry {
		return &entry{Object: Object{Key: f.rel, Size: f.size, SHA256: f.sum, Headers: h}}
	}
	m := newManifest()
	m.entries["same.txt"] = landedAs(files[0], Headers{ContentType: "text/plain"})
	m.entries["changed.txt"] = landedAs(file("changed.txt", "old"), Headers{ContentType: "text/plain"})
	m.entries["resourcesync/s/resourcelist.xml"] = landedAs(files[4], Headers{ContentType: "application/xml", CacheControl: "public, max-age=60"})
	m.entries["pending.txt"] = landedAs(files[5], Headers{ContentType: "text/plain"})
	m.entries["pending.txt"].status = pending
	m.entries["back.txt"] = landedAs(files[6], Headers{ContentType: "text/plain"})
	m.entries["back.txt"].status, m.entries["back.txt"].since = retired, 100
	m.entries["gone.txt"] = landedAs(file("gone.txt", "x"), Headers{})
	m.entries["waiting.txt"] = landedAs(file("waiting.txt", "x"), Headers{})
	m.entries["waiting.txt"].status, m.entries["waiting.txt"].since = retired, 1000
	m.entries["expired.txt"] = landedAs(file("expired.txt", "x"), Headers{})
	m.entries["expired.txt"].status, m.entries["expired.txt"].since = retired, 100

	p := makePlan(files, policy, m, true, time.Unix(1500, 0), 10*time.Minute)
	var uploads, reheads, absent []string
	for _, s := range p.steps {
		for _, tk := range s {
			switch {
			case tk.reheader:
				reheads = append(reheads, tk.obj.Key)
			default:
				uploads = append(uploads, tk.obj.Key)
			}
			if tk.ifAbsent {
				absent = append(absent, tk.obj.Key)
			}
		}
	}
	slices.Sort(uploads)
	if want := []string{"changed.txt", "new.txt", "pending.txt", "resourcesync/s/resourcedump/p.zip"}; !slices.Equal(uploads, want) {
		t.Errorf("uploads %v; want %v", uploads, want)
	}
	if want := []string{"resourcesync/s/resourcelist.xml"}; !slices.Equal(reheads, want) {
		t.Errorf("re-headed %v; want %v", reheads, want)
	}
	if want := []string{"resourcesync/s/resourcedump/p.zip"}; !slices.Equal(absent, want) {
		t.Errorf("If-None-Match on %v; want %v", absent, want)
	}
	slices.Sort(p.deletes)
	if want := []string{"expired.txt"}; !slices.Equal(p.deletes, want) {
		t.Errorf("deletes %v; want %v", p.deletes, want)
	}
	if p.deferred != 2 || p.unchanged != 2 {
		t.Errorf("%d deferred, %d unchanged; want 2 (gone.txt from now, waiting.txt), 2 (same.txt, back.txt)", p.deferred, p.unchanged)
	}
	if e := p.final.entries["gone.txt"]; e == nil || e.status != retired || e.since != 1500 {
		t.Errorf("gone.txt in the final manifest: %+v", e)
	}
	if e := p.final.entries["back.txt"]; e == nil || e.status != landed {
		t.Errorf("back.txt in the final manifest: %+v", e)
	}
	// A web root keeps no headers: a change of headers alone writes nothing.
	if p := makePlan(files, policy, m, false, time.Unix(1500, 0), 0); len(p.steps[layout.StepLists]) != 0 {
		t.Errorf("a web root re-heads %v", p.steps[layout.StepLists])
	}
}

// TestWavesCycle: documents of one step that link to each other in a
// cycle are written together, and reported.
func TestWavesCycle(t *testing.T) {
	dir := t.TempDir()
	const base = "https://data.example.org/"
	doc := func(rel, link string) *task {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="archives" href="`+base+link+`"/>
  <rs:md capability="resourcelist" at="2026-01-01T00:00:00Z"/>
</urlset>
`), 0o644)
		return &task{obj: Object{Key: rel}}
	}
	a := doc("resourcesync/s/a.xml", "resourcesync/s/b.xml")
	b := doc("resourcesync/s/b.xml", "resourcesync/s/a.xml")
	c := doc("resourcesync/s/c.xml", "resourcesync/s/a.xml")
	d := doc("resourcesync/s/d.xml", "nothing.xml")
	ws, cyclic, err := waves(openRoot(t, dir), base, []*task{a, b, c, d})
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || len(ws[0]) != 1 || ws[0][0] != d || len(cyclic) != 3 {
		t.Errorf("waves %v, cyclic %v; want d, then a, b and c together", ws, cyclic)
	}
}

// TestParallelStopsAtFirstError: no call starts after a failure, and the
// failure is what parallel returns.
func TestParallelStopsAtFirstError(t *testing.T) {
	items := make([]int, 1000)
	for i := range items {
		items[i] = i
	}
	var calls atomic.Int64
	err := parallel(context.Background(), slices.Values(items), func(ctx context.Context, i int) error {
		calls.Add(1)
		if i == 3 {
			return os.ErrInvalid
		}
		<-ctx.Done() // every other call waits for the failure
		return ctx.Err()
	})
	if err != os.ErrInvalid {
		t.Fatalf("parallel returned %v", err)
	}
	if n := calls.Load(); n > uploadJobs {
		t.Errorf("%d calls; want at most the %d in flight when the failure came", n, uploadJobs)
	}
}
