package deploy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/rsgen/rsgen/hosting"
	"github.com/rsgen/rsgen/layout"
)

// TestS3RefusesChangedBytes: an upload is signed with the SHA-256 the
// deploy read, so bytes that differ from it are refused by S3.
func TestS3RefusesChangedBytes(t *testing.T) {
	v := startVersity(t)
	store := v.store(t, v.endpoint, "")
	read := []byte("the bytes the deploy read\n")
	obj := &Object{Key: "a.txt", Size: int64(len(read)), SHA256: sha256.Sum256(read), Headers: Headers{ContentType: "text/plain"}}
	now := []byte("the bytes there are now!!\n") // same length
	if err := store.Put(context.Background(), obj, bytes.NewReader(now), false); err == nil {
		t.Fatal("S3 took bytes that differ from the SHA-256 the upload was signed with")
	}
	if _, err := store.Stat(context.Background(), "a.txt"); !errors.Is(err, ErrNotExist) {
		t.Fatalf("after a refused upload: %v", err)
	}
	if err := store.Put(context.Background(), obj, bytes.NewReader(read), false); err != nil {
		t.Fatal(err)
	}
	got, err := store.Stat(context.Background(), "a.txt")
	if err != nil || !got.same(obj) {
		t.Fatalf("stat: %+v, %v; want %+v", got, err, obj)
	}
}

// TestS3ImmutableNeverReplaced: an immutable object is written with
// If-None-Match: *; one already there with the same bytes is fine (an
// interrupted deploy wrote it), one with other bytes fails the deploy.
func TestS3ImmutableNeverReplaced(t *testing.T) {
	v := startVersity(t)
	s := exampleSite(t, v.website)
	store := v.store(t, v.endpoint, "")
	var pkg string
	for rel := range s.outputFiles(t, store) {
		if strings.HasSuffix(rel, ".zip") {
			pkg = rel
			break
		}
	}
	other := []byte("not the package")
	obj := &Object{Key: pkg, Size: int64(len(other)), SHA256: sha256.Sum256(other), Headers: Headers{ContentType: layout.TypeZIP, CacheControl: hosting.ImmutableCacheControl}}
	if err := store.Put(context.Background(), obj, bytes.NewReader(other), true); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(context.Background(), obj, bytes.NewReader(other), true); !errors.Is(err, ErrExists) {
		t.Fatalf("If-None-Match: * over an object: %v; want ErrExists", err)
	}
	_, err := Run(context.Background(), s.options(store))
	if err == nil || !strings.Contains(err.Error(), pkg) || !strings.Contains(err.Error(), "never replaces") {
		t.Fatalf("deploy over an immutable object with other bytes: %v", err)
	}
	got, _ := store.Stat(context.Background(), pkg)
	if got.SHA256 != obj.SHA256 {
		t.Error("the immutable object was replaced")
	}
}

// TestS3Multipart uploads an object above the multipart threshold in
// parts, with its headers and SHA-256, and If-None-Match: * on completion.
func TestS3Multipart(t *testing.T) {
	v := startVersity(t)
	store, err := OpenS3(context.Background(), S3Options{Bucket: websiteBucket, Endpoint: v.endpoint, MultipartAbove: 6 << 20, PartSize: 5 << 20})
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), (12<<20)/16+1)
	obj := &Object{Key: "big/video.mp4", Size: int64(len(data)), SHA256: sha256.Sum256(data), Headers: Headers{ContentType: "video/mp4", CacheControl: hosting.ImmutableCacheControl}}
	if err := store.Put(context.Background(), obj, bytes.NewReader(data), true); err != nil {
		t.Fatal(err)
	}
	if got := store.Requests(); got.Put != 3 || got.Other != 2 {
		t.Errorf("requests %+v; want 3 part PUTs, a start and a completion", got)
	}
	got, err := store.Stat(context.Background(), obj.Key)
	if err != nil || !got.same(obj) {
		t.Fatalf("stat: %+v, %v", got, err)
	}
	resp, err := http.Get(v.website + obj.Key)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(body, data) || resp.Header.Get("Content-Type") != "video/mp4" {
		t.Errorf("served %d bytes as %q", len(body), resp.Header.Get("Content-Type"))
	}
	if err := store.Put(context.Background(), obj, bytes.NewReader(data), true); !errors.Is(err, ErrExists) {
		t.Errorf("multipart If-None-Match: * over an object: %v; want ErrExists", err)
	}
}

