package viewer

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBrowserShowsNotificationChannels: a Capability List page shows the
// set's notification channels, each with its kind, its topic (opened in
// the browser) and its hub; a topic shows its newest notification, and an
// empty one says why it is empty.
func TestBrowserShowsNotificationChannels(t *testing.T) {
	bin := chromiumPath(t)
	rsgen := buildRsgen(t)
	dir := t.TempDir()
	config := filepath.Join(dir, "rsgen.toml")
	writeFile(t, config, "base_url = \"http://localhost:8000/\"\n[notification]\nhub = \"https://hub.example.org/\"\nframework = true\n")
	writeFile(t, filepath.Join(dir, "site", "a.txt"), "a\n")
	rsgenBuild(t, rsgen, config, "2026-01-01T10:00:00Z")
	root := serveUnderSub(t, filepath.Join(dir, "public"))
	c := startChrome(t, bin)
	p := c.newTab(t)
	p.viewport(1200, 800, false)
	p.open(root + "resourcesync/")

	p.goTo("#doc=resourcesync/default/capabilitylist.xml")
	var rows []struct{ Kind, Topic, Href, Hub string }
	p.eval(`[...document.querySelectorAll('section.channels tbody tr')].map(tr => ({
		Kind: tr.cells[0].innerText, Topic: tr.cells[1].innerText.replace(/\s+/g, ''),
		Href: tr.cells[1].querySelector('a').getAttribute('href'), Hub: tr.cells[2].innerText}))`, &rows)
	want := []struct{ Kind, Topic, Href, Hub string }{
		{"Change Notification", "resourcesync/default/notification/change.xml", "#doc=resourcesync/default/notification/change.xml", "https://hub.example.org/"},
		{"Framework Notification", "resourcesync/default/notification/framework.xml", "#doc=resourcesync/default/notification/framework.xml", "https://hub.example.org/"},
	}
	if len(rows) != len(want) {
		t.Fatalf("the Capability List shows channels %+v, want %+v", rows, want)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("channel %d shown as %+v, want %+v", i+1, rows[i], want[i])
		}
	}
	v := p.view()
	if !strings.Contains(v.Status, "subscribes to a channel’s topic at its hub") || !v.Captions || !v.Scopes {
		t.Errorf("status %q, captions %v, scopes %v", v.Status, v.Captions, v.Scopes)
	}
	p.checkContrast("capability list with channels")
	p.noProblems("capability list with channels")

	p.act(func() { p.click(`section.channels a[href$="framework.xml"]`) })
	if v := p.view(); v.H1 != "Framework Notification\nset default" && !strings.HasPrefix(v.H1, "Framework Notification") || v.State != "notification" || v.Count == 0 {
		t.Errorf("the framework topic shows %q (%s) with %d entries", v.H1, v.State, v.Count)
	}
	p.noProblems("framework topic")

	p.goTo("#doc=resourcesync/default/notification/change.xml")
	if v := p.view(); !strings.Contains(v.Error, "empty: a notification topic serves nothing until its channel’s first notification") {
		t.Errorf("the empty change topic shows %q, error %q", v.H1, v.Error)
	}
}
