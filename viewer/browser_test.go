package viewer

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rsgen/rsgen/internal/sitemaptest"
)

// The browser tests open a built site in headless Chromium with XSLT
// disabled, served by a plain static server under a sub-path (/sub/) on an
// address other than the site's base_url (http://localhost:8000/), and
// check what a person sees against what the documents say.

// view is what a person sees of a document view.
type view struct {
	H1       string
	Status   string
	State    string
	Count    int
	Rows     int
	Rels     []string
	Attrs    []string // the document's own attributes (dt) and the entry columns (md:NAME)
	Text     string
	Captions bool // every table has a caption
	Scopes   bool // every th has a scope
	Error    string
}

const readView = `(() => {
	const main = document.getElementById('app');
	const table = main.querySelector('table.entries');
	const status = main.querySelector('.status');
	return {
		H1: main.querySelector('h1').innerText,
		Status: status ? status.innerText : '',
		State: status ? status.dataset.state : '',
		Count: table ? Number(table.dataset.count) : 0,
		Rows: table ? table.tBodies[0].rows.length : 0,
		Rels: [...new Set([...main.querySelectorAll('[data-rel]')].map(e => e.dataset.rel))],
		Attrs: [...main.querySelectorAll('dl.attrs dt')].map(e => e.innerText)
			.concat([...main.querySelectorAll('button.sort')].map(b => b.dataset.sort)),
		Text: main.innerText,
		Captions: [...main.querySelectorAll('table')].every(t => t.caption && t.caption.textContent.trim() !== ''),
		Scopes: [...main.querySelectorAll('th')].every(th => th.scope === 'col' || th.scope === 'row'),
		Error: status && status.dataset.state === 'error' ? status.innerText : '',
	};
})()`

func (p *tab) view() view {
	p.t.Helper()
	var v view
	p.eval(readView, &v)
	return v
}

// screenshots keeps the screenshots in RSGEN_VIEWER_SCREENSHOTS when set
// (go test ./viewer -run Browser with RSGEN_VIEWER_SCREENSHOTS=testdata/screenshots
// refreshes the committed ones), else in a temporary folder.
type screenshots struct {
	t    *testing.T
	dir  string
	kept bool // in RSGEN_VIEWER_SCREENSHOTS, to be committed
}

func newScreenshots(t *testing.T) *screenshots {
	dir := os.Getenv("RSGEN_VIEWER_SCREENSHOTS")
	if dir == "" {
		return &screenshots{t: t, dir: t.TempDir()}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &screenshots{t: t, dir: dir, kept: true}
}

// save writes a screenshot; one that is kept with its colours reduced to
// a palette, a quarter of Chromium's bytes, so that screenshots can be
// committed (most of the test's own CPU time, so only then).
func (s *screenshots) save(name string, shot []byte) {
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		s.t.Fatalf("screenshot %s: %v", name, err)
	}
	if s.kept {
		var buf bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, toPalette(img)); err != nil {
			s.t.Fatal(err)
		}
		shot = buf.Bytes()
	}
	p := filepath.Join(s.dir, name+".png")
	if err := os.WriteFile(p, shot, 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.t.Logf("screenshot %s (%d KB)", p, len(shot)/1024)
}

// toPalette maps an image to its 256 most frequent colours, each pixel to
// the nearest: a page's few colours stay exact, only the edges of
// antialiased text shift slightly.
func toPalette(img image.Image) *image.Paletted {
	b := img.Bounds()
	counts := map[color.RGBA]int{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			counts[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	colors := make([]color.RGBA, 0, len(counts))
	for c := range counts {
		colors = append(colors, c)
	}
	packed := func(c color.RGBA) uint32 { return uint32(c.R)<<24 | uint32(c.G)<<16 | uint32(c.B)<<8 | uint32(c.A) }
	sort.Slice(colors, func(i, j int) bool {
		if counts[colors[i]] != counts[colors[j]] {
			return counts[colors[i]] > counts[colors[j]]
		}
		return packed(colors[i]) < packed(colors[j])
	})
	pal := make(color.Palette, 0, 256)
	for _, c := range colors[:min(256, len(colors))] {
		pal = append(pal, c)
	}
	out := image.NewPaletted(b, pal)
	index := map[color.RGBA]uint8{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			i, ok := index[c]
			if !ok {
				i = uint8(pal.Index(c))
				index[c] = i
			}
			out.SetColorIndex(x, y, i)
		}
	}
	return out
}

// rsgenServe serves out with rsgen serve on a free port and returns its
// URL, read from the line it prints once listening.
func rsgenServe(t *testing.T, out string) string {
	t.Helper()
	cmd := exec.Command(buildRsgen(t), "serve", "--out", out, "--base-url", "http://localhost:8000/", "--addr", "127.0.0.1:0")
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		w.Close()
	})
	lines := bufio.NewScanner(r)
	for lines.Scan() {
		if _, after, ok := strings.Cut(lines.Text(), " at "); ok && strings.Contains(lines.Text(), "serving") {
			url, _, _ := strings.Cut(after, " ")
			go io.Copy(io.Discard, r) // keep the server's output flowing
			return url
		}
	}
	t.Fatalf("rsgen serve printed no address: %v", lines.Err())
	return ""
}

