package zippkg

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
)

// spoolTree spools every bitstream of m the way the generator's hashing
// pass would: written in uneven chunks through a tee.
func spoolTree(t *testing.T, s *Spool, m *Manifest, tree map[string]testFile) map[string]*Spooled {
	t.Helper()
	out := map[string]*Spooled{}
	for i := range m.Entries {
		e := &m.Entries[i]
		sw, err := s.Begin(e.Path, e.Type)
		if err != nil {
			t.Fatal(err)
		}
		data := tree[e.Path].data
		for chunk := 1; len(data) > 0; chunk = chunk*3 + 1 {
			n := min(chunk, len(data))
			if _, err := sw.Write(data[:n]); err != nil {
				t.Fatal(err)
			}
			data = data[n:]
		}
		if out[e.Path], err = sw.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestSpooledEqualsStreamed(t *testing.T) {
	tree := sampleTree()
	m := resourceManifest(tree)
	streamed := writePackage(t, m, nil, memOpen(tree))

	s, err := NewSpool(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	spooled := spoolTree(t, s, m, tree)
	for _, mix := range []string{"all spooled", "every other spooled"} {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, m, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range m.Entries {
			if mix == "all spooled" || i%2 == 0 {
				err = w.AddSpooled(e.Path, spooled[e.Path])
			} else {
				err = w.Add(e.Path, bytes.NewReader(tree[e.Path].data))
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), streamed) {
			t.Errorf("%s: package differs from the streamed one", mix)
		}
	}
	unzipTestBytes(t, streamed)
}

func TestSpooledChecks(t *testing.T) {
	tree := map[string]testFile{"/a.txt": {[]byte("abc"), "text/plain"}, "/b.png": {[]byte("png"), "image/png"}}
	m := resourceManifest(tree)
	s, err := NewSpool(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sp := spoolTree(t, s, m, tree)
	short := spoolTree(t, s, m, map[string]testFile{"/a.txt": {[]byte("ab"), "text/plain"}, "/b.png": {[]byte("png"), "image/png"}})
	for name, tc := range map[string]struct {
		path string
		sp   *Spooled
		want string
	}{
		"other path":   {"/a.txt", sp["/b.png"], "spooled bitstream is /b.png"},
		"other method": {"/a.txt", &Spooled{Path: "/a.txt", Method: zip.Store, Size: 3}, "method 0"},
		"other length": {"/a.txt", short["/a.txt"], "changed while packaging"},
	} {
		w, err := NewWriter(io.Discard, m, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddSpooled(tc.path, tc.sp); err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
			t.Errorf("%s: got %v, want %q", name, err, tc.want)
		}
	}
}

func TestSpoolAbandonedWriter(t *testing.T) {
	tree := map[string]testFile{"/a.txt": {bytes.Repeat([]byte("a"), 100000), "text/plain"}}
	m := resourceManifest(tree)
	s, err := NewSpool(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	sw, err := s.Begin("/a.txt", "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Write(pseudoRandom(5, 200000)); err != nil { // a read that fails halfway
		t.Fatal(err)
	}
	sp := spoolTree(t, s, m, tree)
	if _, err := sw.Write([]byte("late")); err == nil {
		t.Error("write to an abandoned SpoolWriter succeeded")
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddSpooled("/a.txt", sp["/a.txt"]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	checkPackage(t, buf.Bytes(), m, func(e *Entry) []byte { return tree[e.Path].data })

	name := s.f.Name()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(name); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("spool file left after Close: %v", err)
	}
	if _, err := s.Begin("/b", ""); err == nil {
		t.Error("Begin after Close succeeded")
	}
}
