package deploy

import (
	"compress/gzip"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/layout"
)

// readBack closes the file list w wrote into f and opens it for reading,
// closed with the test.
func readBack(t *testing.T, w *fileListWriter, f *os.File) *fileListReader {
	t.Helper()
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r, closer, err := openFileList(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	return r
}

// scanFiles scans root through the hash cache at cachePath, and returns
// what the scan counted and the files it listed; unless cachePath is "",
// the list then replaces the cache, as a deploy's does.
func scanFiles(t *testing.T, root *os.Root, publishes func(string) (bool, error), cachePath string, notify func(Event)) (*scanResult, []*localFile, error) {
	t.Helper()
	cache := loadHashCache(cachePath)
	defer cache.close()
	list := filepath.Join(t.TempDir(), "files")
	f, err := os.Create(list)
	if err != nil {
		t.Fatal(err)
	}
	w := newFileListWriter(f, time.Now().UnixNano())
	res, err := scanOutput(context.Background(), root, publishes, cache, notify, w)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	r := readBack(t, w, f)
	var files []*localFile
	for {
		lf, err := r.next()
		if err != nil {
			t.Fatal(err)
		}
		if lf == nil {
			break
		}
		files = append(files, lf)
	}
	if cachePath != "" {
		if err := os.Rename(list, cachePath); err != nil {
			t.Fatal(err)
		}
	}
	return res, files, nil
}

// threeOldFiles returns a folder of a.txt, b/c.txt and d.txt, modified an
// hour ago, and that time.
func threeOldFiles(t *testing.T) (string, time.Time) {
	out := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for _, f := range []string{"a.txt", "b/c.txt", "d.txt"} {
		p := filepath.Join(out, filepath.FromSlash(f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(f), 0o644)
		os.Chtimes(p, old, old)
	}
	return out, old
}

// TestScanTrustsUnchangedStat: the second scan reads no file, a file whose
// mtime changed is read again, and so is one modified after the scan that
// recorded it started (it may have changed after it was read).
func TestScanTrustsUnchangedStat(t *testing.T) {
	out, old := threeOldFiles(t)
	root := openRoot(t, out)
	cachePath := filepath.Join(t.TempDir(), "hashes")
	scan := func() *scanResult {
		t.Helper()
		res, _, err := scanFiles(t, root, (&DirStore{}).Publishes, cachePath, func(Event) {})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := scan(); res.hashed != 3 || res.files != 3 {
		t.Fatalf("first scan read %d of %d files; want 3 of 3", res.hashed, res.files)
	}
	if res := scan(); res.hashed != 0 {
		t.Errorf("second scan read %d files; want 0", res.hashed)
	}
	touched := old.Add(time.Minute)
	os.Chtimes(filepath.Join(out, "a.txt"), touched, touched)
	future := time.Now().Add(time.Hour) // modified after the scan that recorded it started
	os.Chtimes(filepath.Join(out, "d.txt"), future, future)
	if res := scan(); res.hashed != 2 {
		t.Errorf("scan after a touch and a racy mtime read %d files; want 2", res.hashed)
	}
	if res := scan(); res.hashed != 1 {
		t.Errorf("the racy file must be read until its mtime is older than a scan: read %d; want 1", res.hashed)
	}
}

// TestScanLeavesOut: temporary files of a build, links and the files the
// store does not publish are left out; a file at the deploy's own folder
// fails.
func TestScanLeavesOut(t *testing.T) {
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "a.txt"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(out, layout.TempPrefix+"123"), []byte("tmp"), 0o644)
	os.WriteFile(filepath.Join(out, ".htaccess"), []byte("x"), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(out, "link"))
	var warnings []string
	s3 := &S3Store{}
	_, files, err := scanFiles(t, openRoot(t, out), s3.Publishes, "", func(e Event) {
		warnings = append(warnings, e.Path+": "+e.Msg)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].rel != "a.txt" {
		t.Errorf("scanned %v; want a.txt alone", files)
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "link:") {
		t.Errorf("warnings %q; want one about the link", warnings)
	}
	os.MkdirAll(filepath.Join(out, MetaDir), 0o755)
	if _, _, err := scanFiles(t, openRoot(t, out), s3.Publishes, "", func(Event) {}); err == nil {
		t.Error("an output holding the deploy's own folder was scanned")
	}
}

// TestWalkOutputByteOrder: the walk yields the paths in byte order, the
// order of the manifest and of the hash cache, which fs.WalkDir's order
// (by name within a folder) is not: "a/b" sorts after "a-b" and "a.b", as
// '/' comes after '-' and '.', but before "a0".
func TestWalkOutputByteOrder(t *testing.T) {
	out := t.TempDir()
	for _, f := range []string{"a-b", "a/b", "a/b-c/d", "a/b.c", "a.b", "a0", "b/c", "b-c", layout.TempPrefix + "x/y"} {
		p := filepath.Join(out, filepath.FromSlash(f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(f), 0o644)
	}
	var walked, lexical []string
	err := walkOutput(openRoot(t, out), func(rel string, d fs.DirEntry) error {
		walked = append(walked, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a-b", "a.b", "a/b", "a/b-c/d", "a/b.c", "a0", "b-c", "b/c"}
	if !slices.Equal(walked, want) {
		t.Errorf("walked %q; want %q", walked, want)
	}
	if !slices.IsSorted(walked) {
		t.Errorf("walked %q: not in byte order", walked)
	}
	fs.WalkDir(os.DirFS(out), ".", func(rel string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(rel, layout.TempPrefix) {
			lexical = append(lexical, rel)
		}
		return nil
	})
	if slices.IsSorted(lexical) {
		t.Errorf("fs.WalkDir walked %q in byte order too: the test tests nothing", lexical)
	}
}

// TestScanDamagedHashCache: a hash cache damaged from some line on (a
// crash, a full disk) is trusted up to that line: the scan does not fail,
// and reads again the files the cache no longer vouches for.
func TestScanDamagedHashCache(t *testing.T) {
	out, _ := threeOldFiles(t)
	root := openRoot(t, out)
	cachePath := filepath.Join(t.TempDir(), "hashes")
	if _, _, err := scanFiles(t, root, (&DirStore{}).Publishes, cachePath, func(Event) {}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(cachePath)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(zr)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(text), "\n") // the header, a.txt, b/c.txt, d.txt
	lines[2] = "not a line of a file list\n"
	if err := os.WriteFile(cachePath, gzipped(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	res, files, err := scanFiles(t, root, (&DirStore{}).Publishes, cachePath, func(Event) {})
	if err != nil {
		t.Fatalf("scan through a damaged hash cache: %v", err)
	}
	if res.hashed != 2 || len(files) != 3 {
		t.Errorf("read %d of %d files; want the 2 past the damage", res.hashed, len(files))
	}
}