// serveUnderSub serves a folder at /sub/ of a new local server.
func serveUnderSub(t *testing.T, out string) string {
	srv := httptest.NewServer(http.StripPrefix("/sub", http.FileServer(http.Dir(out))))
	t.Cleanup(srv.Close)
	return srv.URL + "/sub/"
}

// TestBrowserShowsTheExampleSite opens the example site, built over four
// days of edits, in Chromium and follows it as a person would. By default
// "every document" opens one document of each kind and link (docsToVisit);
// with RSGEN_STRESS=1, every document.
func TestBrowserShowsTheExampleSite(t *testing.T) {
	bin := chromiumPath(t)
	out := buildExample(t)
	docs := readDocuments(t, out)
	root := serveUnderSub(t, out)
	shots := newScreenshots(t)
	c := startChrome(t, bin)
	p := c.newTab(t)
	p.viewport(1200, 800, false)
	p.open(root + "resourcesync/")

	t.Run("without XSLT", func(t *testing.T) {
		var xslt string
		p.in(t).eval(`typeof XSLTProcessor`, &xslt)
		if xslt != "undefined" {
			t.Fatalf("XSLTProcessor is %s: the browser runs with XSLT, so the test proves nothing about a browser without it", xslt)
		}
	})

	t.Run("source description", func(t *testing.T) {
		p := p.in(t)
		v := p.view()
		sd := docs[".well-known/resourcesync"]
		if v.H1 != "Source Description" || v.Count != len(sd.URLs) || v.Rows != len(sd.URLs) {
			t.Errorf("the page shows %q with %d of %d entries; the Source Description has %d Capability Lists", v.H1, v.Rows, v.Count, len(sd.URLs))
		}
		for _, set := range []string{"collection", "catalogue", "survey-maps"} {
			if !strings.Contains(v.Text, "resourcesync/"+set+"/capabilitylist.xml") {
				t.Errorf("set %s is not shown:\n%s", set, v.Text)
			}
		}
		p.checkContrast("source description")
		p.noProblems("source description")
		shots.save("source-description", p.screenshot(""))
	})

	t.Run("every document", func(t *testing.T) {
		p := p.in(t)
		paths := docsToVisit(docs)
		t.Logf("opening %d of the %d documents", len(paths), len(docs))
		shown := map[string]bool{}
		for _, path := range paths {
			d := docs[path]
			p.goTo("#doc=" + path)
			v := p.view()
			checkDocumentView(t, path, d, v)
			for _, r := range v.Rels {
				shown[r] = true
			}
			if len(d.Entries()) > 0 {
				p.goTo("#doc=" + path + "&entry=1")
				checkEntryView(t, path, d.Entries()[0], p.view())
			}
			p.noProblems(path)
		}
		var all []string
		for _, d := range docs {
			all = append(all, rels(d)...)
		}
		for _, want := range []string{"up", "describedby", "archives", "index", "contents", "duplicate", "alternate",
			"describes", "profile", "collection", "memento", "timemap", "via", sitemaptest.RSNS + "patch"} {
			if !slices.Contains(all, want) {
				t.Errorf("the example site has no %s link: the test's history no longer exercises it", want)
			}
			if !shown[want] {
				t.Errorf("no view shows the %s links of the example site", want)
			}
		}
	})

	t.Run("from the Source Description down to a resource and back", func(t *testing.T) {
		p := p.in(t)
		p.goTo("#doc=.well-known/resourcesync")
		p.act(func() { p.click(`table.entries tbody a[href*="collection/capabilitylist.xml"]`) })
		p.charts()
		if v := p.view(); !strings.HasPrefix(v.H1, "Capability List") || !strings.Contains(v.H1, "set collection") {
			t.Fatalf("after clicking the collection set: %q", v.H1)
		}
		p.act(func() { p.click(`table.entries tbody th a[href$="collection/resourcelist.xml"]`) })
		if v := p.view(); !strings.HasPrefix(v.H1, "Resource List") {
			t.Fatalf("after clicking the Resource List: %q", v.H1)
		}
		shots.save("resource-list", p.screenshot(""))
		row := `table.entries tbody tr:has(> th a[href$="collection/manuscripts/ms-001.json"])`
		p.act(func() { p.click(row + ` td.col-n a`) })
		v := p.view()
		if !strings.HasPrefix(v.H1, "Resource ms-001.json") {
			t.Fatalf("after clicking the entry of ms-001.json: %q", v.H1)
		}
		for _, rel := range []string{"alternate", "duplicate", "collection", "memento", "timemap"} {
			if !slices.Contains(v.Rels, rel) {
				t.Errorf("the resource's view lacks its %s link: %v", rel, v.Rels)
			}
		}
		shots.save("resource", p.screenshot(""))
		var status int
		p.eval(`fetch(document.querySelector('dl.attrs dd a.uri').href).then(r => r.status)`, &status)
		if status != http.StatusOK {
			t.Errorf("the resource's link, rewritten from base_url to where the site is served, answers %d", status)
		}
		p.act(func() { p.eval(`history.back()`, nil) })
		if v := p.view(); !strings.HasPrefix(v.H1, "Resource List") {
			t.Errorf("Back from the resource shows %q, not the Resource List", v.H1)
		}
		p.act(func() { p.eval(`history.back()`, nil) })
		if v := p.view(); !strings.HasPrefix(v.H1, "Capability List") {
			t.Errorf("Back again shows %q, not the Capability List", v.H1)
		}
		p.act(func() { p.click(`#crumbs a`) })
		if v := p.view(); v.H1 != "Source Description" {
			t.Errorf("the breadcrumb Source leads to %q", v.H1)
		}
		p.noProblems("navigation")
	})

	t.Run("keyboard", func(t *testing.T) {
		p := p.in(t)
		p.open(root + "resourcesync/")
		target := `table.entries tbody a[href*="catalogue/capabilitylist.xml"]`
		reached := false
		for i := 0; i < 40 && !reached; i++ {
			p.key("Tab")
			p.eval(`document.activeElement === document.querySelector(`+js(target)+`)`, &reached)
		}
		if !reached {
			t.Fatal("Tab never reaches the link to the catalogue set")
		}
		p.act(func() { p.key("Enter") })
		var focus string
		p.eval(`document.activeElement.tagName + ' ' + document.activeElement.innerText`, &focus)
		if !strings.HasPrefix(focus, "H1 Capability List") {
			t.Errorf("after Enter on the link, focus is on %q, not the new page's heading", focus)
		}
		p.noProblems("keyboard")
	})

	t.Run("filter and sort", func(t *testing.T) {
		p := p.in(t)
		list := docs["resourcesync/collection/resourcelist.xml"]
		p.goTo("#doc=resourcesync/collection/resourcelist.xml")
		p.click("#filter-q")
		p.typeText("MS-00")
		want := 0
		for _, e := range list.URLs {
			if strings.Contains(e.Loc, "ms-00") {
				want++
			}
		}
		var rows int
		p.eval(`document.querySelector('table.entries').tBodies[0].rows.length`, &rows)
		if rows != want || want == 0 {
			t.Errorf("filter “MS-00” shows %d rows; %d locs contain it", rows, want)
		}
		var query string
		p.eval(`location.hash`, &query)
		if !strings.Contains(query, "q=MS-00") {
			t.Errorf("the filter is not kept in the address: %s", query)
		}
		p.eval(`(() => { const s = document.getElementById('filter-q'); s.value = ''; s.dispatchEvent(new Event('input')); })()`, nil)
		p.eval(`(() => { const s = document.getElementById('filter-type'); s.value = 'image/png'; s.dispatchEvent(new Event('change')); })()`, nil)
		p.eval(`document.querySelector('table.entries').tBodies[0].rows.length`, &rows)
		if pngs := typeCounts(list)["image/png"]; rows != pngs {
			t.Errorf("type filter image/png shows %d rows; the list has %d", rows, pngs)
		}
		p.eval(`(() => { const s = document.getElementById('filter-type'); s.value = ''; s.dispatchEvent(new Event('change')); })()`, nil)
		p.click(`button.sort[data-sort="md:length"]`)
		p.click(`button.sort[data-sort="md:length"]`)
		var sorted struct {
			Lengths []string
			Aria    string
		}
		p.eval(`({Lengths: [...document.querySelectorAll('table.entries tbody td.col-number')].map(td => td.innerText.replace(/,/g, '')),
			Aria: document.querySelector('button.sort[data-sort="md:length"]').parentElement.getAttribute('aria-sort')})`, &sorted)
		if sorted.Aria != "descending" || !sort.SliceIsSorted(sorted.Lengths, func(i, j int) bool { return atoi(sorted.Lengths[i]) > atoi(sorted.Lengths[j]) }) || len(sorted.Lengths) != len(list.URLs) {
			t.Errorf("sorting by length twice gives %v, aria-sort %q; want all %d lengths descending", sorted.Lengths, sorted.Aria, len(list.URLs))
		}
		// On a list whose entries lack a type (a Change List's deletions),
		// the unfiltered view says "any", and "(none)" filters those.
		deletions := firstWith(docs, "resourcesync/collection/changelists/")
		p.goTo("#doc=" + deletions)
		var selected struct{ Text, Value string }
		p.eval(`(() => { const o = document.getElementById('filter-type').selectedOptions[0]; return {Text: o.textContent, Value: o.value}; })()`, &selected)
		if selected.Text != "any" || selected.Value != "" {
			t.Errorf("%s unfiltered: the media type filter shows %q (value %q) as selected, want any", deletions, selected.Text, selected.Value)
		}
		p.eval(`(() => { const s = document.getElementById('filter-type'); s.value = '(none)'; s.dispatchEvent(new Event('change')); })()`, nil)
		p.eval(`document.querySelector('table.entries').tBodies[0].rows.length`, &rows)
		if untyped := typeCounts(docs[deletions])[""]; rows != untyped || untyped == 0 {
			t.Errorf("%s: the (none) filter shows %d rows; %d entries have no type", deletions, rows, untyped)
		}
		var hash string
		p.eval(`location.hash`, &hash)
		if !strings.Contains(hash, "type=(none)") {
			t.Errorf("the (none) filter is not kept in the address: %s", hash)
		}
		p.noProblems("filter and sort")
	})

	t.Run("pictures", func(t *testing.T) {
		p := p.in(t)
		wantChanges := changeCounts(docs, "resourcesync/collection/changelists/")
		wantTypes := typeCounts(docs["resourcesync/collection/resourcelist.xml"])
		for _, path := range []string{"resourcesync/collection/capabilitylist.xml", "resourcesync/collection/changelist.xml"} {
			p.goTo("#doc=" + path)
			if state := p.charts(); state != "ready" {
				t.Fatalf("%s: pictures %s", path, state)
			}
			var bars []struct{ Key, Created, Updated, Deleted string }
			p.eval(`[...document.querySelectorAll('#fig-changes g.day')].map(g => ({Key: g.dataset.key, Created: g.dataset.created, Updated: g.dataset.updated, Deleted: g.dataset.deleted}))`, &bars)
			got := map[string]int{}
			for _, b := range bars {
				for change, n := range map[string]string{"created": b.Created, "updated": b.Updated, "deleted": b.Deleted} {
					if atoi(n) > 0 {
						got[b.Key+" "+change] = atoi(n)
					}
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(wantChanges) || len(got) == 0 {
				t.Errorf("%s: the change chart's bars say %v; the Change Lists say %v", path, got, wantChanges)
			}
			if path == "resourcesync/collection/capabilitylist.xml" {
				var rows []struct{ Type, Value string }
				p.eval(`[...document.querySelectorAll('#fig-count g.type-row')].map(g => ({Type: g.dataset.type, Value: g.dataset.value}))`, &rows)
				gotTypes := map[string]int{}
				for _, r := range rows {
					gotTypes[r.Type] = atoi(r.Value)
				}
				if fmt.Sprint(gotTypes) != fmt.Sprint(wantTypes) {
					t.Errorf("the media type chart says %v; the Resource List says %v", gotTypes, wantTypes)
				}
				shots.save("capability-list", p.screenshot(""))
				shots.save("charts", p.screenshot("section.pictures"))
			} else {
				shots.save("change-list-index", p.screenshot(""))
			}
			p.checkContrast(path)
			p.noProblems(path)
		}
	})

	t.Run("page kinds", func(t *testing.T) {
		p := p.in(t)
		for name, path := range map[string]string{
			"change-list":     firstPath(docs, "resourcesync/collection/changelists/"),
			"resource-dump":   "resourcesync/collection/resourcedump.xml",
			"dump-manifest":   firstPath(docs, "resourcesync/collection/changedump/"),
			"archive":         "resourcesync/collection/changelist-archive.xml",
			"resource-list-2": "resourcesync/survey-maps/resourcelist.xml",
		} {
			p.goTo("#doc=" + path)
			p.charts()
			p.checkContrast(path)
			p.noProblems(path)
			if name != "resource-list-2" {
				shots.save(name, p.screenshot(""))
			}
		}
	})

	t.Run("dark scheme", func(t *testing.T) {
		p := p.in(t)
		p.call("Emulation.setEmulatedMedia", map[string]any{"features": []map[string]string{{"name": "prefers-color-scheme", "value": "dark"}}}, nil)
		defer p.call("Emulation.setEmulatedMedia", map[string]any{"features": []map[string]string{}}, nil)
		for _, path := range []string{"resourcesync/collection/capabilitylist.xml", firstPath(docs, "resourcesync/collection/changelists/")} {
			p.goTo("#doc=" + path)
			p.charts()
			p.checkContrast("dark: " + path)
			p.noProblems("dark: " + path)
		}
		shots.save("dark", p.screenshot(""))
	})

	t.Run("phone", func(t *testing.T) {
		p := p.in(t)
		p.viewport(390, 844, true)
		defer p.viewport(1200, 800, false)
		for _, path := range []string{"resourcesync/collection/resourcelist.xml", "resourcesync/collection/capabilitylist.xml", firstPath(docs, "resourcesync/collection/changelists/")} {
			p.goTo("#doc=" + path)
			p.charts()
			var widths struct{ Page, Window int }
			// clientWidth is the layout viewport: innerWidth grows with a
			// page too wide for a phone, as the phone zooms out.
			p.eval(`({Page: document.documentElement.scrollWidth, Window: document.documentElement.clientWidth})`, &widths)
			if widths.Page > widths.Window {
				t.Errorf("%s: on a phone the page is %d px wide in a %d px window: it scrolls sideways", path, widths.Page, widths.Window)
			}
			var cut []string
			p.eval(phoneCells, &cut)
			for _, c := range cut {
				t.Errorf("%s: on a phone, %s", path, c)
			}
			p.tableRoles(path)
			p.checkContrast("phone: " + path)
			p.noProblems("phone: " + path)
		}
		deletions := firstWith(docs, "resourcesync/collection/changelists/")
		p.goTo("#doc=" + deletions)
		var overlaps []string
		p.eval(phoneLabels, &overlaps)
		for _, o := range overlaps {
			t.Errorf("%s: on a phone, %s", deletions, o)
		}
		shots.save("phone-deleted", p.screenshotAt(`table.entries tbody tr:has(.change-deleted)`))
		p.goTo("#doc=resourcesync/collection/resourcelist.xml")
		shots.save("phone", p.screenshot(""))
		shots.save("phone-table", p.screenshotAt("section.entries-section"))
	})

	t.Run("a document elsewhere is not read", func(t *testing.T) {
		p := p.in(t)
		description, err := os.ReadFile(filepath.Join(out, ".well-known", "resourcesync"))
		if err != nil {
			t.Fatal(err)
		}
		var elsewhere int64
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			atomic.AddInt64(&elsewhere, 1)
			w.Header().Set("Access-Control-Allow-Origin", "*") // a host that would let the page read it
			w.Header().Set("Content-Type", "application/xml")
			w.Write(description)
		}))
		defer other.Close()
		p.goTo("#doc=" + other.URL + "/resourcesync.xml")
		v := p.view()
		if !strings.Contains(v.Error, "reads only the documents of its own Source") || !strings.Contains(v.Error, other.URL+"/resourcesync.xml is elsewhere") {
			t.Errorf("for a document on another host the page says %q, not why it does not read it", v.Error)
		}
		if n := atomic.LoadInt64(&elsewhere); n != 0 {
			t.Errorf("the page sent %d requests to another host named in its fragment", n)
		}
		p.noProblems("a document elsewhere")
	})

	t.Run("what changes and what does not", func(t *testing.T) {
		p := p.in(t)
		for path, want := range map[string]string{
			"resourcesync/collection/resourcelist.xml":                "rewrites it whenever the set changes; earlier snapshots go to its archive",
			firstPath(docs, "resourcesync/collection/resourcelists/"): "This archived copy is never rewritten",
		} {
			p.goTo("#doc=" + path)
			if v := p.view(); !strings.Contains(v.Status, want) {
				t.Errorf("%s: the status says %q, want %q", path, v.Status, want)
			}
		}
		p.noProblems("what changes")
	})

	t.Run("a missing document", func(t *testing.T) {
		p := p.in(t)
		p.goTo("#doc=resourcesync/collection/nothing-here.xml")
		v := p.view()
		if !strings.Contains(v.Error, "404") || !strings.Contains(v.Error, "/sub/resourcesync/collection/nothing-here.xml") {
			t.Errorf("for a missing document the page says %q, not the address and the server's 404", v.Error)
		}
		for _, pr := range p.takeProblems() {
			if !strings.Contains(pr, "404") {
				t.Errorf("missing document: %s", pr) // the browser's own note of the 404 is expected
			}
		}
	})

	t.Run("served by rsgen serve at the root", func(t *testing.T) {
		p := p.in(t)
		url := rsgenServe(t, out)
		p.open(url + "resourcesync/")
		if v := p.view(); v.H1 != "Source Description" || v.Count != len(docs[".well-known/resourcesync"].URLs) {
			t.Errorf("rsgen serve: the page shows %q with %d entries %s", v.H1, v.Count, v.Error)
		}
		p.goTo("#doc=resourcesync/catalogue/resourcelist.xml&entry=1")
		var status int
		p.eval(`fetch(document.querySelector('dl.attrs dd a.uri').href).then(r => r.status)`, &status)
		if status != http.StatusOK {
			t.Errorf("rsgen serve: the first resource's link answers %d", status)
		}
		p.noProblems("rsgen serve")
	})

	t.Run("from a file", func(t *testing.T) {
		p := p.in(t)
		p.open("file://" + filepath.ToSlash(out) + "/resourcesync/index.html")
		v := p.view()
		if !strings.Contains(v.Error, "opened from a file (file://)") || !strings.Contains(v.Error, "rsgen serve") {
			t.Errorf("opened from a file, the page says %q", v.Error)
		}
		for _, pr := range p.takeProblems() {
			if strings.HasPrefix(pr, "exception") {
				t.Errorf("file://: %s", pr) // the browser's own refusal is expected, a script error is not
			}
		}
		// A browser that lets a file read its neighbours shows the Source.
		lenient := startChrome(t, bin, "--allow-file-access-from-files").newTab(t)
		lenient.open("file://" + filepath.ToSlash(out) + "/resourcesync/index.html")
		if v := lenient.view(); v.H1 != "Source Description" || v.Count != len(docs[".well-known/resourcesync"].URLs) {
			t.Errorf("from a file, where the browser allows it: %q with %d entries %s", v.H1, v.Count, v.Error)
		}
		lenient.noProblems("file:// with file access")
	})
}

