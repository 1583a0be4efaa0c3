package zippkg

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/rs"
)

func TestResourceDumpPackage(t *testing.T) {
	tree := sampleTree()
	m := resourceManifest(tree)
	pkg := writePackage(t, m, nil, memOpen(tree))
	checkPackage(t, pkg, m, func(e *Entry) []byte { return tree[e.Path].data })
	x := decodeManifest(t, mustManifest(t, m))
	if x.MD().Capability != rs.CapResourceDumpManifest || x.MD().At != "2024-05-06T07:08:09Z" ||
		len(x.Links) != 1 || x.Links[0].Rel != "up" || x.Links[0].Href != testUp {
		t.Errorf("manifest root: %+v %+v", x.MD(), x.Links)
	}
	unzipTestBytes(t, pkg)
}

func TestChangeDumpPackage(t *testing.T) {
	m, versions := changeManifest()
	pkg := writePackage(t, m, nil, func(e *Entry) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(versions[e.Path])), nil
	})
	checkPackage(t, pkg, m, func(e *Entry) []byte { return versions[e.Path] })
	x := decodeManifest(t, mustManifest(t, m))
	var changes []string
	for _, u := range x.URLs {
		changes = append(changes, u.MD().Change+" "+u.MD().Path)
	}
	want := "created /changes/res7.html|updated /changes/res9.pdf|deleted |updated /changes/res7-v2.html"
	if got := strings.Join(changes, "|"); got != want || x.MD().From == "" || x.MD().Until == "" {
		t.Errorf("changes %s, from %q until %q", got, x.MD().From, x.MD().Until)
	}
	unzipTestBytes(t, pkg)
}

// changeManifest returns the changes of spec example 23 with their
// bitstreams, the two versions of res7.html at distinct paths.
func changeManifest() (*Manifest, map[string][]byte) {
	day := time.Date(2013, 1, 2, 0, 0, 0, 0, time.UTC)
	var ps Paths
	versions := map[string][]byte{}
	m := &Manifest{Kind: ChangeDump, Up: testUp, From: day, Until: day.Add(24 * time.Hour)}
	add := func(name, change string, hour int, data []byte, typ string) {
		e := Entry{Loc: "http://example.com/" + name, Change: change, Datetime: day.Add(time.Duration(hour) * time.Hour)}
		if change != rs.ChangeDeleted {
			e.Lastmod, e.Path, e.Length, e.Hash, e.Type = e.Datetime, ps.Assign("/changes/"+name), int64(len(data)), hashOf(data), typ
			versions[e.Path] = data
		}
		m.Entries = append(m.Entries, e)
	}
	add("res7.html", rs.ChangeCreated, 12, []byte("<p>first</p>"), "text/html")
	add("res9.pdf", rs.ChangeUpdated, 13, pseudoRandom(9, 3000), "application/pdf")
	add("res5.tiff", rs.ChangeDeleted, 19, nil, "")
	add("res7.html", rs.ChangeUpdated, 20, []byte("<p>second</p>"), "text/html")
	return m, versions
}

func mustManifest(t *testing.T, m *Manifest) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteManifest(&buf, m); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDeterministic(t *testing.T) {
	tree := sampleTree()
	first := writePackage(t, resourceManifest(tree), nil, memOpen(tree))
	// The same instants in another zone, read in other chunk sizes.
	m := resourceManifest(tree)
	zone := time.FixedZone("UTC+5", 5*3600)
	m.At = m.At.In(zone)
	for i := range m.Entries {
		m.Entries[i].Lastmod = m.Entries[i].Lastmod.In(zone)
	}
	second := writePackage(t, m, nil, func(e *Entry) (io.ReadCloser, error) {
		return io.NopCloser(&oneByteReader{bytes.NewReader(tree[e.Path].data)}), nil
	})
	if !bytes.Equal(first, second) {
		t.Fatal("two packages of the same input differ")
	}
}

type oneByteReader struct{ r io.Reader }

func (o *oneByteReader) Read(p []byte) (int, error) { return o.r.Read(p[:min(len(p), 1)]) }

func TestZipTimeIsUTCAndClamped(t *testing.T) {
	tree := map[string]testFile{"/old.txt": {[]byte("old"), "text/plain"}, "/new.txt": {[]byte("new"), "text/plain"}}
	m := resourceManifest(tree)
	m.Entries[0].Lastmod = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC) // new.txt
	m.Entries[1].Lastmod = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC) // old.txt
	pkg := writePackage(t, m, nil, memOpen(tree))
	zr, err := zip.NewReader(bytes.NewReader(pkg), int64(len(pkg)))
	if err != nil {
		t.Fatal(err)
	}
	if got := zr.File[1].Modified; !got.Equal(maxZipTime) {
		t.Errorf("new.txt modified %v, want %v", got, maxZipTime)
	}
	if got := zr.File[2].Modified; !got.Equal(minZipTime) {
		t.Errorf("old.txt modified %v, want %v", got, minZipTime)
	}
}

