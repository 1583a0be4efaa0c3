package deploy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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

	p := testPlan(t, files, m, policy, true, time.Unix(1500, 0), 10*time.Minute)
	var uploads, reheads, absent []string
	for _, tk := range p.allWrites(t) {
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
	if deletes, want := p.deletedList(t), []string{"expired.txt"}; !slices.Equal(deletes, want) {
		t.Errorf("deletes %v; want %v", deletes, want)
	}
	if p.deferred != 2 || p.unchanged != 2 {
		t.Errorf("%d deferred, %d unchanged; want 2 (gone.txt from now, waiting.txt), 2 (same.txt, back.txt)", p.deferred, p.unchanged)
	}
	final := p.manifest(t, p.final, "final")
	if e := final.entries["gone.txt"]; e == nil || e.status != retired || e.since != 1500 {
		t.Errorf("gone.txt in the final manifest: %+v", e)
	}
	if e := final.entries["back.txt"]; e == nil || e.status != landed {
		t.Errorf("back.txt in the final manifest: %+v", e)
	}
	if !p.changed {
		t.Error("the plan says the manifest does not change")
	}
	// A web root keeps no headers: a change of headers alone writes nothing.
	if p := testPlan(t, files, m, policy, false, time.Unix(1500, 0), 0); p.steps[layout.StepLists] != (StepSummary{}) {
		t.Errorf("a web root re-heads %+v", p.steps[layout.StepLists])
	}
}

// testPlan plans files (in any order) against m, closed with the test.
func testPlan(t *testing.T, files []*localFile, m *manifest, policy HeaderPolicy, keepsHeaders bool, now time.Time, grace time.Duration) *plan {
	t.Helper()
	dir := t.TempDir()
	list := filepath.Join(dir, "files")
	f, err := os.Create(list)
	if err != nil {
		t.Fatal(err)
	}
	w := newFileListWriter(f, 0)
	for _, lf := range slices.SortedFunc(slices.Values(files), func(a, b *localFile) int { return strings.Compare(a.rel, b.rel) }) {
		if err := w.add(lf); err != nil {
			t.Fatal(err)
		}
	}
	fl := readBack(t, w, f)
	mr, err := readManifest(bytes.NewReader(m.encode()))
	if err != nil {
		t.Fatal(err)
	}
	planDir := filepath.Join(dir, "plan")
	os.Mkdir(planDir, 0o755)
	p, err := makePlan(fl, mr, policy, keepsHeaders, nil, now, grace, planDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.close)
	return p
}

// allWrites returns the writes of the plan, step by step: the spilled ones,
// then the documents.
func (p *plan) allWrites(t *testing.T) []*task {
	t.Helper()
	var all []*task
	for step := range layout.NumSteps {
		var err error
		all = slices.AppendSeq(all, p.spilledWrites(step, &err))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, p.docs[step]...)
	}
	return all
}