// phoneCells lists the cells of the first rows of the entries table that
// a person on a phone does not see whole without scrolling sideways: a
// cell beyond the layout viewport's edges (clientWidth, which a page too
// wide does not grow), a cell whose content is wider than the cell, a
// table that scrolls sideways in its frame, or a cell whose column's name
// is not shown with it (neither a header cell of its own width above it, as
// in a table, nor a label of its own).
const phoneCells = `(() => {
	const width = document.documentElement.clientWidth;
	const table = document.querySelector('table.entries');
	const frame = table.closest('.scroll');
	const heads = [...table.tHead.rows[0].cells];
	const out = [];
	if (frame.scrollWidth > frame.clientWidth) out.push('the table is ' + frame.scrollWidth + ' px wide in a ' + frame.clientWidth + ' px frame: it scrolls sideways');
	const rows = [...table.tBodies[0].rows].slice(0, 5);
	if (rows.length === 0) out.push('the table has no rows');
	for (const tr of rows) {
		for (const cell of tr.cells) {
			const r = cell.getBoundingClientRect();
			if (r.width === 0 && r.height === 0) continue;
			const name = heads[cell.cellIndex].querySelector('button').dataset.sort;
			const what = 'row ' + tr.dataset.n + ' column ' + name;
			if (r.left < 0 || r.right > width + 0.5) out.push(what + ' spans ' + Math.round(r.left) + '–' + Math.round(r.right) + ' px of a ' + width + ' px viewport');
			if (cell.scrollWidth > cell.clientWidth + 1) out.push(what + ' holds ' + cell.scrollWidth + ' px of content in ' + cell.clientWidth + ' px');
			const h = heads[cell.cellIndex].getBoundingClientRect();
			const label = getComputedStyle(cell, '::before').content;
			const headAbove = h.width > 0 && Math.abs(h.left - r.left) < 1 && Math.abs(h.right - r.right) < 1;
			if (!headAbove && !label.includes(heads[cell.cellIndex].querySelector('button').firstChild.textContent)) out.push(what + ' does not show its column name');
		}
	}
	return out;
})()`

