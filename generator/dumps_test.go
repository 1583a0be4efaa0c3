package generator

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/internal/sitemaptest"
	"github.com/rsgen/rsgen/snapshot"
	"github.com/rsgen/rsgen/zippkg"
)

// dumpConfig returns a configuration with both dumps on and packages small
// enough that a few dozen files make several of them.
func dumpConfig(t *testing.T, root string) *config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.Dir, cfg.BaseURL = root, "https://data.example.org/"
	cfg.Dumps.ResourceDump, cfg.Dumps.ChangeDump = true, true
	cfg.Dumps.PackageSize = 16 << 10
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return &cfg
}

// linesTree returns 40 text files of growing length in four folders, named
// by format from the folder's and the file's number: enough for several
// packages of dumpConfig's size.
func linesTree(format string) map[string]string {
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf(format, i%4, i)] = strings.Repeat(fmt.Sprintf("line %d\n", i), 20+i*7)
	}
	return files
}

// readDoc reads the document at path with the shared test reader.
func readDoc(t *testing.T, path string) *sitemaptest.Doc {
	t.Helper()
	d, err := sitemaptest.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// packageLink returns the href of a dump entry's package link (its first
// rs:ln, contents).
func packageLink(e sitemaptest.Entry) string {
	if len(e.Links) == 0 {
		return ""
	}
	return e.Links[0].Href
}

// outFile maps a URL under the test's base URL to its file in out.
func outFile(out, url string) string {
	return filepath.Join(out, strings.TrimPrefix(url, "https://data.example.org/"))
}

// checkPackage opens a package with archive/zip and checks it against its
// manifest both ways: every manifest path is in the ZIP with the stated
// length, every ZIP entry is in the manifest, manifest.xml comes first and
// equals the published copy. It returns the bitstreams by source path, and
// the deletions.
func checkPackage(t *testing.T, zipPath, manifestCopy string) (files map[string][]byte, deleted []string) {
	t.Helper()
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		t.Fatalf("%s: %v", zipPath, err)
	}
	defer zr.Close()
	if len(zr.File) == 0 || zr.File[0].Name != "manifest.xml" {
		t.Fatalf("%s: manifest.xml is not the first entry", zipPath)
	}
	contents := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %s: %v", zipPath, f.Name, err)
		}
		contents[f.Name] = data
	}
	copyBytes, err := os.ReadFile(manifestCopy)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(copyBytes, contents["manifest.xml"]) {
		t.Errorf("%s: the contents copy differs from the packaged manifest", manifestCopy)
	}
	m, err := sitemaptest.Parse(contents["manifest.xml"])
	if err != nil {
		t.Fatal(err)
	}
	files = map[string][]byte{}
	listed := map[string]bool{"manifest.xml": true}
	for _, u := range m.URLs {
		src, err := url.PathUnescape(strings.TrimPrefix(u.Loc, "https://data.example.org/"))
		if err != nil {
			t.Fatal(err)
		}
		if u.MD().Change == "deleted" {
			deleted = append(deleted, src)
			continue
		}
		name := strings.TrimPrefix(u.MD().Path, "/")
		data, ok := contents[name]
		if !ok {
			t.Errorf("%s: manifest path %s not in the package", zipPath, u.MD().Path)
			continue
		}
		if strconv.Itoa(len(data)) != u.MD().Length {
			t.Errorf("%s: %s has %d bytes, manifest says %s", zipPath, name, len(data), u.MD().Length)
		}
		listed[name] = true
		files[src] = data
	}
	for name := range contents {
		if !listed[name] {
			t.Errorf("%s: entry %s is not in the manifest", zipPath, name)
		}
	}
	return files, deleted
}

