package generator_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
)

// TestDestination serves the output over HTTP and plays a ResourceSync
// Destination against it: a baseline synchronisation from the Resource
// List, then incremental ones from the Change Lists after further builds,
// each ending with a local copy identical to the source tree.
func TestDestination(t *testing.T) {
	t.Run("linked", func(t *testing.T) { testDestination(t, "") })
	t.Run("copied", func(t *testing.T) {
		other := otherDeviceDir(t)
		if other == "" {
			t.Skip("no second file system for the source (set RSGEN_OTHER_FS)")
		}
		testDestination(t, other)
	})
}

// testDestination plays the Destination against a site whose source is in
// srcRoot when not "".
func testDestination(t *testing.T, srcRoot string) {
	var s *site
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.FileServer(http.Dir(s.Out)).ServeHTTP(w, r)
	}))
	defer srv.Close()
	s = newSite(t, srv.URL+"/", func(c *config.Config) {
		c.ChangeList.Rotate = config.Duration{Duration: time.Hour}
		if srcRoot != "" {
			c.Source = filepath.Join(srcRoot, "src")
		}
	})
	dest := &destination{t: t, client: srv.Client(), base: srv.URL + "/", dir: t.TempDir()}

	// Names that need escaping in URIs, XML or both.
	s.write("home.html", "<!doctype html><title>home</title>\n")
	s.write("docs/a b.txt", "a file with a space\n")
	s.write("docs/hash#tag.txt", "hash\n")
	s.write("per%cent.txt", "percent\n")
	s.write("%41.txt", "not an A\n")
	s.write("amp&ersand.txt", "ampersand\n")
	s.write("ünïcödé/日本語.txt", "non-ASCII\n")
	s.write("q?mark.txt", "question\n")
	s.write("plus+and=equals.txt", "plus\n")
	s.write("semi;colon,comma.txt", "semicolon\n")
	s.write("quote'paren(1).txt", "quote\n")
	s.write("empty.txt", "")
	s.write("img/pixel.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	s.write("big.bin", randomBytes(300_000))
	s.write("tab\there.txt", "a tab in the name\n")
	s.build(t0)

	s.write("data/x.json", `{"x": [1, 2, 3]}`+"\n")
	s.write("docs/less<than>greater.txt", "angle brackets\n")
	s.write("home.html", "<!doctype html><title>home, edited</title>\n")
	s.build(t0.Add(30 * time.Minute))

	dest.baseline()
	dest.compare(s.Source, "baseline")

	s.write("new file #1.txt", "new\n")
	s.write("docs/a b.txt", "a file with a space, now longer\n")
	s.remove("per%cent.txt")
	s.write("deep/ü/ñ/x&y=z.txt", "deep\n")
	s.build(t0.Add(3 * time.Hour)) // closes the open list
	dest.sync()
	dest.compare(s.Source, "after create, update, delete")

	s.replace("ünïcödé/日本語.txt", "non-ASCII, replaced\n")
	s.remove("amp&ersand.txt")
	s.write("per%cent.txt", "percent, back with other bytes\n")
	s.rename("q?mark.txt", "q?mark 2.txt")
	s.write("temp.txt", "short-lived\n")
	s.build(t0.Add(3*time.Hour + 10*time.Minute))
	s.remove("temp.txt") // created and deleted between two synchronisations
	s.write("new file #1.txt", "new, updated\n")
	s.write("50%+off.txt", "sale\n")
	s.write("big.bin", randomBytes(300_001))
	s.build(t0.Add(3*time.Hour + 20*time.Minute))
	dest.sync()
	dest.compare(s.Source, "after two builds")

	s.build(t0.Add(6 * time.Hour)) // closes a list without events
	s.remove("docs/hash#tag.txt")
	s.remove("%41.txt")
	s.write("empty.txt", "no longer empty\n")
	s.write("img/pixel.png", "")
	s.build(t0.Add(8 * time.Hour))
	dest.sync()
	dest.compare(s.Source, "after rotations")

	s.build(t0.Add(8*time.Hour + 5*time.Minute))
	if n := dest.sync(); n != 0 {
		t.Errorf("sync after a build without changes applied %d changes", n)
	}
	dest.compare(s.Source, "after a build without changes")
	validateTree(t, s.Out)
}