// phoneLabels lists, for the first rows of deleted entries (whose cells
// of length, type and hash are empty), every cell on a phone that is
// shorter than its column's label, or that starts above the end of the
// cell before it: either draws labels over each other.
const phoneLabels = `(() => {
	const out = [];
	const rows = [...document.querySelectorAll('table.entries tbody tr')].filter((tr) => tr.querySelector('.change-deleted'));
	if (rows.length === 0) out.push('no deleted entry is shown');
	for (const tr of rows.slice(0, 5)) {
		let end = -Infinity;
		for (const cell of tr.cells) {
			const r = cell.getBoundingClientRect();
			const label = parseFloat(getComputedStyle(cell, '::before').height);
			const what = 'row ' + tr.dataset.n + ' ' + cell.dataset.label;
			if (r.height + 0.5 < label) out.push(what + ': a cell ' + r.height.toFixed(1) + ' px tall under a label ' + label.toFixed(1) + ' px tall');
			if (r.top + 0.5 < end) out.push(what + ': starts ' + (end - r.top).toFixed(1) + ' px above the end of the cell before it');
			end = r.bottom;
		}
	}
	return out;
})()`

// firstWith returns the first document under prefix with a deletion and
// an entry with a media type.
func firstWith(docs map[string]*xmlDoc, prefix string) string {
	for _, p := range sortedDocs(docs) {
		if counts := typeCounts(docs[p]); strings.HasPrefix(p, prefix) && counts[""] > 0 && len(counts) > 1 &&
			slices.ContainsFunc(docs[p].Entries(), func(e sitemaptest.Entry) bool { return e.MD().Change == "deleted" }) {
			return p
		}
	}
	return ""
}

