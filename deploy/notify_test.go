package deploy

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/checker"
	"github.com/rsgen/rsgen/internal/websubhub"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/notify"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
)

const notifyConfig = "[notification]\nhub = \"https://hub.example.org/\"\n"

// TestSendNotificationsOfSavedBuilds: the outbox is sent up to the last
// build whose state was saved, and to a deploy's build: a notification
// that ends later (of a build killed after its commit, or of a build that
// ran after the deploy read the output) stays for the next run.
func TestSendNotificationsOfSavedBuilds(t *testing.T) {
	hub := websubhub.Start(t, websubhub.Options{})
	dir := t.TempDir()
	writeSource(t, dir, "a.txt", "a")
	s := newSite(t, dir, strings.Replace(notifyConfig, "https://hub.example.org/", hub.URL(), 1), "https://data.example.org/")
	first := s.now
	s.write(t, "b.txt", "b")
	s.build(t)
	outbox := notify.OpenOutbox(filepath.Join(s.cfg.State, snapshot.OutboxDir))
	topic := "https://data.example.org/" + layout.ChangeNotificationTopic("default")
	// A build killed after its commit, before its state was saved.
	b, err := outbox.Begin(topic, notify.Head{Capability: rs.CapChangeNotification, From: s.now, Until: s.now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Add(&rs.Entry{Loc: "https://data.example.org/c.txt", MD: rs.MD{Change: rs.ChangeDeleted, Datetime: s.now.Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	sender := notify.Sender{Hub: hub.URL(), Until: first}
	if n, err := SendNotifications(context.Background(), s.cfg.State, sender, nil); n != 0 || err != nil {
		t.Errorf("sent %d, %v of the builds up to a deploy of the first, which notified nothing", n, err)
	}
	sender.Until = time.Time{}
	if n, err := SendNotifications(context.Background(), s.cfg.State, sender, nil); n != 1 || err != nil {
		t.Errorf("sent %d, %v; want the second build's notification", n, err)
	}
	ps, err := outbox.Pending()
	if err != nil || len(ps) != 1 || !ps[0].Until.Equal(s.now.Add(time.Hour)) {
		t.Errorf("pending %v, %v; want the unsaved build's notification", ps, err)
	}
	if _, err := SendNotifications(context.Background(), filepath.Join(dir, "none"), sender, nil); !errors.Is(err, ErrNoState) {
		t.Errorf("a state folder without a build: %v, want ErrNoState", err)
	}
}

// TestS3TopicHeaders: on S3 a topic gets the Content-Type and the
// Cache-Control of the policy, but no Link header, which S3 cannot store:
// rsgen check over HTTP warns that it is missing (a CDN must add it).
func TestS3TopicHeaders(t *testing.T) {
	v := startVersity(t)
	dir := t.TempDir()
	writeSource(t, dir, "a.txt", "a")
	s := newSite(t, dir, notifyConfig, v.website)
	run(t, s.options(v.store(t, v.endpoint, "")))
	resp, err := http.Head(v.website + layout.ChangeNotificationTopic("default"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/xml" || resp.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("the topic on S3: %s, Content-Type %q, Cache-Control %q; want 200, application/xml, no-cache",
			resp.Status, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"))
	}
	rep, err := checker.CheckURL(context.Background(), v.website+layout.SourceDescription, checker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	warned := 0
	for _, f := range rep.Findings {
		if f.Rule == "topic-link" {
			warned++
		} else {
			t.Errorf("rsgen check: %s", f)
		}
	}
	if warned != 2 {
		t.Errorf("rsgen check warned %d times of the topic's Link header; want twice (self, hub)", warned)
	}
}

// writeSource writes a file of the source folder dir/site, before the
// site's first build.
func writeSource(t *testing.T, dir, rel, content string) {
	t.Helper()
	(&site{dir: dir}).write(t, rel, content)
}