// resourceDumpTree rebuilds a tree from the Resource Dump alone.
func resourceDumpTree(t *testing.T, out string) map[string]string {
	t.Helper()
	d := readDoc(t, filepath.Join(out, "resourcesync/default/resourcedump.xml"))
	tree := map[string]string{}
	for _, u := range d.URLs {
		files, _ := checkPackage(t, outFile(out, u.Loc), outFile(out, packageLink(u)))
		for p, data := range files {
			if _, dup := tree[p]; dup {
				t.Errorf("%s is in two packages", p)
			}
			tree[p] = string(data)
		}
	}
	return tree
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		tree[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func packageFiles(t *testing.T, out string) map[string][]byte {
	t.Helper()
	zips := map[string][]byte{}
	matches, _ := filepath.Glob(filepath.Join(out, "resourcesync/default/resourcedump/*.zip"))
	for _, m := range matches {
		data, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		zips[filepath.Base(m)] = data
	}
	return zips
}

func TestResourceDumpRebuildsTheTree(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "site")
	files := linesTree("dir%d/file %02d ü.txt")
	files["images/photo.png"] = "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00\xff", 300)
	writeTree(t, src, files)
	cfg := dumpConfig(t, root)
	buildAt(t, cfg, "2026-01-01T00:00:00Z", limits{})

	if got := resourceDumpTree(t, cfg.Out); !maps.Equal(got, files) {
		t.Errorf("the Resource Dump holds %d files, the source %d, or their bytes differ", len(got), len(files))
	}
	before := packageFiles(t, cfg.Out)
	if len(before) < 3 {
		t.Fatalf("only %d packages: the test needs several", len(before))
	}

	// One file changes: exactly one package is replaced, the others keep
	// their bytes.
	files["dir1/file 05 ü.txt"] = "changed\n"
	writeTree(t, src, map[string]string{"dir1/file 05 ü.txt": "changed\n"})
	buildAt(t, cfg, "2026-01-01T01:00:00Z", limits{})
	after := packageFiles(t, cfg.Out)
	var gone, added []string
	for name := range before {
		if _, ok := after[name]; !ok {
			gone = append(gone, name)
		} else if !bytes.Equal(before[name], after[name]) {
			t.Errorf("package %s kept its name but changed its bytes", name)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			added = append(added, name)
		}
	}
	if len(gone) != 1 || len(added) != 1 {
		t.Errorf("a one-file change replaced packages %v with %v; want exactly one replaced", gone, added)
	}
	if got := resourceDumpTree(t, cfg.Out); !maps.Equal(got, files) {
		t.Error("after the change, the Resource Dump does not rebuild the source tree")
	}
	unzipTest(t, cfg.Out)
}

// TestChangeDumpsReplay applies the Change Dumps of several builds to a copy
// of the tree as it was at the first build and gets the newest tree.
func TestChangeDumpsReplay(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "site")
	writeTree(t, src, map[string]string{"a.txt": "a", "b/c.txt": "c", "d.pdf": "%PDF d"})
	cfg := dumpConfig(t, root)
	buildAt(t, cfg, "2026-01-01T00:00:00Z", limits{})
	copyOld := readTree(t, src)

	writeTree(t, src, map[string]string{"a.txt": "a2", "new one.txt": "new"})
	os.Remove(filepath.Join(src, "d.pdf"))
	buildAt(t, cfg, "2026-01-01T01:00:00Z", limits{})
	writeTree(t, src, map[string]string{"a.txt": "a3", "b/c.txt": "c2", "d.pdf": "%PDF back"})
	buildAt(t, cfg, "2026-01-01T02:00:00Z", limits{})
	buildAt(t, cfg, "2026-01-01T03:00:00Z", limits{}) // no changes: no package

	d := readDoc(t, filepath.Join(cfg.Out, "resourcesync/default/changedumps/changedump-20260101T000000Z.xml"))
	if len(d.URLs) != 2 {
		t.Fatalf("the Change Dump lists %d packages, want one per build with changes (2)", len(d.URLs))
	}
	for _, u := range d.URLs {
		files, deleted := checkPackage(t, outFile(cfg.Out, u.Loc), outFile(cfg.Out, packageLink(u)))
		for _, p := range deleted {
			delete(copyOld, p)
		}
		for p, data := range files {
			copyOld[p] = string(data)
		}
	}
	if want := readTree(t, src); !maps.Equal(copyOld, want) {
		t.Errorf("replaying the Change Dumps gives %v\nwant %v", copyOld, want)
	}
	unzipTest(t, cfg.Out)
}

