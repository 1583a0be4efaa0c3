package notify_test

import (
	"strings"
	"testing"

	"github.com/rsgen/rsgen/notify"
)

// Parse refuses what a notification payload may not be, saying why.
func TestParseRefuses(t *testing.T) {
	const open = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">`
	for _, tc := range []struct{ name, doc, want string }{
		{"sitemapindex", `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">` +
			`<rs:md capability="change-notification" from="2026-01-01T00:00:00Z" until="2026-01-02T00:00:00Z"/></sitemapindex>`, "never a <sitemapindex>"},
		{"no until", open + `<rs:md capability="change-notification" from="2026-01-01T00:00:00Z"/></urlset>`, "from and until"},
		{"capability", open + `<rs:md capability="changelist" from="2026-01-01T00:00:00Z" until="2026-01-02T00:00:00Z"/></urlset>`, `capability "changelist"`},
		{"order", open + `<rs:md capability="change-notification" from="2026-01-01T00:00:00Z" until="2026-01-02T00:00:00Z"/>` +
			`<url><loc>http://x/a</loc><rs:md change="created" datetime="2026-01-01T10:00:00Z"/></url>` +
			`<url><loc>http://x/b</loc><rs:md change="created" datetime="2026-01-01T09:00:00Z"/></url></urlset>`, "forward chronological order"},
		{"outside", open + `<rs:md capability="change-notification" from="2026-01-01T00:00:00Z" until="2026-01-02T00:00:00Z"/>` +
			`<url><loc>http://x/a</loc><rs:md change="created" datetime="2026-01-03T10:00:00Z"/></url></urlset>`, "outside"},
		{"no change", open + `<rs:md capability="change-notification" from="2026-01-01T00:00:00Z" until="2026-01-02T00:00:00Z"/>` +
			`<url><loc>http://x/a</loc></url></urlset>`, `change ""`},
	} {
		_, err := notify.Parse(strings.NewReader(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// Datetime is optional in other Sources' payloads.
	ok := open + `<rs:md capability="change-notification" from="2026-01-01T00:00:00Z" until="2026-01-02T00:00:00Z"/>` +
		`<url><loc>http://x/a</loc><rs:md change="deleted"/></url></urlset>`
	if n, err := notify.Parse(strings.NewReader(ok)); err != nil || len(n.Entries) != 1 {
		t.Errorf("a payload without datetimes: %v", err)
	}
}