// randomBytes returns n reproducible pseudo-random bytes.
func randomBytes(n int) string {
	r := rand.New(rand.NewPCG(uint64(n), 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return string(b)
}

// destination is a ResourceSync Destination that knows nothing of the
// generator: it discovers the documents from /.well-known/resourcesync and
// keeps a local copy of the resources in dir.
type destination struct {
	t      *testing.T
	client *http.Client
	base   string // the Source's base URL
	dir    string // the local copy
	set    string // the set to synchronise; "" when the Source has one
	last   time.Time
}

// get fetches a URI and returns its body, failing on any status but 200.
func (d *destination) get(uri string) ([]byte, *http.Response) {
	d.t.Helper()
	resp, err := d.client.Get(uri)
	if err != nil {
		d.t.Fatalf("GET %s: %v", uri, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		d.t.Fatalf("GET %s: %v", uri, err)
	}
	if resp.StatusCode != http.StatusOK {
		d.t.Fatalf("GET %s: %s", uri, resp.Status)
	}
	return body, resp
}

func (d *destination) doc(uri, capability string) *doc {
	d.t.Helper()
	body, _ := d.get(uri)
	doc := parseDoc(d.t, uri, body)
	if doc.MD.Capability != capability {
		d.t.Fatalf("%s: capability %q, want %q", uri, doc.MD.Capability, capability)
	}
	return doc
}

// discover follows the Source Description to the Capability List (the one
// there is, or the set's) and
// returns the URIs of its Resource List and Change List (Index).
func (d *destination) discover() (resourceList, changeList string) {
	d.t.Helper()
	sdURL := d.base + ".well-known/resourcesync"
	sd := d.doc(sdURL, "description")
	var capURL string
	for _, e := range sd.Entries {
		if d.set == "" && len(sd.Entries) == 1 || d.set != "" && strings.HasSuffix(e.Loc, "/resourcesync/"+d.set+"/capabilitylist.xml") {
			capURL = e.Loc
		}
	}
	if capURL == "" {
		d.t.Fatalf("Source Description: no Capability List of set %q in %+v", d.set, sd.Entries)
	}
	capList := d.doc(capURL, "capabilitylist")
	if up := capList.link("up"); up != sdURL {
		d.t.Errorf("Capability List: up %q, want %q", up, sdURL)
	}
	for _, e := range capList.Entries {
		switch e.MD().Capability {
		case "resourcelist":
			resourceList = e.Loc
		case "changelist":
			changeList = e.Loc
		}
	}
	if resourceList == "" || changeList == "" {
		d.t.Fatalf("Capability List %s lacks a resourcelist or changelist", capURL)
	}
	return resourceList, changeList
}

// baseline downloads every resource of the Resource List, following its
// index when it has one, and remembers its "at" as the time the copy is
// current from.
func (d *destination) baseline() {
	d.t.Helper()
	rlURL, _ := d.discover()
	rl := d.doc(rlURL, "resourcelist")
	at := parseTime(d.t, rl.MD.At)
	if at.IsZero() {
		d.t.Fatalf("Resource List %s has no at", rlURL)
	}
	lists := []*doc{rl}
	if rl.Root == "sitemapindex" {
		lists = nil
		for _, e := range rl.Entries {
			part := d.doc(e.Loc, "resourcelist")
			if part.Root != "urlset" || part.link("index") != rlURL {
				d.t.Errorf("%s: root %s, index %q, want a urlset linking to %s", e.Loc, part.Root, part.link("index"), rlURL)
			}
			lists = append(lists, part)
		}
	}
	seen := map[string]bool{}
	for _, l := range lists {
		for _, e := range l.Entries {
			if seen[e.Loc] {
				d.t.Errorf("Resource List lists %s twice", e.Loc)
			}
			seen[e.Loc] = true
			d.download(e.Loc, e.MD())
		}
	}
	d.last = at
}

// sync applies the changes published since the last one processed, in
// order, and returns how many resources it touched. Events are read from
// every Change List of the index that may hold them; of several events of
// one resource, the last decides.
func (d *destination) sync() int {
	d.t.Helper()
	_, clURL := d.discover()
	idx := d.doc(clURL, "changelist")
	if idx.Root != "sitemapindex" {
		d.t.Fatalf("%s: Change List Index expected, got %s", clURL, idx.Root)
	}
	type change struct {
		kind string
		md   md
	}
	latest := map[string]change{}
	var order []string
	last := d.last
	var prevFrom, prevDatetime time.Time
	for _, e := range idx.Entries {
		from, until := parseTime(d.t, e.MD().From), parseTime(d.t, e.MD().Until)
		if from.Before(prevFrom) {
			d.t.Errorf("Change List Index not in forward chronological order at %s", e.Loc)
		}
		prevFrom = from
		if !until.IsZero() && !until.After(d.last) {
			continue // closed before the last change processed
		}
		cl := d.doc(e.Loc, "changelist")
		if cl.link("index") != clURL {
			d.t.Errorf("%s: index link %q, want %q", e.Loc, cl.link("index"), clURL)
		}
		for _, ue := range cl.Entries {
			m := ue.MD()
			dt := parseTime(d.t, m.Datetime)
			if dt.Before(prevDatetime) {
				d.t.Errorf("%s: %s %s at %s comes after an event at %s", e.Loc, m.Change, ue.Loc, m.Datetime, prevDatetime.Format(time.RFC3339))
			}
			prevDatetime = dt
			if dt.Before(from) || (!until.IsZero() && dt.After(until)) {
				d.t.Errorf("%s: %s %s at %s outside the list's [%s, %s]", e.Loc, m.Change, ue.Loc, m.Datetime, e.MD().From, e.MD().Until)
			}
			if !dt.After(d.last) {
				continue
			}
			switch m.Change {
			case "created", "updated", "deleted":
			default:
				d.t.Fatalf("%s: %s: change %q", e.Loc, ue.Loc, m.Change)
			}
			if _, ok := latest[ue.Loc]; !ok {
				order = append(order, ue.Loc)
			}
			latest[ue.Loc] = change{m.Change, m}
			if dt.After(last) {
				last = dt
			}
		}
	}
	// Deletions first, with the folders they leave empty: a path that
	// changed between file and folder is deleted under its old type and
	// created under its new one by the same build, and a copy on disk
	// cannot hold both.
	for _, loc := range order {
		if latest[loc].kind == "deleted" {
			d.remove(loc)
		}
	}
	for _, loc := range order {
		if c := latest[loc]; c.kind != "deleted" {
			d.download(loc, c.md)
		}
	}
	d.last = last
	return len(order)
}

// remove deletes the copy of a resource, and the folders it leaves empty.
func (d *destination) remove(loc string) {
	d.t.Helper()
	p := d.local(loc)
	err := os.Remove(p)
	switch {
	case errors.Is(err, syscall.ENOTDIR):
		return // a file where a folder of it was: nothing of it is left
	case err != nil && !errors.Is(err, os.ErrNotExist):
		d.t.Fatal(err)
	}
	for dir := filepath.Dir(p); dir != d.dir && syscall.Rmdir(dir) == nil; dir = filepath.Dir(dir) {
	}
}

// local returns the file of the local copy for a resource URI.
func (d *destination) local(loc string) string {
	d.t.Helper()
	rel := locPath(d.t, d.base, loc)
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		d.t.Fatalf("%s: path %q escapes the copy", loc, rel)
	}
	return filepath.Join(d.dir, filepath.FromSlash(rel))
}

// download fetches one resource, checks it against its metadata and stores
// it in the copy.
func (d *destination) download(loc string, m md) {
	d.t.Helper()
	body, resp := d.get(loc)
	wantSHA, wantLen := sha256Of(m), lengthOf(m)
	if wantSHA == "" || wantLen < 0 {
		d.t.Errorf("%s: no sha-256 hash or length in %+v", loc, m)
	}
	sum := sha256.Sum256(body)
	if got := hex.EncodeToString(sum[:]); got != wantSHA {
		d.t.Errorf("%s: sha-256 %s, list says %s", loc, got, wantSHA)
	}
	if int64(len(body)) != wantLen || resp.ContentLength != wantLen {
		d.t.Errorf("%s: %d bytes (Content-Length %d), list says %d", loc, len(body), resp.ContentLength, wantLen)
	}
	if strings.Contains(m.Type, ";") {
		d.t.Errorf("%s: type %q has parameters", loc, m.Type)
	}
	p := d.local(loc)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		d.t.Fatal(err)
	}
	if err := os.WriteFile(p, body, 0o644); err != nil {
		d.t.Fatal(err)
	}
}

// compare checks that the copy holds exactly the source's files and bytes.
func (d *destination) compare(source, when string) {
	d.t.Helper()
	if diff := diffBytes(readTree(d.t, source), readTree(d.t, d.dir)); len(diff) > 0 {
		d.t.Fatalf("%s: the Destination's copy differs from the source:\n%v", when, diff)
	}
}