// TestS3PrefixAndReheader deploys below a prefix, with keys that need
// escaping (spaces, non-ASCII), then changes the Content-Type of every
// resource through a policy of its own: the headers are re-applied in
// place, and the Source checks.
func TestS3PrefixAndReheader(t *testing.T) {
	v := startVersity(t)
	p := newProxy(t, v.endpoint)
	s := exampleSite(t, v.website+"sub/site/")
	store := v.store(t, p.srv.URL, "sub/site")
	run(t, s.options(store))
	final := s.outputFiles(t, store)
	view := replay(t, p.take(), final, bucketView{}, s.cfg.BaseURL, "sub/site/")
	checkView(t, view, final, s.cfg.Out, s.cfg.BaseURL)
	checkDestination(t, s.cfg.BaseURL+layout.SourceDescription)

	opts := s.options(store)
	base, err := OutputPolicy(openRoot(t, s.cfg.Out), slices.Values(keysOf(final)), s.types(t), opts.ShortCache)
	if err != nil {
		t.Fatal(err)
	}
	opts.Policy = func(rel string) Headers {
		h := base(rel)
		if strings.HasSuffix(rel, ".png") && !strings.HasPrefix(rel, layout.DocumentsDir+"/") {
			h.CacheControl = "public, max-age=60"
		}
		return h
	}
	sum := run(t, opts)
	if _, reheaders, _ := sum.Uploads(); reheaders != 3 {
		t.Errorf("%d headers re-applied; want the 3 PNG resources", reheaders)
	}
	resp, err := http.Head(s.cfg.BaseURL + string(layout.AppendEscapedPath(nil, "collection/maps/carte-île-de-ré.png")))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=60" || resp.Header.Get("Content-Type") != "image/png" {
		t.Errorf("re-headed resource: %d, Cache-Control %q, Content-Type %q", resp.StatusCode, cc, resp.Header.Get("Content-Type"))
	}
	checkDestination(t, s.cfg.BaseURL+layout.SourceDescription)
}

// TestS3StatOddDigest: an object whose rsgen-sha256 metadata another tool
// set to something else than a SHA-256 (too long, too short, not hex) is
// one of unknown digest, not a crash or a digest made of its first bytes.
func TestS3StatOddDigest(t *testing.T) {
	v := startVersity(t)
	store := v.store(t, v.endpoint, "")
	for i, odd := range []string{strings.Repeat("ab", 33), "abcd", strings.Repeat("zz", 32)} {
		key := fmt.Sprintf("odd-%d.txt", i)
		_, err := v.client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(websiteBucket), Key: &key,
			Body: strings.NewReader("x"), Metadata: map[string]string{shaMetadata: odd}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := store.Stat(context.Background(), key)
		if err != nil || got.SHA256 != ([32]byte{}) {
			t.Errorf("metadata %q: %+v, %v; want the digest unknown", odd, got, err)
		}
	}
}

// TestS3RefusesKeysItCannotHold: an output file S3 cannot hold, a name
// that is not UTF-8 (versitygw, over a folder, would take it; S3 does
// not) or a key past 1,024 bytes, fails the deploy before it writes
// anything, naming the file.
func TestS3RefusesKeysItCannotHold(t *testing.T) {
	v := startVersity(t)
	s := tinySite(t, v.website, 2)
	s.write(t, "docs/caf\xe9.txt", "latin-1 name")
	s.build(t)
	_, err := Run(context.Background(), s.options(v.store(t, v.endpoint, "")))
	if err == nil || !strings.Contains(err.Error(), `"docs/caf\xe9.txt" cannot be an S3 key: its name is not UTF-8`) {
		t.Fatalf("deploy of a name that is not UTF-8: %v", err)
	}
	if keys := v.keys(t, ""); len(keys) != 0 {
		t.Errorf("the failed deploy wrote %v", keys)
	}

	long := &S3Store{prefix: "site/"}
	if ok, err := long.Publishes(strings.Repeat("a", 1019)); !ok || err != nil {
		t.Errorf("a key of 1,024 bytes with the prefix: %v, %v", ok, err)
	}
	if _, err := long.Publishes(strings.Repeat("a", 1020)); err == nil || !strings.Contains(err.Error(), "longer than 1024 bytes") {
		t.Errorf("a key of 1,025 bytes with the prefix: %v", err)
	}
}
