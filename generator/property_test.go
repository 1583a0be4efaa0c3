package generator_test

// The property test of the real-trees issue: random trees drawn from a
// nasty alphabet, every capability on, random sequences of builds with
// creations, edits, in-place rewrites, touches, deletions, renames, folder
// moves, paths that change between file and folder, and jumps of the clock
// across rotations. After every build the output is deployed to a web root
// (as rsgen deploy --to DIR does), which must then hold exactly the
// output's files; the output and the web root must pass the checker with
// no finding at all (strict, every resource read), and three independent
// Destinations must hold exactly the source: one following the Change
// Lists of the web root, served over HTTP, from a baseline, one replaying
// the Change Dumps over the first tree, one unpacking the Resource Dump.
// Every document is checked
// against the schemas at the end (after every build with RSGEN_STRESS=1,
// which also makes the histories longer and the trees larger).

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/checker"
	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/deploy"
)

// stress reports whether the long versions of the heavy tests run.
func stress() bool { return os.Getenv("RSGEN_STRESS") == "1" }

// nastyParts are the pieces names are made of: separators that sort
// around "/", case, NFC and NFD forms of the same letter, names that are
// prefixes of others, and what a name may hold that a ZIP name or XML
// may not: a byte that is not UTF-8 (Latin-1's é), a backslash, a line
// break, a control character, and "%" to meet their percent-encoding.
var nastyParts = []string{"a", "A", "b", "-", ".", " ", "_", "~", "é", "e\u0301", "ab", "a-", "a.", "a b", "x",
	"\xe9", "\\", "\n", "\x01", "%E9"}

func nastyName(r *rand.Rand) string {
	var sb strings.Builder
	for n := 1 + r.IntN(3); sb.Len() == 0 || n > 0; n-- {
		sb.WriteString(nastyParts[r.IntN(len(nastyParts))])
	}
	name := strings.TrimLeft(sb.String(), ".") // dotfiles are not published
	if name == "" || name == "resourcesync" {
		name = "n"
	}
	return name
}

// history is one random sequence of builds over one site.
type history struct {
	t    *testing.T
	r    *rand.Rand
	s    *site
	now  time.Time
	dirs []string // folders that hold files, to create more in
	www  string   // the web root the builds are deployed to
}

func TestPropertyRandomHistories(t *testing.T) {
	t.Parallel() // among the longest tests of the package: they overlap
	seeds, builds, files := 2, 8, 30
	if stress() {
		seeds, builds, files = 6, 40, 150
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			runHistory(t, uint64(seed), builds, files)
		})
	}
}

func runHistory(t *testing.T, seed uint64, builds, files int) {
	www := filepath.Join(t.TempDir(), "www")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serveFile(w, r, www)
	}))
	defer srv.Close()
	h := &history{t: t, r: rand.New(rand.NewPCG(seed, 7)), now: t0, www: www}
	h.s = newSite(t, srv.URL+"/", func(c *config.Config) {
		c.ChangeList.Rotate = config.Duration{Duration: time.Hour}
		c.Dumps.ResourceDump, c.Dumps.ChangeDump = true, true
		c.Dumps.PackageSize = 8 << 10
		c.Archives = config.Archives{ChangeLists: true, ChangeDumps: true, ResourceLists: true, ResourceDumps: true,
			SnapshotEvery: config.Duration{Duration: 2 * time.Hour}}
		// Every target but Cloudflare Pages, whose limit of 100 rules a
		// set chosen by file type passes, with a warning.
		c.Publish.Targets = []config.Target{"github-pages", "netlify", "nginx", "apache"}
		c.Publish.HTMLLink = true
		c.Sets = []config.Set{
			{Name: "all", SetLinks: config.SetLinks{KeepVersions: true, Patches: true, Alternates: "alternate"}},
			{Name: "texts", Include: []string{"*.txt", "*.json"}},
		}
	})
	h.dirs = []string{""}
	for range files {
		h.create()
	}
	h.s.build(h.now)
	h.deploy()
	lists := &destination{t: t, client: srv.Client(), base: srv.URL + "/", dir: t.TempDir(), set: "all"}
	lists.baseline()
	first := readTree(t, h.s.Source)
	for i := 1; i < builds; i++ {
		for n := 1 + h.r.IntN(4); n > 0; n-- {
			h.change()
		}
		h.advanceClock()
		h.s.build(h.now)
		h.deploy()
		h.checkBuild(lists, first, stress() || i == builds-1)
	}
}