// unzipTest runs Info-ZIP's unzip -t over every package in out.
func unzipTest(t *testing.T, out string) {
	t.Helper()
	if _, err := exec.LookPath("unzip"); err != nil {
		if os.Getenv("RSGEN_REQUIRE_UNZIP") != "" {
			t.Fatal("unzip is required (RSGEN_REQUIRE_UNZIP is set) but not installed")
		}
		t.Log("unzip not installed: packages not tested with unzip -t")
		return
	}
	var zips []string
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".zip") {
			zips = append(zips, p)
		}
		return err
	})
	slices.Sort(zips)
	for _, z := range zips {
		if msg, err := exec.Command("unzip", "-tq", z).CombinedOutput(); err != nil {
			t.Errorf("unzip -t %s: %v\n%s", z, err, msg)
		}
	}
}

// TestChangeDumpSplitsLargeBuilds checks that the changes of one build that
// do not fit one package go into several, which together hold them all.
func TestChangeDumpSplitsLargeBuilds(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "site")
	writeTree(t, src, map[string]string{"seed.txt": "x"})
	cfg := dumpConfig(t, root)
	buildAt(t, cfg, "2026-01-01T00:00:00Z", limits{})
	many := map[string]string{}
	for i := range 30 {
		many[fmt.Sprintf("f%02d.txt", i)] = strings.Repeat("y", 500)
	}
	writeTree(t, src, many)
	var said atomic.Bool // Notify is called from the scan's workers too
	now, _ := time.Parse(time.RFC3339, "2026-01-01T01:00:00Z")
	_, err := Build(context.Background(), cfg, Options{Now: now, Notify: func(n Note) {
		if n.Kind == NoteInfo && strings.Contains(n.Msg, "Change Dump packages") {
			said.Store(true)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	CheckPublished(t, cfg)
	d := readDoc(t, filepath.Join(cfg.Out, "resourcesync/default/changedumps/changedump-20260101T000000Z.xml"))
	got := map[string]string{}
	for _, u := range d.URLs {
		files, _ := checkPackage(t, outFile(cfg.Out, u.Loc), outFile(cfg.Out, packageLink(u)))
		for p, data := range files {
			got[p] = string(data)
		}
	}
	if len(d.URLs) < 2 || !said.Load() {
		t.Errorf("%d packages (said so: %v); 45 kB of changes with overhead need several 16 KiB packages", len(d.URLs), said.Load())
	}
	if !maps.Equal(got, many) {
		t.Errorf("the packages hold %d of the %d changes", len(got), len(many))
	}
}

// TestDumpOfAFileChangedAfterItsScanFails: a file rewritten between the
// scan and its packaging (here: when the build writes its first file after
// the scan), with bytes of the same length, fails the build, naming the
// file; the packages written in parallel with the failed one, and before
// it, leave no file in the output, and the next build publishes the new
// bytes. Files written just before the build are hashed again when they
// are packaged; older ones are vouched for by their stat (see
// openBitstream), which the rewrite moves.
func TestDumpOfAFileChangedAfterItsScanFails(t *testing.T) {
	for _, age := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprintf("written %v before", age), func(t *testing.T) {
			root := t.TempDir()
			src := filepath.Join(root, "site")
			files := linesTree("dir%d/file %02d.txt")
			writeTree(t, src, files)
			if age != 0 {
				mtime := time.Now().Add(-age)
				for p := range files {
					if err := os.Chtimes(filepath.Join(src, filepath.FromSlash(p)), mtime, mtime); err != nil {
						t.Fatal(err)
					}
				}
			}
			cfg := dumpConfig(t, root)
			victim := "dir2/file 10.txt"
			rewritten := strings.ToUpper(files[victim])
			var changed atomic.Bool
			now, _ := time.Parse(time.RFC3339, "2026-01-01T00:00:00Z")
			_, err := Build(context.Background(), cfg, Options{Now: now, Notify: func(n Note) {
				if n.Kind == NoteWritten && !changed.Swap(true) {
					if err := os.WriteFile(filepath.Join(src, filepath.FromSlash(victim)), []byte(rewritten), 0o644); err != nil {
						t.Error(err)
					}
				}
			}})
			if err == nil || !strings.Contains(err.Error(), "changed since it was scanned") || !strings.Contains(err.Error(), victim) {
				t.Fatalf("build: %v; want a failure naming %s as changed since it was scanned", err, victim)
			}
			filepath.WalkDir(cfg.Out, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					t.Errorf("the failed build left %s", p)
				}
				return nil
			})
			files[victim] = rewritten
			buildAt(t, cfg, "2026-01-01T01:00:00Z", limits{})
			if got := resourceDumpTree(t, cfg.Out); !maps.Equal(got, files) {
				t.Error("the next build's Resource Dump does not hold the source's bytes")
			}
			if n := len(packageFiles(t, cfg.Out)); n < 4 {
				t.Errorf("%d packages: the test needs several per batch", n)
			}
		})
	}
}

