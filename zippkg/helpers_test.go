package zippkg

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/internal/sitemaptest"
	"github.com/rsgen/rsgen/rs"
)

var (
	testAt   = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	testUp   = "http://example.com/dataset1/capabilitylist.xml"
	testBase = "http://example.com"
)

// testFile is a source file of a test tree: its bytes and media type.
type testFile struct {
	data []byte
	typ  string
}

// sampleTree returns a small tree with text, already compressed media,
// an empty file, a nested path and a non-ASCII name.
func sampleTree() map[string]testFile {
	return map[string]testFile{
		"/resources/index.html":     {bytes.Repeat([]byte("<p>hello, world</p>\n"), 500), "text/html"},
		"/resources/img/logo.png":   {pseudoRandom(1, 20000), "image/png"},
		"/resources/paper.pdf":      {pseudoRandom(2, 7000), "application/pdf"},
		"/resources/empty.txt":      {nil, "text/plain"},
		"/resources/données/ü.xml":  {[]byte("<a>ü</a>"), "application/xml"},
		"/resources/a&b <c>.txt":    {[]byte("escaped"), "text/plain; charset=utf-8"},
		"/resources/deep/x/y/z.csv": {bytes.Repeat([]byte("1,2,3\n"), 3000), "text/csv"},
	}
}

// pseudoRandom returns n incompressible bytes that depend only on seed.
func pseudoRandom(seed byte, n int) []byte {
	out := make([]byte, 0, n+sha256.Size)
	sum := sha256.Sum256([]byte{seed})
	for len(out) < n {
		out = append(out, sum[:]...)
		sum = sha256.Sum256(sum[:])
	}
	return out[:n]
}

func hashOf(data []byte) string {
	m := md5.Sum(data)
	s := sha256.Sum256(data)
	return "md5:" + hex.EncodeToString(m[:]) + " sha-256:" + hex.EncodeToString(s[:])
}

// resourceManifest returns the manifest of tree, sorted by path, each
// entry with lastmod one hour per index before testAt.
func resourceManifest(tree map[string]testFile) *Manifest {
	m := &Manifest{Kind: ResourceDump, Up: testUp, At: testAt}
	for i, p := range sortedPaths(tree) {
		f := tree[p]
		m.Entries = append(m.Entries, Entry{
			Loc: testBase + p, Lastmod: testAt.Add(-time.Duration(i+1) * time.Hour),
			Path: p, Length: int64(len(f.data)), Hash: hashOf(f.data), Type: f.typ,
		})
	}
	return m
}

func sortedPaths[V any](tree map[string]V) []string {
	var ps []string
	for p := range tree {
		ps = append(ps, p)
	}
	for i := 1; i < len(ps); i++ { // insertion sort keeps the helper small
		for j := i; j > 0 && ps[j] < ps[j-1]; j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
	return ps
}

// memOpen opens bitstreams from an in-memory tree.
func memOpen(tree map[string]testFile) func(e *Entry) (io.ReadCloser, error) {
	return func(e *Entry) (io.ReadCloser, error) {
		f, ok := tree[e.Path]
		if !ok {
			return nil, fmt.Errorf("no file %s", e.Path)
		}
		return io.NopCloser(bytes.NewReader(f.data)), nil
	}
}

func writePackage(t testing.TB, m *Manifest, opts *Options, open func(e *Entry) (io.ReadCloser, error)) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(context.Background(), &buf, m, opts, open); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func decodeManifest(t testing.TB, data []byte) *sitemaptest.Doc {
	t.Helper()
	x, err := sitemaptest.Parse(data)
	if err != nil {
		t.Fatalf("decode manifest: %v\n%s", err, data)
	}
	return x
}

// checkPackage reads pkg with archive/zip and checks it against m and the
// tree it was made of: manifest.xml first and equal to WriteManifest's
// bytes; every manifest path a ZIP entry with the right bytes, length and
// hash; every ZIP entry in the manifest; methods, modes and times as
// documented.
func checkPackage(t *testing.T, pkg []byte, m *Manifest, content func(e *Entry) []byte) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(pkg), int64(len(pkg)))
	if err != nil {
		t.Fatalf("archive/zip: %v", err)
	}
	if len(zr.File) == 0 || zr.File[0].Name != ManifestName {
		t.Fatalf("first entry is not %s", ManifestName)
	}
	if name := string(pkg[30 : 30+binary.LittleEndian.Uint16(pkg[26:])]); name != ManifestName {
		t.Fatalf("first local header names %q", name)
	}
	checkManifestEntry(t, zr.File[0], m)
	byName := map[string]*zip.File{}
	for _, f := range zr.File[1:] {
		if _, dup := byName[f.Name]; dup {
			t.Errorf("ZIP entry %s twice", f.Name)
		}
		byName[f.Name] = f
	}
	x := decodeManifest(t, readEntry(t, zr.File[0]))
	for i, u := range x.URLs {
		e := &m.Entries[i]
		if u.MD().Change == rs.ChangeDeleted {
			if u.MD().Path != "" {
				t.Errorf("deleted %s has path %s", u.Loc, u.MD().Path)
			}
			continue
		}
		f := byName[strings.TrimPrefix(u.MD().Path, "/")]
		if f == nil {
			t.Errorf("manifest path %s: no ZIP entry", u.MD().Path)
			continue
		}
		delete(byName, f.Name)
		checkBitstream(t, f, u.MD(), e, content(e))
	}
	for name := range byName {
		t.Errorf("ZIP entry %s is not in the manifest", name)
	}
}

