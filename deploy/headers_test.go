package deploy

import (
	"context"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/rsgen/rsgen/hosting"
	"github.com/rsgen/rsgen/layout"
)

// TestOutputPolicy checks rsgen's header policy on a site whose first
// Change List was closed by a later build, and which has a resource (and
// its versions) with no extension.
func TestOutputPolicy(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(dir+"/site", 0o755)
	os.WriteFile(dir+"/site/README", []byte("plain words\n"), 0o644)
	os.WriteFile(dir+"/site/a.json", []byte(`{"a":1}`), 0o644)
	s := newSite(t, dir, "[changelist]\nrotate = \"24h\"\n[dumps]\nresource_dump = true\n[[set]]\nname = \"default\"\nkeep_versions = true\npatches = true\n", "https://data.example.org/")
	s.write(t, "a.json", `{"a":2}`)
	s.write(t, "README", "other words\n")
	s.build(t)
	s.now = s.now.Add(48 * time.Hour) // past rotate: the next build closes the Change List
	s.write(t, "b.txt", "new\n")
	s.build(t)

	root := openRoot(t, s.cfg.Out)
	files := s.outputFiles(t, &DirStore{})
	var rels []string
	for rel := range files {
		rels = append(rels, rel)
	}
	policy, err := OutputPolicy(root, slices.Values(rels), s.types(t), 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	const short = "public, max-age=300"
	var closed, open, memento, patch, pkg int
	for _, rel := range rels {
		h := policy(rel)
		switch {
		case rel == "README":
			if h != (Headers{ContentType: "text/plain"}) {
				t.Errorf("README: %+v; want the type its Resource List gives, no Cache-Control", h)
			}
		case strings.HasPrefix(rel, "resourcesync/mementos/") && strings.HasSuffix(rel, "/README"):
			memento++
			if h != (Headers{"text/plain", hosting.ImmutableCacheControl}) {
				t.Errorf("%s: %+v", rel, h)
			}
		case strings.HasPrefix(rel, "resourcesync/patches/"):
			patch++
			if h != (Headers{layout.TypePatch, hosting.ImmutableCacheControl}) {
				t.Errorf("%s: %+v", rel, h)
			}
		case strings.Contains(rel, "/changelists/"):
			if h.CacheControl == hosting.ImmutableCacheControl {
				closed++
			} else if h.CacheControl == short {
				open++
			}
		case strings.HasSuffix(rel, ".zip"):
			pkg++
			if h != (Headers{layout.TypeZIP, hosting.ImmutableCacheControl}) {
				t.Errorf("%s: %+v", rel, h)
			}
		case rel == layout.SourceDescription || strings.HasSuffix(rel, ".timemap"):
			if h.CacheControl != short || h.ContentType != layout.ContentType(rel) {
				t.Errorf("%s: %+v", rel, h)
			}
		case rel == "a.json":
			if h != (Headers{ContentType: "application/json"}) {
				t.Errorf("%s: %+v", rel, h)
			}
		}
	}
	if closed != 1 || open != 1 || memento != 2 || patch != 1 || pkg == 0 {
		t.Errorf("%d closed and %d open Change Lists, %d README mementos, %d patches, %d packages; want 1, 1, 2, 1, some",
			closed, open, memento, patch, pkg)
	}
}

// TestS3HeaderPolicyChange re-applies changed headers in place: a changed
// short_cache makes copies of the documents onto themselves, and sends no
// object's bytes again.
func TestS3HeaderPolicyChange(t *testing.T) {
	v := startVersity(t)
	p := newProxy(t, v.endpoint)
	s := tinySite(t, v.website, 3)
	store := v.store(t, p.srv.URL, "")
	run(t, s.options(store))
	p.take()

	opts := s.options(store)
	opts.ShortCache = 10 * time.Minute
	sum := run(t, opts)
	uploads, reheaders, _ := sum.Uploads()
	if uploads != 0 || reheaders == 0 {
		t.Errorf("%d uploads, %d headers re-applied; want 0, some", uploads, reheaders)
	}
	for _, r := range p.take() {
		if objectPut(r) {
			t.Errorf("%s was uploaded again for a change of headers", r.key)
		}
	}
	resp, err := http.Head(v.website + layout.SourceDescription)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if cc, ct := resp.Header.Get("Cache-Control"), resp.Header.Get("Content-Type"); cc != "public, max-age=600" || ct != "application/xml" {
		t.Errorf("Source Description served with Cache-Control %q, Content-Type %q", cc, ct)
	}
	// A re-apply sends the whole set: the SHA-256 metadata stays too.
	if sha, want := v.view(t, "")[layout.SourceDescription], s.outputFiles(t, store)[layout.SourceDescription]; sha != hex.EncodeToString(want[:]) {
		t.Errorf("the Source Description's SHA-256 metadata is %q after its headers were re-applied", sha)
	}
	if sum := run(t, opts); sum.Unchanged != sum.Files {
		t.Errorf("the next deploy changed headers again: %+v", sum)
	}
}

// TestPolicyAgreesWithTheHostingFiles: on the example site (every
// capability on), every file deploy publishes gets the Cache-Control and
// Content-Type the _headers file gives hosts for it, so that a site served
// from S3 and one served by Netlify, nginx or Apache cache alike.
func TestPolicyAgreesWithTheHostingFiles(t *testing.T) {
	s := exampleSite(t, "https://data.example.org/")
	rules := readHeadersFile(t, filepath.Join(s.cfg.Out, layout.HeadersFile))
	files := s.outputFiles(t, &DirStore{})
	var rels []string
	for rel := range files {
		rels = append(rels, rel)
	}
	policy, err := OutputPolicy(openRoot(t, s.cfg.Out), slices.Values(rels), s.types(t), s.cfg.Publish.ShortCache.Duration)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, rel := range rels {
		want := policy(rel)
		host := rules.match("/" + string(layout.AppendEscapedPath(nil, rel)))
		if host["Cache-Control"] != want.CacheControl {
			t.Errorf("%s: Cache-Control %q in %s, %q on S3", rel, host["Cache-Control"], layout.HeadersFile, want.CacheControl)
		}
		if ct := host["Content-Type"]; ct != "" && ct != want.ContentType {
			t.Errorf("%s: Content-Type %q in %s, %q on S3", rel, ct, layout.HeadersFile, want.ContentType)
		}
		kinds[layout.PublishStep(rel).String()+" "+want.CacheControl]++
	}
	for _, kind := range []string{"versions " + hosting.ImmutableCacheControl, "immutable " + hosting.ImmutableCacheControl, "timemaps public, max-age=300"} {
		if kinds[kind] == 0 {
			t.Errorf("no file of kind %q in the example site: %v", kind, kinds)
		}
	}
}

// headerRules are the rules of a _headers file: URL path patterns (a
// trailing * matches any rest) and their headers.
type headerRules []struct {
	pattern string
	headers map[string]string
}

func readHeadersFile(t *testing.T, name string) headerRules {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var rules headerRules
	for line := range strings.Lines(string(data)) {
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case !strings.HasPrefix(line, " "):
			rules = append(rules, struct {
				pattern string
				headers map[string]string
			}{line, map[string]string{}})
		default:
			k, v, _ := strings.Cut(strings.TrimSpace(line), ": ")
			rules[len(rules)-1].headers[k] = v
		}
	}
	return rules
}