// tableRoles fails the test unless the accessibility tree still has the
// entries table as a table of rows, with column headers, row headers (the
// locs) and cells, however its rows are laid out, and unless every part of
// it laid out other than as a table says its role itself: browsers other
// than Chromium drop a table's semantics with its display.
func (p *tab) tableRoles(where string) {
	p.t.Helper()
	var bare []string
	p.eval(`[...document.querySelectorAll('table.entries, table.entries :is(thead, tbody, tr, th, td)')]
		.filter(el => !getComputedStyle(el).display.startsWith('table') && !el.getAttribute('role'))
		.map(el => '<' + el.tagName.toLowerCase() + ' class="' + (el.getAttribute('class') || '') + '">')`, &bare)
	for _, b := range bare {
		p.t.Errorf("%s: %s is not laid out as a table and has no role", where, b)
	}
	var tree struct {
		Nodes []struct {
			Ignored bool
			Role    struct{ Value string }
		}
	}
	p.call("Accessibility.getFullAXTree", nil, &tree)
	roles := map[string]int{}
	for _, n := range tree.Nodes {
		if !n.Ignored {
			roles[n.Role.Value]++
		}
	}
	var want struct{ Rows, Cols int }
	p.eval(`(() => { const t = document.querySelector('table.entries'); return {Rows: t.tBodies[0].rows.length, Cols: t.tHead.rows[0].cells.length}; })()`, &want)
	if roles["table"] < 1 || roles["row"] < want.Rows+1 || roles["columnheader"] < want.Cols || roles["rowheader"] < want.Rows || roles["cell"] < want.Rows {
		p.t.Errorf("%s: the accessibility tree lost the table's semantics: %d tables, %d rows, %d column headers, %d row headers, %d cells for %d rows of %d columns",
			where, roles["table"], roles["row"], roles["columnheader"], roles["rowheader"], roles["cell"], want.Rows, want.Cols)
	}
}

