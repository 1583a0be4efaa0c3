package deploy

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rsgen/rsgen/hosting"
)

// manifest is a whole manifest in memory, for tests: a deploy streams it.
type manifest struct {
	entries map[string]*entry
}

func newManifest() *manifest { return &manifest{entries: map[string]*entry{}} }

// encode returns the manifest's bytes, as manifestWriter writes them.
func (m *manifest) encode() []byte {
	dir, err := os.MkdirTemp("", "manifest-test-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	w, err := createManifest(filepath.Join(dir, "body"))
	if err != nil {
		panic(err)
	}
	for _, k := range slices.Sorted(maps.Keys(m.entries)) {
		if err := w.add(m.entries[k]); err != nil {
			panic(err)
		}
	}
	if err := w.finish(filepath.Join(dir, "manifest")); err != nil {
		panic(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "manifest"))
	if err != nil {
		panic(err)
	}
	return data
}

// decodeManifest reads a whole manifest through manifestReader.
func decodeManifest(data []byte) (*manifest, error) {
	r, err := readManifest(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	m := newManifest()
	for {
		e, err := r.next()
		if err != nil {
			return nil, err
		}
		if e == nil {
			return m, nil
		}
		m.entries[e.Key] = e
	}
}

// mustDecodeManifest reads a whole manifest that must be valid.
func mustDecodeManifest(t *testing.T, data []byte) *manifest {
	t.Helper()
	m, err := decodeManifest(data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// equalManifests reports whether a and b say the same.
func equalManifests(a, b *manifest) bool {
	return maps.EqualFunc(a.entries, b.entries, func(x, y *entry) bool { return *x == *y })
}

// TestManifestRoundTrip: every status and any key survive encoding, and
// equal manifests have equal bytes.
func TestManifestRoundTrip(t *testing.T) {
	m := newManifest()
	for i, key := range []string{"a.txt", "da ta/\"q\"\n#1.json", "carte-île-de-ré.png", "resourcesync/x/resourcelist.xml", "bin/\xff\xfe"} {
		e := &entry{Object: Object{Key: key, Size: int64(i * 1000), SHA256: sha256.Sum256([]byte(key)),
			Headers: Headers{ContentType: []string{"text/plain", ""}[i%2], CacheControl: []string{"", hosting.ImmutableCacheControl, "public, max-age=300"}[i%3]}}}
		e.status = status(i % 3)
		if e.status == retired {
			e.since = 1767225600 + int64(i)
		}
		m.entries[key] = e
	}
	data := m.encode()
	got := mustDecodeManifest(t, data)
	if !equalManifests(got, m) || !bytes.Equal(got.encode(), data) {
		t.Errorf("round trip changed the manifest")
	}
}

// TestManifestRefusesTampering: a manifest that names a key out of the
// store, or the deploy's own files, or that does not parse, is refused.
func TestManifestRefusesTampering(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	for _, body := range []string{
		`o 0 ` + sum + ` 1 "../outside"`,
		`o 0 ` + sum + ` 1 "/etc/passwd"`,
		`o 0 ` + sum + ` 1 ".rsgen-deploy/lock"`,
		`o 0 ` + sum + ` 1 "a/./b"`,
		`o 1 ` + sum + ` 1 "a"`,                                      // no headers numbered 1
		`o 0 ` + sum[2:] + ` 1 "a"`,                                  // short digest
		`x 0 ` + sum + ` 1 "a"`,                                      // unknown status
		`o 0 ` + sum + ` one "a"`,                                    // not a number
		`o 0 ` + sum + ` 1 a`,                                        // not quoted
		`o 0 ` + sum + ` 1 "b"` + "\n" + `o 0 ` + sum + ` 1 "a"`,     // out of order
		`o 0 ` + sum + ` 1 "a"` + "\n" + `o 0 ` + sum + ` 1 "a"`,     // twice
		`o 0 ` + sum + ` 1 "a/b"` + "\n" + `o 0 ` + sum + ` 1 "a-b"`, // in a walk's order, not in byte order
	} {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write([]byte(manifestMagic + "\nh \"\" \"\"\n" + body + "\n"))
		zw.Close()
		if _, err := decodeManifest(buf.Bytes()); err == nil {
			t.Errorf("accepted %q", body)
		}
	}
	if _, err := decodeManifest([]byte("not gzip")); err == nil {
		t.Error("accepted bytes that are not a manifest")
	}
}

// TestManifestFormat: the manifest is version 1 as rsgen has always
// written it, byte for byte once decompressed: the headers table first,
// numbered in the order of the first key that has them, then the keys in
// byte order; so manifests already on stores read as they are.
func TestManifestFormat(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	text := manifestMagic + "\n" +
		`h "text/plain" ""` + "\n" +
		`h "application/xml" "public, max-age=300"` + "\n" +
		`o 0 ` + sum + ` 10 "a-b"` + "\n" +
		`p 1 ` + sum + ` 20 "a.b"` + "\n" +
		`r1767225600 0 ` + sum + ` 0 "a/b"` + "\n" +
		`o 1 ` + sum + ` 3 "da ta/\"q\"\n#1.json"` + "\n"
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(text))
	zw.Close()
	m := mustDecodeManifest(t, buf.Bytes())
	if len(m.entries) != 4 || m.entries["a/b"].status != retired || m.entries["a.b"].status != pending {
		t.Fatalf("decoded %+v", m.entries)
	}
	zr, err := gzip.NewReader(bytes.NewReader(m.encode()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != text {
		t.Errorf("encoded\n%s\nwant\n%s", got, text)
	}
}