func TestCompressionMethod(t *testing.T) {
	tree := sampleTree()
	m := resourceManifest(tree)
	storeAll := &Options{Method: func(string) uint16 { return zip.Store }}
	pkg := writePackage(t, m, storeAll, memOpen(tree))
	zr, err := zip.NewReader(bytes.NewReader(pkg), int64(len(pkg)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File[1:] {
		if f.Method != zip.Store || f.CompressedSize64 != f.UncompressedSize64 {
			t.Errorf("%s: method %d, sizes %d/%d", f.Name, f.Method, f.CompressedSize64, f.UncompressedSize64)
		}
	}
	if _, err := NewWriter(io.Discard, m, &Options{Level: 42}); err == nil {
		t.Error("level 42 accepted")
	}
	bad := &Options{Method: func(string) uint16 { return 99 }}
	if err := Write(context.Background(), io.Discard, m, bad, memOpen(tree)); err == nil || !strings.Contains(err.Error(), "method 99") {
		t.Errorf("method 99: %v", err)
	}
}

func TestDefaultMethod(t *testing.T) {
	for typ, want := range map[string]uint16{
		"image/png": zip.Store, "image/jpeg": zip.Store, "image/svg+xml": zip.Deflate,
		"video/mp4": zip.Store, "audio/mpeg": zip.Store, "application/pdf": zip.Store,
		"application/zip": zip.Store, "application/gzip": zip.Store, "application/epub+zip": zip.Store,
		"application/vnd.openxmlformats-officedocument.wordprocessingml.document": zip.Store,
		"font/woff2": zip.Store, "font/ttf": zip.Deflate,
		"text/html; charset=utf-8": zip.Deflate, "application/xml": zip.Deflate,
		"": zip.Deflate, "not a type": zip.Deflate, "IMAGE/PNG": zip.Store,
	} {
		if got := DefaultMethod(typ); got != want {
			t.Errorf("DefaultMethod(%q) = %d, want %d", typ, got, want)
		}
	}
}

func TestChangedWhilePackaging(t *testing.T) {
	tree := map[string]testFile{"/a.txt": {[]byte("original content"), "text/plain"}}
	for name, data := range map[string]string{
		"same length":  "original CONTENT",
		"longer":       "original content, and more",
		"shorter":      "original",
		"hash missing": "original content",
	} {
		t.Run(name, func(t *testing.T) {
			m := resourceManifest(tree)
			if name == "hash missing" {
				m.Entries[0].Hash = ""
			}
			err := Write(context.Background(), io.Discard, m, nil, memOpen(map[string]testFile{"/a.txt": {[]byte(data), "text/plain"}}))
			var ce *ChangedError
			if name == "hash missing" {
				if err != nil {
					t.Fatalf("unchanged file, length only: %v", err)
				}
				return
			}
			if !errors.As(err, &ce) || !errors.Is(err, ErrChanged) || ce.Path != "/a.txt" ||
				!strings.Contains(err.Error(), "/a.txt: the file changed while packaging") {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// TestFileChangesDuringRead rewrites a file on disk after packaging has
// read part of it.
func TestFileChangesDuringRead(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "big.bin")
	data := pseudoRandom(3, 1<<20)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m := resourceManifest(map[string]testFile{"/big.bin": {data, "application/octet-stream"}})
	err := Write(context.Background(), io.Discard, m, nil, func(e *Entry) (io.ReadCloser, error) {
		f, err := os.Open(file)
		return &rewriteAfterFirstRead{File: f, name: file}, err
	})
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "/big.bin") {
		t.Fatalf("got %v", err)
	}
}

type rewriteAfterFirstRead struct {
	*os.File
	name string
	done bool
}

func (r *rewriteAfterFirstRead) Read(p []byte) (int, error) {
	n, err := r.File.Read(p)
	if !r.done {
		r.done = true
		if werr := os.WriteFile(r.name, pseudoRandom(4, 1<<20), 0o644); werr != nil {
			return n, werr
		}
	}
	return n, err
}

func TestWriterOrder(t *testing.T) {
	tree := sampleTree()
	m := resourceManifest(tree)
	w, err := NewWriter(io.Discard, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	second := m.Entries[1].Path
	if err := w.Add(second, bytes.NewReader(tree[second].data)); err == nil || !strings.Contains(err.Error(), m.Entries[0].Path+" next") {
		t.Errorf("out of order: %v", err)
	}
	if err := w.Close(); err == nil {
		t.Error("Close after a failed Add succeeded")
	}

	w, err = NewWriter(io.Discard, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := m.Entries[0].Path
	if err := w.Add(first, bytes.NewReader(tree[first].data)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), second+" was not added") {
		t.Errorf("Close with bitstreams missing: %v", err)
	}
	if err := w.Add(second, bytes.NewReader(nil)); err == nil {
		t.Error("Add after Close succeeded")
	}
}

func TestWriteReportsOpenError(t *testing.T) {
	m := resourceManifest(sampleTree())
	err := Write(context.Background(), io.Discard, m, nil, func(e *Entry) (io.ReadCloser, error) { return nil, os.ErrNotExist })
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), m.Entries[0].Path) {
		t.Errorf("got %v", err)
	}
}

func TestMemoryDoesNotGrowWithFileSize(t *testing.T) {
	alloc := func(size int64) uint64 {
		m := &Manifest{Kind: ResourceDump, Up: testUp, At: testAt, Entries: []Entry{
			{Loc: testBase + "/big", Path: "/big", Length: size, Type: "text/plain"},
		}}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := Write(context.Background(), io.Discard, m, nil, func(e *Entry) (io.ReadCloser, error) {
			return io.NopCloser(io.LimitReader(zeros{}, size)), nil
		})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := alloc(1<<20), alloc(256<<20)
	if large > small+1<<20 {
		t.Errorf("packaging 256 MiB allocated %d bytes, 1 MiB %d", large, small)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestWriteStopsWhenCancelled: an interrupt during a bitstream stops
// Write within one read, with the context's error, instead of packaging
// the rest.
func TestWriteStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manifest{Kind: ResourceDump, Up: "https://example.org/cl.xml", At: time.Unix(1700000000, 0),
		Entries: []Entry{{Loc: "https://example.org/a", Path: "/a", Length: 1 << 30, Hash: "md5:00000000000000000000000000000000"}}}
	reads := 0
	err := Write(ctx, io.Discard, m, nil, func(e *Entry) (io.ReadCloser, error) {
		return io.NopCloser(readFunc(func(p []byte) (int, error) {
			reads++
			cancel() // the interrupt arrives during the first read
			return len(p), nil
		})), nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Write returned %v, want context.Canceled", err)
	}
	if reads != 1 {
		t.Errorf("%d reads after the interrupt, want 1", reads)
	}
}

type readFunc func([]byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }

// TestVouchedBitstreams: a bitstream its opener vouches for is packaged
// without its digests being checked, small (compressed ahead) or large
// (streamed): bytes of the right length but not those the manifest hashed
// go into the package as they are, which shows they were not hashed. Its
// length is still checked, and the error of its Close, where the opener
// reports a change while it was read, fails the package.
func TestVouchedBitstreams(t *testing.T) {
	tree := map[string]testFile{
		"/small.txt": {[]byte("original content"), "text/plain"},
		"/big.bin":   {pseudoRandom(4, prefetchMax+1), "application/octet-stream"},
	}
	other := map[string]testFile{
		"/small.txt": {[]byte("original CONTENT"), "text/plain"},
		"/big.bin":   {pseudoRandom(5, prefetchMax+1), "application/octet-stream"},
	}
	m := resourceManifest(tree)
	vouch := func(files map[string]testFile, closeErr error) func(e *Entry) (io.ReadCloser, error) {
		return func(e *Entry) (io.ReadCloser, error) {
			return Vouched(errCloser{bytes.NewReader(files[e.Path].data), closeErr}), nil
		}
	}
	pkg := writePackage(t, m, nil, vouch(other, nil))
	zr, err := zip.NewReader(bytes.NewReader(pkg), int64(len(pkg)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File[1:] {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc) // checks the CRC-32
		if err != nil || !bytes.Equal(data, other["/"+f.Name].data) {
			t.Errorf("%s: %v; the package does not hold the vouched bytes", f.Name, err)
		}
	}

	for _, p := range []string{"/small.txt", "/big.bin"} {
		short := maps.Clone(other)
		short[p] = testFile{other[p].data[1:], other[p].typ}
		if err := Write(context.Background(), io.Discard, m, nil, vouch(short, nil)); !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), p) {
			t.Errorf("vouched %s one byte short: %v, want ErrChanged naming it", p, err)
		}
	}
	moved := errors.New("moved while read")
	if err := Write(context.Background(), io.Discard, m, nil, vouch(tree, moved)); !errors.Is(err, moved) {
		t.Errorf("a vouched bitstream whose Close fails: %v, want its error", err)
	}
}

type errCloser struct {
	io.Reader
	err error
}

func (c errCloser) Close() error { return c.err }