// serveFile answers r with the file of the folder out at its path, as a
// plain web server does. (http.FileServer refuses names that are not
// UTF-8, which a source may hold and a web server serves.)
func serveFile(w http.ResponseWriter, r *http.Request, out string) {
	f, err := os.Open(filepath.Join(out, filepath.FromSlash(path.Clean("/"+r.URL.Path))))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		http.NotFound(w, r)
		return
	}
	http.ServeContent(w, r, info.Name(), info.ModTime(), f)
}

// change makes one random change to the source.
func (h *history) change() {
	files := h.sourceFiles()
	switch k := h.r.IntN(13); {
	case k < 3 || len(files) < 3:
		h.create()
	case k < 5:
		f := files[h.r.IntN(len(files))]
		h.s.write(f, h.contentFor(path.Ext(f)))
	case k < 6:
		h.rewriteInPlace(files[h.r.IntN(len(files))])
	case k < 7:
		h.s.touch(files[h.r.IntN(len(files))], h.now.Add(-time.Duration(h.r.IntN(1000))*time.Hour))
	case k < 9:
		h.s.remove(files[h.r.IntN(len(files))])
	case k < 10:
		from := files[h.r.IntN(len(files))]
		to := path.Join(path.Dir(from), nastyName(h.r)+".txt")
		if !h.exists(to) {
			h.s.rename(from, to)
		}
	case k < 11:
		h.moveFolder()
	case k < 12:
		h.fileToFolder(files[h.r.IntN(len(files))])
	default:
		h.folderToFile()
	}
}

