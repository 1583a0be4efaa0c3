package viewer

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// syncBox is what the "Sync this Source" box shows: its commands, its
// notes, and whether its text holds markup a document smuggled in.
type syncBox struct {
	State    string
	Commands []string
	Notes    []string
	Elements []string // the tag names inside the box
}

// readSyncBox waits until the box has read what it needs and returns it.
const readSyncBox = `new Promise((resolve, reject) => {
	const started = Date.now();
	const look = () => {
		const box = document.querySelector('section.sync');
		if (!box) return reject(new Error('no Sync this Source box'));
		if (box.dataset.state !== 'ready') return Date.now() - started > 20000 ? reject(new Error('the box is still ' + box.dataset.state)) : setTimeout(look, 20);
		resolve({
			State: box.dataset.state,
			Commands: [...box.querySelectorAll('pre.command')].map(p => p.textContent),
			Notes: [...box.querySelectorAll('.note')].map(p => p.textContent),
			Elements: [...new Set([...box.querySelectorAll('*')].map(e => e.localName))].sort(),
		});
	};
	look();
})`

// TestBrowserShowsSyncCommands: the Source Description and a Capability
// List of an rsgen-built site show the commands that mirror it, with
// rsgen sync and with resync (its incremental command naming the open
// Change List of the index); a hostile Capability List URI is shown as
// text, quoted for the shell, and runs nothing.
func TestBrowserShowsSyncCommands(t *testing.T) {
	bin := chromiumPath(t)
	rsgen := buildRsgen(t)
	dir := t.TempDir()
	config := filepath.Join(dir, "rsgen.toml")
	writeFile(t, config, "base_url = \"http://localhost:8000/\"\n")
	writeFile(t, filepath.Join(dir, "site", "a.txt"), "a\n")
	rsgenBuild(t, rsgen, config, "2026-01-01T10:00:00Z")
	writeFile(t, filepath.Join(dir, "site", "b.txt"), "b\n")
	rsgenBuild(t, rsgen, config, "2026-01-02T10:00:00Z")
	out := filepath.Join(dir, "public")
	root := serveUnderSub(t, out)
	c := startChrome(t, bin)
	p := c.newTab(t)
	p.viewport(1200, 800, false)
	p.open(root + "resourcesync/")

	const capList = "http://localhost:8000/resourcesync/default/capabilitylist.xml"
	const baseline = "resync-sync --baseline --delete --hash sha-256 --capabilitylist "
	var box syncBox
	p.eval(readSyncBox, &box)
	want := []string{"rsgen sync http://localhost:8000/ mirror/", baseline + capList + " http://localhost:8000/ mirror/"}
	if !slices.Equal(box.Commands, want) {
		t.Errorf("the Source Description's box shows %q, want %q", box.Commands, want)
	}
	p.checkContrast("sync box")
	p.noProblems("source description")

	p.goTo("#doc=resourcesync/default/capabilitylist.xml")
	p.eval(readSyncBox, &box)
	want = []string{"rsgen sync " + capList + " mirror/", baseline + capList + " http://localhost:8000/ mirror/",
		"resync-sync --incremental --delete --hash sha-256 --changelist-uri http://localhost:8000/resourcesync/default/changelists/changelist-20260101T100000Z.xml http://localhost:8000/ mirror/"}
	if !slices.Equal(box.Commands, want) || len(box.Notes) != 1 || !strings.Contains(box.Notes[0], "resync cannot read a Change List Index") {
		t.Errorf("the Capability List's box shows %q and notes %q, want %q and why resync needs the open Change List", box.Commands, box.Notes, want)
	}
	p.checkContrast("sync box with notes")
	p.noProblems("capability list")
	newScreenshots(t).save("sync", p.screenshot("section.sync"))

	// A second Capability List whose URI carries markup and quotes.
	sd := filepath.Join(out, ".well-known", "resourcesync")
	data, err := os.ReadFile(sd)
	if err != nil {
		t.Fatal(err)
	}
	hostile := `http://localhost:8000/resourcesync/&lt;img src=x onerror="window.pwned=1"&gt;'/capabilitylist.xml`
	entry := "<url><loc>" + hostile + "</loc><rs:md capability=\"capabilitylist\"/></url>\n</urlset>"
	writeFile(t, sd, strings.Replace(string(data), "</urlset>", entry, 1))
	// The test runs within a second of the build, and HTTP dates have
	// whole seconds: the page's revalidation of the Source Description
	// would get a 304 for the file it read before. An edit made by hand
	// comes later; date this one as such.
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(sd, later, later); err != nil {
		t.Fatal(err)
	}
	p.open(root + "resourcesync/")
	p.eval(readSyncBox, &box)
	want = []string{"rsgen sync http://localhost:8000/ mirror/default/ --set default",
		`rsgen sync http://localhost:8000/ mirror/set-2/ --set '<img src=x onerror="window.pwned=1">'\'''`}
	if len(box.Commands) != 4 || !slices.Equal(box.Commands[:2], want) {
		t.Errorf("with a hostile set the box shows %q, want %q first", box.Commands, want)
	}
	var pwned bool
	p.eval(`window.pwned === 1 || document.querySelectorAll('main img').length > 0`, &pwned)
	if pwned || slices.Contains(box.Elements, "img") {
		t.Errorf("a Capability List URI injected markup into the page (elements of the box: %q)", box.Elements)
	}
}