// deletedList returns the keys the plan deletes.
func (p *plan) deletedList(t *testing.T) []string {
	t.Helper()
	var keys []string
	err := deletedObjects(&p.deleted, 2, func(batch []Object) error {
		for _, obj := range batch {
			keys = append(keys, obj.Key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// manifest finishes the manifest w of the plan and reads it back.
func (p *plan) manifest(t *testing.T, w *manifestWriter, name string) *manifest {
	t.Helper()
	path, err := p.manifestFile(w, name)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return mustDecodeManifest(t, data)
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

// TestMakePlanMerge: the plan reads the output's files and the manifest in
// step, in byte order, with keys only in the manifest, only in the output
// and in both, interleaved where byte order and a folder walk's order
// differ ("a-b" < "a.b" < "a/b" < "a0"); and streams the next manifests,
// sorted, with the keys it writes pending during the deploy.
func TestMakePlanMerge(t *testing.T) {
	policy := func(string) Headers { return Headers{ContentType: "text/plain"} }
	files := []*localFile{file("a/b", "same"), file("a0", "new"), file("a.b", "changed"), file("z", "same")}
	m := newManifest()
	for _, f := range []*localFile{file("a-b", "gone"), file("a/b", "same"), file("a.b", "old"), file("a/c", "gone"), file("b", "gone"), file("z", "same")} {
		m.entries[f.rel] = &entry{Object: Object{Key: f.rel, Size: f.size, SHA256: f.sum, Headers: policy(f.rel)}}
	}
	p := testPlan(t, files, m, policy, true, time.Unix(1500, 0), 0)
	var writes []string
	for _, tk := range p.allWrites(t) {
		writes = append(writes, tk.obj.Key)
	}
	if want := []string{"a.b", "a0"}; !slices.Equal(writes, want) {
		t.Errorf("writes %q; want %q", writes, want)
	}
	if deletes, want := p.deletedList(t), []string{"a-b", "a/c", "b"}; !slices.Equal(deletes, want) {
		t.Errorf("deletes %q; want %q", deletes, want)
	}
	if p.unchanged != 2 || p.deletes() != 3 || !p.changed {
		t.Errorf("%d unchanged, %d deletes, changed %v; want 2, 3, true", p.unchanged, p.deletes(), p.changed)
	}
	final := p.manifest(t, p.final, "final")
	if keys, want := slices.Sorted(maps.Keys(final.entries)), []string{"a.b", "a/b", "a0", "z"}; !slices.Equal(keys, want) {
		t.Errorf("final manifest %q; want %q", keys, want)
	}
	for _, e := range final.entries {
		if f := files[slices.IndexFunc(files, func(f *localFile) bool { return f.rel == e.Key })]; e.status != landed || e.SHA256 != f.sum {
			t.Errorf("%s in the final manifest: %+v", e.Key, e)
		}
	}
	during := p.manifest(t, p.pending, "pending")
	if keys, want := slices.Sorted(maps.Keys(during.entries)), []string{"a-b", "a.b", "a/b", "a/c", "a0", "b", "z"}; !slices.Equal(keys, want) {
		t.Errorf("pending manifest %q; want %q", keys, want)
	}
	for key, e := range during.entries {
		if wantPending := key == "a.b" || key == "a0"; (e.status == pending) != wantPending {
			t.Errorf("%s in the pending manifest: %+v", key, e)
		}
	}
	if e := during.entries["a.b"]; e.SHA256 != files[2].sum {
		t.Errorf("a.b is not pending with its new bytes: %+v", e)
	}

	// The same output against the manifest it makes: nothing to do.
	data, err := os.ReadFile(filepath.Join(p.dir, "final"))
	if err != nil {
		t.Fatal(err)
	}
	next := mustDecodeManifest(t, data)
	if p := testPlan(t, files, next, policy, true, time.Unix(1600, 0), 0); p.changed || p.tasks() != 0 || p.deletes() != 0 {
		t.Errorf("a plan against its own final manifest: changed %v, %d writes, %d deletes", p.changed, p.tasks(), p.deletes())
	}
}

// TestStepsWriteInOrder: a deploy writes step after step, the files of a
// step spilled to the plan's files before its documents (which may
// reference them), and the documents of a step after what they reference.
func TestStepsWriteInOrder(t *testing.T) {
	s := exampleSite(t, "https://data.example.org/")
	dir, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	store := &recordingStore{Store: dir}
	run(t, s.options(store))
	if len(store.puts) < 20 {
		t.Fatalf("%d writes: the test tests nothing", len(store.puts))
	}
	docs := map[layout.Step]bool{}
	for i, key := range store.puts {
		step := layout.PublishStep(key)
		if i > 0 && step < layout.PublishStep(store.puts[i-1]) {
			t.Errorf("%s (step %q) written after %s", key, step, store.puts[i-1])
		}
		if isDocument(key) {
			docs[step] = true
		} else if docs[step] {
			t.Errorf("%s written after a document of its step %q", key, step)
		}
	}
	if len(docs) < 3 {
		t.Errorf("documents in %d steps: the test tests little", len(docs))
	}
}

// recordingStore records the keys written, in order.
type recordingStore struct {
	Store
	mu   sync.Mutex
	puts []string
}

func (r *recordingStore) Put(ctx context.Context, obj *Object, body io.ReaderAt, ifAbsent bool) error {
	r.mu.Lock()
	r.puts = append(r.puts, obj.Key)
	r.mu.Unlock()
	return r.Store.Put(ctx, obj, body, ifAbsent)
}

// TestTaskEncoding: a write survives its encoding in a step's list,
// whatever its key and headers, and a string cut short is an error, not
// a write.
func TestTaskEncoding(t *testing.T) {
	for _, want := range []*task{
		{obj: Object{Key: "a", Size: 0}},
		{obj: Object{Key: "da ta/\"q\"\n#1.json", Size: 1 << 40, SHA256: sha256.Sum256([]byte("x")),
			Headers: Headers{ContentType: "application/json", CacheControl: "public, max-age=31536000, immutable"}},
			file: localFile{mtime: -5, ino: 1 << 62}, reheader: true, ifAbsent: true, check: true},
	} {
		want.file.rel, want.file.size, want.file.sum = want.obj.Key, want.obj.Size, want.obj.SHA256
		s := encodeTask(want)
		got, err := decodeTask(s)
		if err != nil || *got != *want {
			t.Errorf("%q: decoded %+v, %v; want %+v", want.obj.Key, got, err, want)
		}
		for cut := range len(s) {
			if _, err := decodeTask(s[:cut]); err == nil {
				t.Errorf("%q cut to %d bytes decoded", want.obj.Key, cut)
			}
		}
	}
}
