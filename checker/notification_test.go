package checker

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/notify"
	"github.com/rsgen/rsgen/rs"
)

const (
	testTopic = "http://example.org/notification/change.xml"
	testHub   = "http://hub.example.net/"
)

// channelEntry is the Capability List entry of the valid site's change
// channel, at testTopic with testHub.
const channelEntry = `  <url>
    <loc>http://example.org/notification/change.xml</loc>
    <rs:md capability="change-notification"/>
    <rs:ln rel="hub" href="http://hub.example.net/"/>
  </url>
</urlset>`

// payload is a Change Notification of the valid site's changes.
const payload = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="http://example.org/capabilitylist.xml"/>
  <rs:md capability="change-notification" from="2025-12-01T00:00:00Z" until="2025-12-02T00:00:00Z"/>
  <url>
    <loc>http://example.org/res/a.txt</loc>
    <rs:md change="created" datetime="2025-12-01T10:00:00Z" hash="md5:9f9f90dbe3e5ee1218c86b8839db1995" length="6" type="text/plain"/>
  </url>
</urlset>
`

// withChannel adds the change channel to the valid site, its topic
// serving topic (a payload, or "" before the first), and then edits.
func withChannel(topic string, edits ...edit) []edit {
	channel := []edit{{"capabilitylist.xml", "</urlset>", channelEntry}, {"notification/change.xml", "", "\x00"}, {"notification/change.xml", "\x00", topic}}
	return append(channel, edits...)
}

// TestChannelRules: a channel entry with its hub, whose topic serves a
// notification or nothing yet, is valid; a channel without a hub, and a
// topic serving a notification without until or with up elsewhere, are
// not.
func TestChannelRules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edits []edit
		want  []string
	}{
		{"valid", withChannel(payload), nil},
		{"no notification yet", withChannel(""), nil},
		{"no hub", withChannel(payload, edit{"capabilitylist.xml", `    <rs:ln rel="hub" href="http://hub.example.net/"/>` + "\n", ""}), []string{"channel-hub"}},
		{"no until", withChannel(payload, edit{"notification/change.xml", ` until="2025-12-02T00:00:00Z"`, ""}), []string{"notification-interval"}},
		{"up elsewhere", withChannel(payload, edit{"notification/change.xml", `href="http://example.org/capabilitylist.xml"`, `href="http://example.org/other.xml"`}), []string{"up-mismatch"}},
		{"not a notification", withChannel(strings.Replace(payload, "change-notification", "changelist", 1)), []string{"capability-mismatch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := buildSite(t, editSite(t, tc.edits))
			rep, err := CheckDir(t.Context(), dir, Options{BaseURL: "http://example.org/"})
			if err != nil {
				t.Fatal(err)
			}
			if got := ruleSet(rep.Findings); strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("got rules %v, want %v:\n%s", got, tc.want, findingLines(rep.Findings))
			}
		})
	}
}

// TestTopicHeadersOverHTTP: a topic served with application/xml and the
// Link headers self (the topic) and hub (the advertised hub) passes; one
// served without them, as S3 serves it, or naming another hub, is
// warned about, and so is one served with another type.
func TestTopicHeadersOverHTTP(t *testing.T) {
	for _, tc := range []struct {
		name        string
		contentType string
		links       []string
		want        []string
	}{
		{"served right", "application/xml", []string{notify.LinkHeader(testTopic, testHub)}, nil},
		{"two headers", "application/xml", []string{`<http://hub.example.net/>; rel="hub"`, `<http://example.org/notification/change.xml>; rel="self"`}, nil},
		{"no Link", "application/xml", nil, []string{"topic-link: served without Link: <http://example.org/notification/change.xml>; rel=\"self\"",
			"topic-link: served without Link: <http://hub.example.net/>; rel=\"hub\""}},
		{"another hub", "application/xml", []string{notify.LinkHeader(testTopic, "http://other.example.net/")}, []string{"topic-link: served without Link: <http://hub.example.net/>"}},
		{"not XML", "text/plain", []string{notify.LinkHeader(testTopic, testHub)}, []string{"http-content-type:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, topic := range []string{payload, ""} {
				var topicURL, hubURL string
				srv := serveSite(t, withChannel(topic), onPath("/notification/change.xml", func(w http.ResponseWriter, r *http.Request) {
					for _, l := range tc.links {
						w.Header().Add("Link", strings.NewReplacer(testTopic, topicURL, testHub, hubURL).Replace(l))
					}
					w.Header().Set("Content-Type", tc.contentType)
					w.Write([]byte(strings.ReplaceAll(topic, "http://example.org", strings.TrimSuffix(topicURL, "/notification/change.xml"))))
				}))
				topicURL, hubURL = srv.URL+"/notification/change.xml", testHub
				rep := checkURL(t, srv.URL+"/", Options{})
				var got []string
				for _, f := range rep.Findings {
					got = append(got, f.Rule+": "+f.Message)
				}
				if len(got) != len(tc.want) {
					t.Fatalf("topic %.20q: findings\n%s\nwant %d: %q", topic, findingLines(rep.Findings), len(tc.want), tc.want)
				}
				for i, w := range tc.want {
					w = strings.ReplaceAll(w, testTopic, topicURL)
					if !strings.HasPrefix(got[i], w) {
						t.Errorf("topic %.20q: finding %q, want %q", topic, got[i], w)
					}
				}
			}
		})
	}
}

// TestCheckOutbox: the notifications pending in an outbox are checked one
// by one and as a sequence per channel: consecutive payloads pass, a gap
// is a warning and an overlap an error.
func TestCheckOutbox(t *testing.T) {
	dir := t.TempDir()
	o := notify.OpenOutbox(dir)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	commit := func(from, until time.Time, gap bool) []notify.Pending {
		t.Helper()
		b, err := o.Begin(testTopic, notify.Head{Capability: rs.CapChangeNotification, From: from, Until: until, AfterGap: gap,
			Links: []rs.Link{{Rel: rs.RelUp, Href: "http://example.org/capabilitylist.xml"}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Add(&rs.Entry{Loc: "http://example.org/a.txt", MD: rs.MD{Change: rs.ChangeDeleted, Datetime: until}}); err != nil {
			t.Fatal(err)
		}
		ps, err := b.Commit()
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	check := func() []string {
		t.Helper()
		rep, err := CheckOutbox(t.Context(), dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range rep.Findings {
			got = append(got, f.Severity.String()+" "+f.Rule)
		}
		return got
	}
	commit(t0, t0.Add(time.Hour), false)
	third := commit(t0.Add(time.Hour), t0.Add(2*time.Hour), false)
	if got := check(); len(got) != 0 {
		t.Errorf("consecutive notifications: %v", got)
	}
	commit(t0.Add(3*time.Hour), t0.Add(4*time.Hour), true)
	if got := check(); strings.Join(got, ",") != "warning notification-sequence" {
		t.Errorf("a notification after a gap: %v, want a warning", got)
	}
	// An overlap cannot be committed; a payload edited into one is found.
	p := third[0].Path
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), `from="2026-01-01T01:00:00Z"`, `from="2026-01-01T00:30:00Z"`, 1)
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := check(); strings.Join(got, ",") != "error notification-sequence,warning notification-sequence" {
		t.Errorf("an overlap: %v, want an error", got)
	}
	if _, err := CheckOutbox(t.Context(), filepath.Join(dir, "none"), Options{}); err != nil {
		t.Errorf("a missing outbox holds nothing to check: %v", err)
	}
}
