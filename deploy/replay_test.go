package deploy

import (
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rsgen/rsgen/internal/sitemaptest"
	"github.com/rsgen/rsgen/layout"
)

// The replay check: given the requests of deploys as a proxy recorded
// them, it replays what a Destination polling the bucket could have seen
// at every moment, and fails the test if any document it could have read
// links to an object of the build being deployed that was not there yet,
// or not yet with the build's bytes. A document counts as readable from
// the moment its upload starts; an object as there only once its upload
// has been answered. It reads the documents with encoding/xml and a
// regular expression, independently of the deploy's own reader.

// bucketView is what the bucket holds, by key: the hex SHA-256 of each
// object's bytes.
type bucketView map[string]string

// replay checks log (one deploy, or several in order) against final, the
// output being deployed (key -> SHA-256), for a bucket that held view
// before, and returns the view after. An upload that was not answered 2xx
// counts as not there: it is when a deploy was cancelled or killed in
// the middle of it, which versity.view tells.
func replay(t *testing.T, log []*request, final map[string][32]byte, view bucketView, base, prefix string) bucketView {
	t.Helper()
	type event struct {
		at    int
		start bool
		r     *request
	}
	var events []event
	for _, r := range log {
		events = append(events, event{r.seq, true, r})
		if r.done > 0 {
			events = append(events, event{r.done, false, r})
		}
	}
	slices.SortFunc(events, func(a, b event) int { return a.at - b.at })
	next := bucketView{}
	for k, v := range view {
		next[k] = v
	}
	for _, ev := range events {
		r := ev.r
		key, ok := strings.CutPrefix(r.key, prefix)
		if !ok || strings.HasPrefix(key, MetaDir+"/") {
			continue
		}
		switch {
		case ev.start && r.method == http.MethodPut && !r.copy && isDoc(key):
			for _, ref := range docRefs(t, key, r.body) {
				if rel, ok := layout.PathFromURL(base, ref); ok && rel != key {
					if want, published := final[rel]; published && next[rel] != hex.EncodeToString(want[:]) {
						t.Errorf("request %d: %s becomes readable while %s, which it links to, is not there yet", r.seq, key, rel)
					}
				}
			}
		case !ev.start && r.status/100 == 2 && r.method == http.MethodPut && !r.copy:
			next[key] = r.sha
		case !ev.start && r.status/100 == 2 && r.method == http.MethodPost:
			for _, k := range r.deleted {
				delete(next, strings.TrimPrefix(k, prefix))
			}
		}
	}
	return next
}

// checkView checks that every document the bucket holds with the bytes of
// the output in dir links only to objects there with their bytes.
func checkView(t *testing.T, view bucketView, final map[string][32]byte, dir, base string) {
	t.Helper()
	for key, sum := range view {
		want, ok := final[key]
		if !ok || !isDoc(key) || sum != hex.EncodeToString(want[:]) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(key)))
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range docRefs(t, key, data) {
			if rel, ok := layout.PathFromURL(base, ref); ok && rel != key {
				if w, published := final[rel]; published && view[rel] != hex.EncodeToString(w[:]) {
					t.Errorf("%s links to %s, which the bucket does not hold with the build's bytes", key, rel)
				}
			}
		}
	}
}

func isDoc(key string) bool {
	return key == layout.SourceDescription || strings.HasSuffix(key, ".xml") || strings.HasSuffix(key, ".timemap")
}

var timemapLink = regexp.MustCompile(`<([^>]+)>`)

// docRefs returns the URIs a document links to downward: entries (but
// deletions, whose resources are gone by design) and links (but up and
// index, which point back at a parent), or, in a TimeMap, every URI.
func docRefs(t *testing.T, key string, body []byte) []string {
	var refs []string
	if strings.HasSuffix(key, ".timemap") {
		for _, m := range timemapLink.FindAllSubmatch(body, -1) {
			refs = append(refs, string(m[1]))
		}
		return refs
	}
	doc, err := sitemaptest.Parse(body)
	if errors.Is(err, sitemaptest.ErrNotSitemap) {
		return nil // a resource, not a document
	}
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	links := func(lns []sitemaptest.Link) {
		for _, ln := range lns {
			if ln.Rel != "up" && ln.Rel != "index" {
				refs = append(refs, ln.Href)
			}
		}
	}
	links(doc.Links)
	for _, e := range doc.Entries() {
		if e.MD().Change == "deleted" {
			continue
		}
		refs = append(refs, e.Loc)
		links(e.Links)
	}
	return refs
}