// checkDocumentView compares the view of a document with the document.
func checkDocumentView(t *testing.T, path string, d *xmlDoc, v view) {
	t.Helper()
	n := len(d.Entries())
	if v.Error != "" {
		t.Errorf("%s: %s", path, v.Error)
		return
	}
	if v.Count != n || v.Rows != min(n, 100) {
		t.Errorf("%s: the table shows %d rows of %d entries; the document has %d", path, v.Rows, v.Count, n)
	}
	if n == 0 && !strings.Contains(v.Text, "has no entries yet") {
		t.Errorf("%s: an empty document does not say so", path)
	}
	for _, rel := range rels(d) {
		if !slices.Contains(v.Rels, rel) {
			t.Errorf("%s: its %s links are not shown (shown: %v)", path, rel, v.Rels)
		}
	}
	for _, a := range d.MD().Attrs() {
		if !slices.Contains(v.Attrs, a.Name.Local) || !strings.Contains(v.Text, a.Value) {
			t.Errorf("%s: its attribute %s=%q is not shown", path, a.Name.Local, a.Value)
		}
	}
	for _, name := range entryAttributes(d) {
		if !slices.Contains(v.Attrs, "md:"+name) {
			t.Errorf("%s: its entries' attribute %s has no column", path, name)
		}
	}
	if !v.Captions || !v.Scopes {
		t.Errorf("%s: a table lacks a caption (%v) or a th its scope (%v)", path, v.Captions, v.Scopes)
	}
	if v.Status == "" {
		t.Errorf("%s: no status line", path)
	}
	if cap := d.MD().Capability; (cap == "changelist" || cap == "changedump") && d.XMLName.Local == "urlset" {
		want := "open"
		if d.MD().Until != "" {
			want = "closed"
		}
		if v.State != want || !strings.HasPrefix(v.Status, strings.ToUpper(want[:1])+want[1:]) {
			t.Errorf("%s: status %q (%s), want %s", path, v.Status, v.State, want)
		}
	}
}