// TestDumpOfAFileTouchedAfterItsScan: a file whose modification time
// moves between the scan and its packaging, its bytes unchanged, is hashed
// again and packaged: only a change of its bytes fails the build.
func TestDumpOfAFileTouchedAfterItsScan(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "site")
	files := linesTree("dir%d/file %02d.txt")
	writeTree(t, src, files)
	old := time.Now().Add(-time.Hour)
	for p := range files {
		if err := os.Chtimes(filepath.Join(src, filepath.FromSlash(p)), old, old); err != nil {
			t.Fatal(err)
		}
	}
	cfg := dumpConfig(t, root)
	var touched atomic.Bool
	now, _ := time.Parse(time.RFC3339, "2026-01-01T00:00:00Z")
	_, err := Build(context.Background(), cfg, Options{Now: now, Notify: func(n Note) {
		if n.Kind == NoteWritten && !touched.Swap(true) {
			if err := os.Chtimes(filepath.Join(src, "dir2", "file 10.txt"), time.Now(), time.Now()); err != nil {
				t.Error(err)
			}
		}
	}})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	if got := resourceDumpTree(t, cfg.Out); !maps.Equal(got, files) {
		t.Error("the Resource Dump does not hold the source's bytes")
	}
}

// TestVouchedFileChangedWhileRead: a file packaged on the strength of its
// stat and written to while packaging read it fails the package when it is
// closed, saying what moved; one left alone closes without error.
func TestVouchedFileChangedWhileRead(t *testing.T) {
	name := filepath.Join(t.TempDir(), "a.txt")
	old := time.Now().Add(-time.Hour)
	for write, what := range map[string]string{"": "", "ORIGINAL": "modification time", "original, and more": "length"} {
		if err := os.WriteFile(name, []byte("original"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(name, old, old); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		vf := &vouchedFile{File: f, path: "/a.txt", scanned: snapshot.StatOf(info), scanStart: time.Now().UnixNano()}
		if write != "" {
			if err := os.WriteFile(name, []byte(write), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		err = vf.Close()
		var ce *zippkg.ChangedError
		switch {
		case what == "" && err != nil:
			t.Errorf("left alone: Close: %v", err)
		case what != "" && (!errors.As(err, &ce) || ce.Path != "/a.txt" || ce.What != what):
			t.Errorf("written %q while read: Close: %v, want a change of the %s", write, err, what)
		}
	}
}
