package deploy

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"github.com/rsgen/rsgen/layout"
)

// gzipped returns text gzip-compressed, the form of the manifest and of
// a file list.
func gzipped(text string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(text))
	zw.Close()
	return b.Bytes()
}

// FuzzManifest reads manifests after their first line: a store's
// manifest is input rsgen did not necessarily write (an older rsgen,
// someone with access to the bucket). None makes the reader panic; one it
// accepts names clean keys outside the deploy's own folder in strictly
// increasing order, and survives writing it again.
func FuzzManifest(f *testing.F) {
	sum := strings.Repeat("ab", 32)
	for _, body := range []string{
		`h "text/plain" "public, max-age=300"` + "\no 0 " + sum + ` 5 "a.txt"` + "\np 0 " + sum + ` 7 "b/c d.txt"`,
		`h "" ""` + "\nr1700000000 0 " + sum + ` 0 "x"`,
		`o 0 ` + sum + ` 1 "../outside"`,
	} {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		data := gzipped(manifestMagic + "\n" + body)
		m, err := decodeManifest(data)
		if err != nil {
			return
		}
		r, err := readManifest(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		last := ""
		for {
			e, err := r.next()
			if err != nil {
				t.Fatalf("second read: %v", err)
			}
			if e == nil {
				break
			}
			if !layout.Clean(e.Key) || e.Key == MetaDir || strings.HasPrefix(e.Key, MetaDir+"/") || e.Key <= last {
				t.Fatalf("accepted key %q (after %q)", e.Key, last)
			}
			last = e.Key
		}
		again, err := decodeManifest(m.encode())
		if err != nil || !equalManifests(again, m) {
			t.Fatalf("written again: %v", err)
		}
	})
}

// FuzzFileList reads file lists after their first line: the hash cache
// is a file in the state folder, which a crash or a user can leave in any
// state. None makes the reader panic; one it accepts names clean paths in
// strictly increasing order.
func FuzzFileList(f *testing.F) {
	sum := strings.Repeat("0f", 32)
	f.Add(sum + ` 5 1700000000000000000 42 "a.txt"` + "\n" + sum + ` 0 -1 7 "b/c d.txt"`)
	f.Add(sum + ` 5 1 2 "b"` + "\n" + sum + ` 5 1 2 "a"`)
	f.Fuzz(func(t *testing.T, body string) {
		l, err := readFileList(bytes.NewReader(gzipped(hashCacheMagic + " 1\n" + body)))
		if err != nil {
			t.Fatal(err)
		}
		last := ""
		for {
			file, err := l.next()
			if err != nil || file == nil {
				return
			}
			if !layout.Clean(file.rel) || file.rel <= last {
				t.Fatalf("accepted path %q (after %q)", file.rel, last)
			}
			last = file.rel
		}
	})
}

// FuzzDecodeTask decodes a plan's writes: none makes decodeTask panic,
// and what it accepts survives encoding again.
func FuzzDecodeTask(f *testing.F) {
	f.Add(encodeTask(&task{obj: Object{Key: "a/b.txt", Size: 3, Headers: Headers{ContentType: "text/plain"}}, check: true}))
	f.Fuzz(func(t *testing.T, s string) {
		got, err := decodeTask(s)
		if err != nil {
			return
		}
		again, err := decodeTask(encodeTask(got))
		if err != nil || *again != *got {
			t.Fatalf("%+v encoded and decoded again: %+v, %v", got, again, err)
		}
	})
}
