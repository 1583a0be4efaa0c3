package viewer

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// largeSetSize is the entries of one Resource List at most: the list the
// browser must show fast.
const largeSetSize = 50000

// buildLargeSet builds a set of largeSetSize tiny files of four media
// types, then a second build a day later that updates, deletes and
// creates some, and returns the output folder.
func buildLargeSet(t *testing.T) string {
	t.Helper()
	bin := buildRsgen(t)
	dir := t.TempDir()
	site := filepath.Join(dir, "site")
	exts := []string{"txt", "json", "html", "csv"}
	name := func(i int) string {
		return filepath.Join(site, fmt.Sprintf("d%03d", i%100), fmt.Sprintf("f%05d.%s", i, exts[i%len(exts)]))
	}
	for i := 0; i < largeSetSize; i++ {
		writeFile(t, name(i), fmt.Sprintf("file %d\n", i))
	}
	config := filepath.Join(dir, "rsgen.toml")
	writeFile(t, config, "source = \"site\"\nout = \"public\"\nstate = \".rsgen\"\nbase_url = \"http://localhost:8000/\"\n")
	start := time.Now()
	rsgenBuild(t, bin, config, "2026-01-01T00:00:00Z")
	t.Logf("first build of %d files: %v", largeSetSize, time.Since(start).Round(time.Millisecond))
	for i := 0; i < 5000; i++ {
		writeFile(t, name(i), fmt.Sprintf("file %d, edited\n", i))
	}
	for i := 5000; i < 5500; i++ {
		if err := os.Remove(name(i)); err != nil {
			t.Fatal(err)
		}
		writeFile(t, name(i+largeSetSize), "new\n")
	}
	rsgenBuild(t, bin, config, "2026-01-02T00:00:00Z")
	return filepath.Join(dir, "public")
}

// TestBrowserLargeList opens a Resource List of 50,000 entries and a
// Change List of 6,000 events, and reports how long the browser takes to
// read and show them, to filter, sort and page, and to draw the pictures.
// It asserts what is shown, never a time. Heavy: only with RSGEN_STRESS=1.
func TestBrowserLargeList(t *testing.T) {
	if os.Getenv("RSGEN_STRESS") != "1" {
		t.Skip("a 50,000-file set: set RSGEN_STRESS=1 to run it")
	}
	bin := chromiumPath(t)
	out := buildLargeSet(t)
	root := serveUnderSub(t, out)
	list := filepath.Join(out, "resourcesync", "default", "resourcelist.xml")
	info, err := os.Stat(list)
	if err != nil {
		t.Fatal(err)
	}
	p := startChrome(t, bin).newTab(t)
	p.viewport(1200, 800, false)

	start := time.Now()
	p.open(root + "resourcesync/#doc=resourcesync/default/resourcelist.xml")
	wall := time.Since(start)
	var shown struct {
		Count, Rows int
		Timings     string
	}
	p.eval(`({Count: Number(document.querySelector('table.entries').dataset.count),
		Rows: document.querySelector('table.entries').tBodies[0].rows.length,
		Timings: document.getElementById('app').dataset.timings})`, &shown)
	if shown.Count != largeSetSize || shown.Rows != 100 {
		t.Errorf("the list shows %d rows of %d entries, want 100 of %d", shown.Rows, shown.Count, largeSetSize)
	}
	t.Logf("Resource List of %d entries (%.1f MB): page opened and list shown in %v; the page's own timings (ms): %s",
		shown.Count, float64(info.Size())/1e6, wall.Round(time.Millisecond), shown.Timings)

	var ms map[string]float64
	p.eval(`(() => {
		const time = (f) => { const t = performance.now(); f(); return performance.now() - t; };
		const input = document.getElementById('filter-q');
		const rows = () => document.querySelector('table.entries').dataset.shown;
		const out = {};
		out.filter = time(() => { input.value = 'd042/'; input.dispatchEvent(new Event('input')); });
		out.filtered = Number(rows());
		out.unfilter = time(() => { input.value = ''; input.dispatchEvent(new Event('input')); });
		out.sortLength = time(() => document.querySelector('button.sort[data-sort="md:length"]').click());
		out.sortLoc = time(() => document.querySelector('button.sort[data-sort="loc"]').click());
		out.nextPage = time(() => [...document.querySelectorAll('.pager button')].find(b => b.textContent.startsWith('Next')).click());
		out.typeFilter = time(() => { const s = document.getElementById('filter-type'); s.value = 'application/json'; s.dispatchEvent(new Event('change')); });
		out.typed = Number(rows());
		return out;
	})()`, &ms)
	if ms["filtered"] != largeSetSize/100 || ms["typed"] != largeSetSize/4 {
		t.Errorf("filter d042/ shows %v entries (want %d), type application/json %v (want %d)", ms["filtered"], largeSetSize/100, ms["typed"], largeSetSize/4)
	}
	t.Logf("on %d entries (ms): filter %.0f, clear filter %.0f, sort by length %.0f, sort by loc %.0f, next page %.0f, type filter %.0f",
		largeSetSize, ms["filter"], ms["unfilter"], ms["sortLength"], ms["sortLoc"], ms["nextPage"], ms["typeFilter"])

	start = time.Now()
	p.goTo("#doc=resourcesync/default/capabilitylist.xml")
	if state := p.charts(); state != "ready" {
		t.Fatalf("pictures: %s", state)
	}
	var bars struct{ Types, Days int }
	p.eval(`({Types: document.querySelectorAll('#fig-count g.type-row').length, Days: document.querySelectorAll('#fig-changes g.day').length})`, &bars)
	if bars.Types != 4 || bars.Days != 1 {
		t.Errorf("the pictures show %d media types and %d days, want 4 and 1", bars.Types, bars.Days)
	}
	t.Logf("Capability List with both pictures (reading the 50,000-entry Resource List and the Change Lists): %v", time.Since(start).Round(time.Millisecond))

	start = time.Now()
	p.open(root + "resourcesync/?fresh#doc=resourcesync/default/capabilitylist.xml") // a new document: nothing read yet
	p.charts()
	t.Logf("the same in a new page, reading every list afresh: %v", time.Since(start).Round(time.Millisecond))

	start = time.Now()
	p.goTo("#doc=resourcesync/default/changelist.xml")
	p.charts()
	t.Logf("Change List Index with its picture: %v", time.Since(start).Round(time.Millisecond))
	p.noProblems("large set")
}
