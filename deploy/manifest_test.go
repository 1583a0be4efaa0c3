package deploy

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/rsgen/rsgen/hosting"
)

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
	got, err := decodeManifest(data)
	if err != nil {
		t.Fatal(err)
	}
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
		`o 1 ` + sum + ` 1 "a"`,     // no headers numbered 1
		`o 0 ` + sum[2:] + ` 1 "a"`, // short digest
		`x 0 ` + sum + ` 1 "a"`,     // unknown status
		`o 0 ` + sum + ` one "a"`,   // not a number
		`o 0 ` + sum + ` 1 a`,       // not quoted
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
