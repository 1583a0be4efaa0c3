package zippkg

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// writeTree writes n files of pseudo-random text and binary content under
// dir, with sizes up to 40 KB.
func writeTree(t testing.TB, dir string, n int) {
	t.Helper()
	for i := range n {
		name := filepath.Join(dir, fmt.Sprintf("d%02d", i%7), fmt.Sprintf("f%04d.html", i))
		data := bytes.Repeat([]byte(fmt.Sprintf("<p>file %d</p>\n", i)), i*37%2500)
		if i%3 == 0 {
			name = filepath.Join(dir, fmt.Sprintf("d%02d", i%7), fmt.Sprintf("f%04d.png", i))
			data = pseudoRandom(byte(i), i*53%40000)
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// scanTree returns the sorted entries of a Resource Dump of dir, with
// paths under /resources.
func scanTree(t testing.TB, dir string) []Entry {
	t.Helper()
	var entries []Entry
	err := filepath.WalkDir(dir, func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, name)
		p := "/resources/" + filepath.ToSlash(rel)
		typ := "text/html"
		if filepath.Ext(name) == ".png" {
			typ = "image/png"
		}
		entries = append(entries, Entry{Loc: testBase + p, Path: p, Length: int64(len(data)), Hash: hashOf(data), Type: typ})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// buildDump plans the tree at dir and writes one package per range into
// out, named after the range's first path, as a generator would.
func buildDump(t *testing.T, dir, out string, at time.Time) map[string][]byte {
	t.Helper()
	entries := scanTree(t, dir)
	items := make([]Item, len(entries))
	for i, e := range entries {
		items[i] = Item{Path: e.Path, Size: e.Length}
	}
	ranges, err := Plan(slices.Values(items), Limits{MaxBytes: 200_000})
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string][]byte{}
	for _, r := range ranges {
		m := &Manifest{Kind: ResourceDump, Up: testUp, At: at, Entries: entries[r.Start:r.End]}
		var buf bytes.Buffer
		err := Write(context.Background(), &buf, m, nil, func(e *Entry) (io.ReadCloser, error) {
			return os.Open(filepath.Join(dir, filepath.FromSlash(e.Path[len("/resources/"):])))
		})
		if err != nil {
			t.Fatal(err)
		}
		if int64(buf.Len()) > r.Bytes {
			t.Errorf("package %s: %d bytes, estimate %d", m.Entries[0].Path, buf.Len(), r.Bytes)
		}
		pkgs[m.Entries[0].Path] = buf.Bytes()
		if out != "" {
			file := filepath.Join(out, fmt.Sprintf("part%d.zip", len(pkgs)))
			if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return pkgs
}

// TestResourceDumpRebuildsTree extracts every package of a dump with
// archive/zip, tests each with unzip -t, and compares the result with the
// source tree.
func TestResourceDumpRebuildsTree(t *testing.T) {
	src, out, copyDir := t.TempDir(), t.TempDir(), t.TempDir()
	writeTree(t, src, 300)
	pkgs := buildDump(t, src, out, testAt)
	if len(pkgs) < 5 {
		t.Fatalf("only %d packages; the test wants several", len(pkgs))
	}
	for _, pkg := range pkgs {
		extract(t, pkg, copyDir)
	}
	if a, b := treeDigest(t, src), treeDigest(t, filepath.Join(copyDir, "resources")); a != b {
		t.Errorf("extracted tree differs from the source:\n%s\n---\n%s", a, b)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.zip"))
	for _, f := range files {
		unzipTest(t, f)
	}
}

// TestOneFileChangeRewritesOnePackage changes one file and rebuilds: one
// package differs, every other one is byte-identical.
func TestOneFileChangeRewritesOnePackage(t *testing.T) {
	src := t.TempDir()
	writeTree(t, src, 300)
	before := buildDump(t, src, "", testAt)
	if err := os.WriteFile(filepath.Join(src, "d03", "f0150.html"), []byte("<p>changed</p>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	after := buildDump(t, src, "", testAt)
	differ := 0
	for first, pkg := range after {
		if !bytes.Equal(before[first], pkg) {
			differ++
		}
	}
	if differ != 1 || len(before) != len(after) {
		t.Errorf("%d of %d packages differ (%d before)", differ, len(after), len(before))
	}
}

func extract(t *testing.T, pkg []byte, dir string) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(pkg), int64(len(pkg)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File[1:] {
		name := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, readEntry(t, f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// treeDigest lists every file under dir with its hash.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	var b bytes.Buffer
	err := filepath.WalkDir(dir, func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(name)
		rel, _ := filepath.Rel(dir, name)
		fmt.Fprintf(&b, "%s %s\n", rel, hashOf(data))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