func checkManifestEntry(t *testing.T, f *zip.File, m *Manifest) {
	t.Helper()
	var want bytes.Buffer
	if err := WriteManifest(&want, m); err != nil {
		t.Fatal(err)
	}
	if got := readEntry(t, f); !bytes.Equal(got, want.Bytes()) {
		t.Errorf("packaged manifest differs from WriteManifest:\n%s\n---\n%s", got, want.Bytes())
	}
	if f.Method != zip.Deflate || !f.Modified.Equal(zipTime(m.time())) {
		t.Errorf("manifest.xml: method %d, modified %v", f.Method, f.Modified)
	}
}

func checkBitstream(t *testing.T, f *zip.File, md sitemaptest.MD, e *Entry, want []byte) {
	t.Helper()
	got := readEntry(t, f)
	if !bytes.Equal(got, want) {
		t.Errorf("%s: packaged bytes differ from the source", md.Path)
	}
	if md.Length != fmt.Sprint(len(got)) || md.Hash != hashOf(got) {
		t.Errorf("%s: manifest length %s hash %s, bytes have %d %s", md.Path, md.Length, md.Hash, len(got), hashOf(got))
	}
	wantTime := e.Lastmod
	if wantTime.IsZero() {
		wantTime = testAt
	}
	if f.Method != DefaultMethod(e.Type) || f.Mode() != 0o644 || !f.Modified.Equal(zipTime(wantTime)) {
		t.Errorf("%s: method %d mode %v modified %v", md.Path, f.Method, f.Mode(), f.Modified)
	}
}

func readEntry(t testing.TB, f *zip.File) []byte {
	t.Helper()
	r, err := f.Open()
	if err != nil {
		t.Fatalf("open %s: %v", f.Name, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r) // checks the CRC-32 at EOF
	if err != nil {
		t.Fatalf("read %s: %v", f.Name, err)
	}
	return data
}

// unzipTest runs Info-ZIP's unzip -t on the package file. It skips when
// unzip is absent, unless RSGEN_REQUIRE_UNZIP=1.
func unzipTest(t *testing.T, file string) {
	t.Helper()
	bin, err := exec.LookPath("unzip")
	if err != nil {
		if os.Getenv("RSGEN_REQUIRE_UNZIP") == "1" {
			t.Fatal("unzip not found and RSGEN_REQUIRE_UNZIP=1")
		}
		t.Skip("unzip not found; install Info-ZIP unzip to run this check")
	}
	out, err := exec.Command(bin, "-t", file).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "No errors detected") {
		t.Fatalf("unzip -t %s: %v\n%s", file, err, out)
	}
}

// unzipTestBytes writes pkg to a file and runs unzipTest on it.
func unzipTestBytes(t *testing.T, pkg []byte) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "package.zip")
	if err := os.WriteFile(file, pkg, 0o644); err != nil {
		t.Fatal(err)
	}
	unzipTest(t, file)
}
