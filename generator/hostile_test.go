package generator_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
)

func published(t *testing.T, s *site) []string {
	t.Helper()
	var paths []string
	for _, e := range s.doc("resourcesync/default/resourcelist.xml").Entries {
		paths = append(paths, locPath(t, s.Cfg.BaseURL, e.Loc))
	}
	return paths
}

func noteFor(notes []generator.Note, path, msg string) bool {
	return slices.ContainsFunc(notes, func(n generator.Note) bool { return n.Path == path && strings.Contains(n.Msg, msg) })
}

// symlinkTree makes a source with links of every kind.
func symlinkTree(t *testing.T, s *site) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret\n"), 0o644)
	s.write("real/a.txt", "alpha\n")
	s.write("real/sub/b.txt", "bravo\n")
	links := map[string]string{
		"file-link.txt":   "real/a.txt",
		"dir-link":        "real",
		"real/sub/up":     "../..", // a loop: the root
		"loop/x":          "../loop2",
		"loop2/y":         "../loop", // a loop through two links
		"outside-file":    filepath.Join(outside, "secret.txt"),
		"outside-dir":     outside,
		"relative-escape": "../../../../../../../../etc",
		"broken":          "nowhere",
		"self":            "self",
	}
	for link, target := range links {
		p := s.src(link)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSymlinksNotFollowedByDefault: links are skipped, each with a warning.
func TestSymlinksNotFollowedByDefault(t *testing.T) {
	s := newSite(t, testBaseURL, nil)
	symlinkTree(t, s)
	notes := s.buildWithNotes(generator.Options{Now: t0})
	if got, want := published(t, s), []string{"real/a.txt", "real/sub/b.txt"}; !slices.Equal(got, want) {
		t.Errorf("published %q, want %q", got, want)
	}
	for _, l := range []string{"file-link.txt", "dir-link", "outside-file", "broken"} {
		if !noteFor(notes, l, "symbolic link not followed") {
			t.Errorf("no warning for %s in %v", l, notes)
		}
	}
}

// TestFollowSymlinks: with follow_symlinks, links inside the root are
// followed, links outside skipped with a warning naming them, loops and
// broken links skipped with a warning.
func TestFollowSymlinks(t *testing.T) {
	s := newSite(t, testBaseURL, func(c *config.Config) { c.FollowSymlinks = true })
	symlinkTree(t, s)
	notes := s.buildWithNotes(generator.Options{Now: t0})
	want := []string{"dir-link/a.txt", "dir-link/sub/b.txt", "file-link.txt", "real/a.txt", "real/sub/b.txt"}
	if got := published(t, s); !slices.Equal(got, want) {
		t.Errorf("published %q, want %q", got, want)
	}
	for path, msg := range map[string]string{
		"outside-file": "points outside the source folder", "outside-dir": "points outside the source folder",
		"relative-escape": "points outside the source folder",
		"real/sub/up":     "loop", "dir-link/sub/up": "loop", "broken": "broken symbolic link", "self": "loop",
	} {
		if !noteFor(notes, path, msg) {
			t.Errorf("no warning %q for %s in %v", msg, path, notes)
		}
	}
	if !noteFor(notes, "loop/x/y", "loop") && !noteFor(notes, "loop/x", "loop") {
		t.Errorf("the two-link loop was not reported: %v", notes)
	}
	if _, err := os.Stat(filepath.Join(s.Out, "outside-file")); err == nil {
		t.Error("a file outside the source was published")
	}
	if got := string(s.outFile("dir-link/sub/b.txt")); got != "bravo\n" {
		t.Errorf("dir-link/sub/b.txt = %q", got)
	}
	// A followed link publishes its target's bytes as a file: a host that
	// does not follow links (or an upload that skips them) still serves it.
	for _, rel := range []string{"file-link.txt", "dir-link/a.txt"} {
		info, err := os.Lstat(filepath.Join(s.Out, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		if !info.Mode().IsRegular() {
			t.Errorf("%s in the output is a %v; want a regular file", rel, info.Mode().Type())
		}
	}
}

// oddNames are file names that must be published with a URI that a plain
// web server maps back to the file.
var oddNames = []string{
	"a b.txt", "100%.txt", "%41.txt", "#hash.txt", "q?x=1.txt", "a&b.txt", "c+d.txt", `"quoted".txt`, "it's.txt",
	"<tag>.txt", "\u00e9-nfc.txt", "e\u0301-nfd.txt", "latin1-\xe9.txt", "ctl-\x01\x1f\x7f.txt", "tab\tname.txt",
	"new\nline.txt", "dir with space/x y.txt", "ümlaut/ß.txt", "semi;colon=eq,comma.txt", "back\\slash.txt",
	strings.Repeat("l", 200) + "/" + strings.Repeat("o", 250) + "/" + strings.Repeat("n", 250) + "/" + strings.Repeat("g", 250) + ".txt",
}

// TestOddFileNamesServed publishes every odd name and fetches each
// resource by its published URI from a plain web server over the output.
func TestOddFileNamesServed(t *testing.T) {
	// Go's http.FileServer refuses names that are not UTF-8 (404); a
	// byte-exact server (as nginx or Apache are) serves those. Each name
	// is fetched from the byte-exact server, and from http.FileServer
	// too when it is UTF-8.
	var out string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !utf8.ValidString(r.URL.Path) {
			f, err := os.Open(filepath.Join(out, filepath.FromSlash(path.Clean(r.URL.Path))))
			if err != nil {
				http.NotFound(w, r)
				return
			}
			defer f.Close()
			io.Copy(w, f)
			return
		}
		http.FileServer(http.Dir(out)).ServeHTTP(w, r)
	}))
	defer srv.Close()
	s := newSite(t, srv.URL+"/", nil)
	out = s.Out
	deep := ""
	for range 12 {
		deep += strings.Repeat("d", 250) + "/"
	}
	names := append(slices.Clone(oddNames), deep[:1500]+"/long-path.txt")
	for i, n := range names {
		s.write(n, strings.Repeat("x", i)+"\n")
	}
	s.buildWithNotes(generator.Options{Now: t0})
	raw := s.outFile("resourcesync/default/resourcelist.xml")
	for _, c := range []string{"\x01", "\t", "\"quoted", "<tag>", "a&b"} {
		if bytes.Contains(raw, []byte(c)) {
			t.Errorf("the Resource List holds %q unescaped", c)
		}
	}
	got := published(t, s)
	for _, n := range names {
		if !slices.Contains(got, n) {
			t.Errorf("%q not published", n)
			continue
		}
	}
	for _, e := range s.doc("resourcesync/default/resourcelist.xml").Entries {
		resp, err := http.Get(e.Loc)
		if err != nil {
			t.Errorf("GET %s: %v", e.Loc, err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		p := locPath(t, s.Cfg.BaseURL, e.Loc)
		want, _ := os.ReadFile(s.src(p))
		if resp.StatusCode != 200 || !bytes.Equal(body, want) {
			t.Errorf("GET %s: %s, %d bytes; want the %d bytes of %q", e.Loc, resp.Status, len(body), len(want), p)
		}
	}
}

// TestHugeSparseFile streams a sparse file of 5 GiB (256 MiB by default):
// the build reads it in constant memory, allocating less than a quarter
// of its size (and never more than 256 MiB).
func TestHugeSparseFile(t *testing.T) {
	if testing.Short() {
		t.Skip("reads gigabytes; skipped with -short")
	}
	s := newSite(t, testBaseURL, nil)
	if free, err := freeBytes(s.Source); err != nil || free < 1<<30 {
		t.Skip("less than 1 GiB free; the sparse file needs little, its copy could need 5 GiB")
	}
	f, err := os.Create(s.src("huge.bin"))
	if err != nil {
		t.Fatal(err)
	}
	size := int64(256 << 20)
	if stress() {
		size = 5 << 30
	}
	if err := f.Truncate(size); err != nil {
		t.Skipf("cannot make a sparse file: %v", err)
	}
	f.WriteAt([]byte("end"), size-3)
	f.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s.buildWithNotes(generator.Options{Now: t0})
	runtime.ReadMemStats(&after)
	grew := after.TotalAlloc - before.TotalAlloc
	if grew > min(uint64(size)/4, 256<<20) {
		t.Errorf("the build allocated %d MiB for a %d MiB file: not streamed", grew>>20, size>>20)
	}
	t.Logf("the build allocated %d MiB for a %d MiB file", grew>>20, size>>20)
	e := s.doc("resourcesync/default/resourcelist.xml").Entries[0]
	if lengthOf(e.MD()) != size {
		t.Errorf("length %d, want %d", lengthOf(e.MD()), size)
	}
}