// rewriteInPlace gives a file new bytes through its open inode, as tools
// that append or write in place do: the same inode, the same length when
// it has bytes (only the content and the mtime tell the change).
func (h *history) rewriteInPlace(rel string) {
	p := h.s.src(rel)
	before := inode(h.t, p)
	data, err := os.ReadFile(p)
	if err != nil {
		h.t.Fatal(err)
	}
	if len(data) == 0 {
		data = []byte(h.contentFor(path.Ext(rel)))
	}
	for i := range data {
		data[i] ^= byte(1 + h.r.IntN(255)) // every byte changes
	}
	if path.Ext(rel) == ".json" || path.Ext(rel) == ".html" {
		data = []byte(h.contentFor(path.Ext(rel))) // kept valid: patches and html_link read them
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	_, err = f.WriteAt(data, 0)
	if err == nil {
		err = f.Truncate(int64(len(data)))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		h.t.Fatal(err)
	}
	if inode(h.t, p) != before {
		h.t.Fatalf("%s was replaced, not rewritten in place", rel)
	}
}

// fileToFolder replaces the file rel by a folder of the same name with a
// file or two in it, one a level deeper.
func (h *history) fileToFolder(rel string) {
	h.s.remove(rel)
	h.dirs = append(h.dirs, rel)
	h.s.write(path.Join(rel, nastyName(h.r)+".txt"), h.contentFor(".txt"))
	if h.r.IntN(2) == 0 {
		sub := path.Join(rel, nastyName(h.r))
		if !h.exists(sub) {
			h.dirs = append(h.dirs, sub)
			h.s.write(path.Join(sub, nastyName(h.r)+".json"), h.contentFor(".json"))
		}
	}
}

// folderToFile replaces a folder, with everything in it, by a file of the
// same name.
func (h *history) folderToFile() {
	var dirs []string
	for _, d := range h.dirs {
		if d != "" && isDir(h.s.src(d)) {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return
	}
	d := dirs[h.r.IntN(len(dirs))]
	h.s.removeAll(d)
	h.s.write(d, h.contentFor(path.Ext(d)))
}

func (h *history) exists(rel string) bool {
	_, err := os.Lstat(h.s.src(rel))
	return err == nil
}

// create writes a new file, in a new folder now and then.
func (h *history) create() {
	dir := h.dirs[h.r.IntN(len(h.dirs))]
	if h.r.IntN(4) == 0 && strings.Count(dir, "/") < 5 {
		dir = path.Join(dir, nastyName(h.r))
		if h.exists(dir) && !isDir(h.s.src(dir)) {
			return
		}
		h.dirs = append(h.dirs, dir)
	}
	ext := []string{".txt", ".json", ".html", ".bin", ".csv", ""}[h.r.IntN(6)]
	rel := path.Join(dir, nastyName(h.r)+ext)
	if h.exists(rel) || h.blocked(rel) {
		return
	}
	h.s.write(rel, h.contentFor(ext))
}

// blocked reports whether a folder of rel's path is a file.
func (h *history) blocked(rel string) bool {
	for dir := path.Dir(rel); dir != "."; dir = path.Dir(dir) {
		if h.exists(dir) && !isDir(h.s.src(dir)) {
			return true
		}
	}
	return false
}

func isDir(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

func (h *history) contentFor(ext string) string {
	switch ext {
	case ".json":
		s, _ := json.Marshal(nastyName(h.r)) // valid JSON whatever the name holds
		return fmt.Sprintf(`{"n": %d, "s": %s}`, h.r.IntN(1000), s)
	case ".html":
		return fmt.Sprintf("<!doctype html><html><head><title>%d</title></head><body>%s</body></html>", h.r.IntN(100), nastyName(h.r))
	case ".bin":
		return randomBytes(h.r.IntN(20000))
	}
	return strings.Repeat(nastyName(h.r)+"\n", h.r.IntN(50))
}

// moveFolder renames a folder with everything in it.
func (h *history) moveFolder() {
	var dirs []string
	for _, d := range h.dirs {
		if d != "" && isDir(h.s.src(d)) {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return
	}
	from := dirs[h.r.IntN(len(dirs))]
	to := path.Join(path.Dir(from), nastyName(h.r))
	if h.exists(to) || strings.HasPrefix(to+"/", from+"/") {
		return
	}
	if err := os.Rename(h.s.src(from), h.s.src(to)); err != nil {
		h.t.Fatal(err)
	}
	h.dirs = append(h.dirs, to)
}

// advanceClock moves the build time on by seconds, minutes, hours or days.
func (h *history) advanceClock() {
	steps := []time.Duration{time.Second, time.Minute, 10 * time.Minute, 70 * time.Minute, 3 * time.Hour, 26 * time.Hour}
	h.now = h.now.Add(steps[h.r.IntN(len(steps))])
}

// sourceFiles lists the files of the source.
func (h *history) sourceFiles() []string {
	return slices.Sorted(maps.Keys(readTree(h.t, h.s.Source)))
}

// deploy publishes the last build to the web root, as rsgen deploy --to
// does, and checks that the web root then holds exactly the output's
// files.
func (h *history) deploy() {
	t := h.t
	t.Helper()
	store, err := deploy.OpenDir(h.www)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cfg := h.s.Cfg
	_, err = deploy.Run(context.Background(), deploy.Options{Out: cfg.Out, State: cfg.State, BaseURL: cfg.BaseURL,
		CopyResources: cfg.CopyResources, ShortCache: cfg.Publish.ShortCache.Duration, Store: store, MaxDeletes: -1})
	if err != nil {
		t.Fatalf("build at %s: deploy: %v", h.now.Format(time.RFC3339), err)
	}
	deployed := readTree(t, h.www)
	for p := range deployed {
		if strings.HasPrefix(p, deploy.MetaDir+"/") {
			delete(deployed, p)
		}
	}
	if out := readTree(t, h.s.Out); !maps.EqualFunc(deployed, out, bytesEqual) {
		t.Fatalf("build at %s: the web root differs from the output:\n%v", h.now.Format(time.RFC3339), diffBytes(out, deployed))
	}
}

// checkBuild checks the output and the web root after a build: the
// checker finds nothing in either, and the three Destinations hold the
// source.
func (h *history) checkBuild(lists *destination, first map[string][]byte, schemas bool) {
	t := h.t
	t.Helper()
	for _, dir := range []string{h.s.Out, h.www} {
		rep, err := checker.CheckDir(context.Background(), dir, checker.Options{BaseURL: h.s.Cfg.BaseURL, VerifyContent: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range rep.Findings {
			t.Errorf("build at %s: rsgen check --strict --verify-content %s: %s", h.now.Format(time.RFC3339), dir, f)
		}
	}
	src := readTree(t, h.s.Source)
	lists.sync()
	if got := unpublished(h.s, readTree(t, lists.dir)); !maps.EqualFunc(got, src, bytesEqual) {
		t.Fatalf("build at %s: the Destination following the Change Lists differs from the source:\n%v", h.now.Format(time.RFC3339), diffBytes(src, got))
	}
	if got := replayChangeDumps(t, h.s, "all", first); !maps.EqualFunc(got, src, bytesEqual) {
		t.Fatalf("build at %s: replaying the Change Dumps differs from the source:\n%v", h.now.Format(time.RFC3339), diffBytes(src, got))
	}
	if got := unpackResourceDump(t, h.s, "all"); !maps.EqualFunc(got, src, bytesEqual) {
		t.Fatalf("build at %s: the Resource Dump differs from the source:\n%v", h.now.Format(time.RFC3339), diffBytes(src, got))
	}
	if schemas {
		validateTree(t, h.s.Out)
	}
	if t.Failed() {
		t.FailNow()
	}
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// publishedSource returns the bytes a resource's packaged bitstream must
// be compared with: html_link rewrites HTML pages, whose published bytes
// differ from the source's, so HTML files are compared as published.
func publishedSource(s *site, files map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for p, b := range files {
		if strings.HasSuffix(p, ".html") {
			if pub, err := os.ReadFile(filepath.Join(s.Out, filepath.FromSlash(p))); err == nil {
				b = pub
			}
		}
		out[p] = b
	}
	return out
}

// packageFilesOf reads the manifest and bitstreams of one dump package:
// the bitstreams by resource path, and the deleted paths, in manifest
// order.
func packageFilesOf(t *testing.T, s *site, loc string) (files map[string][]byte, deleted []string, order []string) {
	t.Helper()
	zr, err := zip.OpenReader(filepath.Join(s.Out, filepath.FromSlash(locPath(t, s.Cfg.BaseURL, loc))))
	if err != nil {
		t.Fatalf("%s: %v", loc, err)
	}
	defer zr.Close()
	read := func(name string) []byte {
		f, err := zr.Open(name)
		if err != nil {
			t.Fatalf("%s: %s: %v", loc, name, err)
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	m := parseDoc(t, loc+"#manifest.xml", read("manifest.xml"))
	files = map[string][]byte{}
	for _, e := range m.Entries {
		p := locPath(t, s.Cfg.BaseURL, e.Loc)
		order = append(order, p)
		if e.MD().Change == "deleted" {
			deleted = append(deleted, p)
			continue
		}
		files[p] = read(strings.TrimPrefix(e.MD().Path, "/"))
	}
	return files, deleted, order
}

// replayChangeDumps applies every Change Dump package of set, in order,
// to the tree of the first build.
func replayChangeDumps(t *testing.T, s *site, set string, first map[string][]byte) map[string][]byte {
	t.Helper()
	tree := maps.Clone(publishedSource(s, first))
	for _, e := range s.doc("resourcesync/" + set + "/changedump.xml").Entries {
		_, dump := s.docAt(e.Loc)
		for _, p := range dump.Entries {
			files, _, order := packageFilesOf(t, s, p.Loc)
			for _, path := range order {
				if b, ok := files[path]; ok {
					tree[path] = b
				} else {
					delete(tree, path)
				}
			}
		}
	}
	return unpublished(s, tree)
}

// unpublished maps the published bytes of rewritten HTML pages back to
// their source bytes, so that a tree of published bytes compares with the
// source: a page matches when its published bytes are those the output
// holds now.
func unpublished(s *site, tree map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for p, b := range tree {
		if strings.HasSuffix(p, ".html") {
			pub, err1 := os.ReadFile(filepath.Join(s.Out, filepath.FromSlash(p)))
			src, err2 := os.ReadFile(s.src(p))
			if err1 == nil && err2 == nil && string(pub) == string(b) {
				b = src
			}
		}
		out[p] = b
	}
	return out
}

// unpackResourceDump returns the files of set's Resource Dump packages.
func unpackResourceDump(t *testing.T, s *site, set string) map[string][]byte {
	t.Helper()
	tree := map[string][]byte{}
	rd := s.doc("resourcesync/" + set + "/resourcedump.xml")
	entries := rd.Entries
	if rd.Root == "sitemapindex" {
		entries = nil
		for _, part := range rd.Entries {
			_, d := s.docAt(part.Loc)
			entries = append(entries, d.Entries...)
		}
	}
	for _, e := range entries {
		files, _, _ := packageFilesOf(t, s, e.Loc)
		for p, b := range files {
			tree[p] = b
		}
	}
	return unpublished(s, tree)
}