// checkEntryView checks that an entry's view shows every value in full.
func checkEntryView(t *testing.T, path string, e sitemaptest.Entry, v view) {
	t.Helper()
	text := strings.Join(strings.Fields(v.Text), " ")
	for _, a := range e.MD().Attrs() {
		for _, token := range strings.Fields(a.Value) {
			if !strings.Contains(text, token) {
				t.Errorf("%s entry 1: %s %q is not shown in full", path, a.Name.Local, token)
			}
		}
	}
	for _, l := range e.Links {
		if !slices.Contains(v.Rels, l.Rel) {
			t.Errorf("%s entry 1: its %s link is not shown", path, l.Rel)
		}
		for _, a := range l.Attrs() {
			if a.Name.Local == "rel" || a.Name.Local == "href" {
				continue
			}
			for _, token := range strings.Fields(a.Value) {
				if !strings.Contains(text, token) {
					t.Errorf("%s entry 1: %s link's %s %q is not shown", path, l.Rel, a.Name.Local, token)
				}
			}
		}
	}
	if e.Lastmod != "" && !strings.Contains(text, e.Lastmod) {
		t.Errorf("%s entry 1: lastmod %s is not shown", path, e.Lastmod)
	}
}

func sortedDocs(docs map[string]*xmlDoc) []string {
	var paths []string
	for p := range docs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
}

// docsToVisit returns the documents the "every document" test opens: all
// of them with RSGEN_STRESS=1; by default the first of each kind (root
// element, capability, with or without entries) and the first with each
// relation no earlier one has, which the kinds and links of every
// document still cover, at a fraction of the page loads.
func docsToVisit(docs map[string]*xmlDoc) []string {
	paths := sortedDocs(docs)
	if os.Getenv("RSGEN_STRESS") == "1" {
		return paths
	}
	seen := map[string]bool{}
	var visit []string
	for _, path := range paths {
		d := docs[path]
		keys := append(rels(d), fmt.Sprintf("kind %s %s %t", d.XMLName.Local, d.MD().Capability, len(d.Entries()) > 0))
		if slices.ContainsFunc(keys, func(k string) bool { return !seen[k] }) {
			visit = append(visit, path)
			for _, k := range keys {
				seen[k] = true
			}
		}
	}
	return visit
}

func firstPath(docs map[string]*xmlDoc, prefix string) string {
	for _, p := range sortedDocs(docs) {
		if strings.HasPrefix(p, prefix) {
			return p
		}
	}
	return ""
}

func atoi(s string) int {
	n := 0
	fmt.Sscan(s, &n)
	return n
}