// match returns the headers of the rules matching the URL path p (rsgen's
// rules never overlap but for Link headers, which are not compared).
func (rules headerRules) match(p string) map[string]string {
	headers := map[string]string{}
	for _, r := range rules {
		prefix, folder := strings.CutSuffix(r.pattern, "*")
		if r.pattern == p || folder && strings.HasPrefix(p, prefix) {
			for k, v := range r.headers {
				headers[k] = v
			}
		}
	}
	return headers
}

// TestS3MementoKeepsItsTypeAfterDelete deletes a resource whose name says
// nothing (README) and that has kept versions: its mementos stay
// published, and the next deploy leaves their headers alone, so S3 keeps
// serving them with the type the build recorded (text/plain), not its
// default binary/octet-stream.
func TestS3MementoKeepsItsTypeAfterDelete(t *testing.T) {
	v := startVersity(t)
	dir := t.TempDir()
	os.MkdirAll(dir+"/site", 0o755)
	os.WriteFile(dir+"/site/README", []byte("plain words\n"), 0o644)
	os.WriteFile(dir+"/site/other.txt", []byte("other\n"), 0o644)
	s := newSite(t, dir, "[[set]]\nname = \"default\"\nkeep_versions = true\n", v.website)
	store := v.store(t, v.endpoint, "")
	run(t, s.options(store))
	s.remove(t, "README")
	s.build(t)
	sum := run(t, s.options(store))
	if _, reheaders, _ := sum.Uploads(); reheaders != 0 {
		t.Errorf("the deploy after the delete re-applied %d objects' headers; want none", reheaders)
	}
	var mementos int
	for _, key := range v.keys(t, "") {
		if !strings.HasPrefix(key, layout.DocumentsDir+"/mementos/") || !strings.HasSuffix(key, "/README") {
			continue
		}
		mementos++
		out, err := v.client.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(websiteBucket), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		if ct, cc := aws.ToString(out.ContentType), aws.ToString(out.CacheControl); ct != "text/plain" || cc != hosting.ImmutableCacheControl {
			t.Errorf("%s is served with Content-Type %q, Cache-Control %q; want text/plain, %q", key, ct, cc, hosting.ImmutableCacheControl)
		}
	}
	if mementos == 0 {
		t.Fatal("no memento of README on the bucket: the test tests nothing")
	}
}
