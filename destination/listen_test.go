package destination_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/deploy"
	"github.com/rsgen/rsgen/destination"
	"github.com/rsgen/rsgen/internal/freeport"
	"github.com/rsgen/rsgen/internal/servertest"
	"github.com/rsgen/rsgen/internal/websubhub"
	"github.com/rsgen/rsgen/notify"
	"github.com/rsgen/rsgen/snapshot"
)

// pushSite is an rsgen Source with a Change Notification channel at a
// test hub, served by rsgen serve's handler from the output folder, or
// by nginx from a web root that each build is deployed to.
type pushSite struct {
	*rsgenSite
	hub     *websubhub.Hub
	webroot string // where nginx serves: deploy's target; "" without nginx
}

func newPushSite(t *testing.T, nginx string) *pushSite {
	t.Helper()
	hub := websubhub.Start(t, websubhub.Options{})
	var ln net.Listener
	var base string
	port := 0
	if nginx != "" {
		port = freeport.Get(t)
		base = fmt.Sprintf("http://127.0.0.1:%d/", port)
	} else {
		ln, base = listen(t)
	}
	s := newRsgenSite(t, base, func(c *config.Config) {
		c.Notification.Hub = hub.URL()
		if nginx != "" {
			c.Publish.Targets = []config.Target{"nginx"}
		}
	})
	s.write("a.txt", "alpha")
	s.build(0)
	p := &pushSite{rsgenSite: s, hub: hub}
	if nginx != "" {
		p.webroot = filepath.Join(t.TempDir(), "www")
		p.deploy()
		servertest.ServeNginx(t, nginx, p.webroot, port)
	} else {
		serveOutput(t, s, ln)
	}
	return p
}

// deploy publishes the last build to the web root, as rsgen deploy
// --to does before it sends the notifications; without a web root the
// output folder is served as it is.
func (p *pushSite) deploy() {
	p.t.Helper()
	if p.webroot == "" {
		return
	}
	store, err := deploy.OpenDir(p.webroot)
	if err != nil {
		p.t.Fatal(err)
	}
	defer store.Close()
	if _, err := deploy.Run(context.Background(), deploy.Options{Out: p.cfg.Out, State: p.cfg.State, BaseURL: p.cfg.BaseURL, CopyResources: p.cfg.CopyResources, Store: store, MaxDeletes: -1}); err != nil {
		p.t.Fatalf("deploy to %s: %v", p.webroot, err)
	}
}

// send sends the outbox to the hub, as rsgen deploy and notify do.
func (p *pushSite) send() {
	p.t.Helper()
	if _, err := deploy.SendNotifications(context.Background(), p.cfg.State, notify.Sender{Hub: p.hub.URL()}, nil); err != nil {
		p.t.Fatal(err)
	}
}

// dropOldestNotification removes the oldest notification from the
// outbox, unsent: the channel misses it.
func (p *pushSite) dropOldestNotification() {
	p.t.Helper()
	o := notify.OpenOutbox(filepath.Join(p.cfg.State, snapshot.OutboxDir))
	pending, err := o.Pending()
	if err != nil || len(pending) < 2 {
		p.t.Fatalf("pending: %v, %v", pending, err)
	}
	if err := o.Remove(pending[0]); err != nil {
		p.t.Fatal(err)
	}
}

// listening is a destination.Listen running in the background.
type listening struct {
	dir      string
	sums     chan *destination.Summary
	warnings chan string
	stop     func() error // ends Listen and returns its error
}

// startListen runs Listen into dir and waits until it subscribed.
func startListen(t *testing.T, p *pushSite, dir string) *listening {
	t.Helper()
	ln, _ := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	m := &listening{dir: dir, sums: make(chan *destination.Summary, 100), warnings: make(chan string, 100)}
	ready, errc := make(chan struct{}), make(chan error, 1)
	o := destination.ListenOptions{
		Options: destination.Options{Source: p.cfg.BaseURL, Dir: dir, Timeout: 5 * time.Second, Backoff: time.Millisecond,
			Notify: func(e destination.Event) {
				if e.Kind == destination.EventWarning {
					m.warnings <- e.Msg
				}
			}},
		Listener:   ln,
		Subscribed: func(string) { close(ready) },
		Done:       func(s *destination.Summary) { m.sums <- s },
	}
	go func() { errc <- destination.Listen(ctx, o) }()
	select {
	case <-ready:
	case err := <-errc:
		cancel()
		t.Fatalf("listen: %v", err)
	}
	m.stop = sync.OnceValue(func() error { cancel(); return <-errc })
	t.Cleanup(func() { m.stop() })
	if s := m.next(t); s.Mode != "baseline" {
		t.Fatalf("the first run is a %s, want a baseline", s.Mode)
	}
	return m
}

// listenWait bounds each wait for the listener: generous, as the tests
// assert no timing.
const listenWait = 30 * time.Second

// next returns the summary of the listener's next run.
func (m *listening) next(t *testing.T) *destination.Summary {
	t.Helper()
	select {
	case s := <-m.sums:
		return s
	case <-time.After(listenWait):
		t.Fatal("no run of the listener")
	}
	return nil
}

// TestListenAppliesNotifications follows an rsgen Source by its Change
// Notification channel: each notification a build sends is applied, with
// a sync's verification, and the mirror then equals the Source; a
// delivery whose signature does not verify changes nothing; when the
// listener stops it unsubscribes, and a plain sync goes on from where
// the notifications left the state.
func TestListenAppliesNotifications(t *testing.T) {
	p := newPushSite(t, "")
	dir := filepath.Join(t.TempDir(), "mirror")
	m := startListen(t, p, dir)

	// an update and a creation
	p.write("a.txt", "alpha, updated")
	p.write("b/c.txt", "c")
	p.build(time.Minute)
	p.send()
	s := m.next(t)
	if s.Mode != "notification" || s.Fetched != 2 || s.Deleted != 0 || !s.Notification.Until.Equal(p.now) {
		t.Fatalf("got %+v, want a notification until %s that fetched 2", s, p.now)
	}
	sameTree(t, treeOf(t, dir), p.source())

	// a deletion
	p.remove("b/c.txt")
	p.build(time.Minute)
	p.send()
	if s := m.next(t); s.Mode != "notification" || s.Deleted != 1 {
		t.Fatalf("got %+v, want a notification that deleted 1", s)
	}
	sameTree(t, treeOf(t, dir), p.source())

	// a delivery signed with another secret, that would delete a.txt
	forged := forgedDeletion(t, p, "a.txt")
	subs := p.hub.Subscriptions()
	if len(subs) != 1 {
		t.Fatalf("the hub has %d subscriptions, want 1", len(subs))
	}
	postSigned(t, subs[0].Callback, forged, []byte("not the secret"))
	select {
	case w := <-m.warnings:
		if !strings.Contains(w, notify.ErrSignature.Error()) {
			t.Fatalf("warning %q, want one of the signature", w)
		}
	case <-time.After(listenWait):
		t.Fatal("no warning of the forged delivery")
	}
	// deliveries are applied in order: the next run is the next build's
	p.write("d.txt", "d")
	p.build(time.Minute)
	p.send()
	if s := m.next(t); s.Mode != "notification" || s.Fetched != 1 || s.Deleted != 0 {
		t.Fatalf("got %+v, want the next build's notification", s)
	}
	sameTree(t, treeOf(t, dir), p.source())

	// stopping unsubscribes (the hub records it once the callback
	// confirmed, which may be just after Listen returns)
	if err := m.stop(); err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), listenWait)
	defer cancel()
	if _, err := p.hub.Await(ctx, websubhub.Is(websubhub.Unsubscribed, subs[0].Callback)); err != nil {
		t.Fatalf("the hub saw no unsubscription: %v\n%s", err, p.hub.Events())
	}

	// a plain sync goes on from the last notification
	p.write("e.txt", "e")
	p.build(time.Minute)
	s = mustSync(t, destination.Options{Source: p.cfg.BaseURL, Dir: dir})
	if s.Mode != "incremental" || s.Fetched != 1 || s.Deleted != 0 {
		t.Fatalf("got %+v, want an incremental sync that fetched e.txt alone", s)
	}
	sameTree(t, treeOf(t, dir), p.source())
}

// forgedDeletion returns a payload that follows the channel's last
// notification and deletes path.
func forgedDeletion(t *testing.T, p *pushSite, path string) []byte {
	t.Helper()
	from, until := p.now.UTC().Format(time.RFC3339), p.now.Add(time.Minute).UTC().Format(time.RFC3339)
	return fmt.Appendf(nil, `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
<rs:md capability="change-notification" from="%s" until="%s"/>
<url><loc>%s%s</loc><rs:md change="deleted" datetime="%s"/></url>
</urlset>
`, from, until, p.cfg.BaseURL, path, until)
}

// postSigned posts payload to callback, signed with secret.
func postSigned(t *testing.T, callback string, payload, secret []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, callback, bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("X-Hub-Signature", "sha256="+hmacSHA256(secret, payload))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// TestListenGapReadsChangeLists: a notification that does not start
// where the last one ended tells of notifications missed; the listener
// closes the gap from the Change Lists, and the mirror equals the Source.
func TestListenGapReadsChangeLists(t *testing.T) {
	p := newPushSite(t, "")
	dir := filepath.Join(t.TempDir(), "mirror")
	m := startListen(t, p, dir)
	p.write("b.txt", "b") // only in the notification missed
	p.build(time.Minute)
	p.write("c.txt", "c")
	p.build(time.Minute)
	p.dropOldestNotification()
	p.send()
	s := m.next(t)
	if s.Mode != "incremental" || s.Fetched != 2 || !s.Notification.Until.Equal(p.now) {
		t.Fatalf("got %+v, want an incremental sync that fetched b.txt and c.txt", s)
	}
	sameTree(t, treeOf(t, dir), p.source())
}

// TestListenNoChannel: a Source without a Change Notification channel
// cannot be listened to; the error says so, after the sync.
func TestListenNoChannel(t *testing.T) {
	ln, base := listen(t)
	s := newRsgenSite(t, base, nil)
	s.write("a.txt", "alpha")
	s.build(0)
	serveOutput(t, s, ln)
	cb, _ := listen(t)
	dir := filepath.Join(t.TempDir(), "mirror")
	err := destination.Listen(context.Background(), destination.ListenOptions{
		Options: destination.Options{Source: base, Dir: dir}, Listener: cb})
	if !errors.Is(err, destination.ErrNoChannel) {
		t.Fatalf("got %v, want ErrNoChannel", err)
	}
	sameTree(t, treeOf(t, dir), s.source())
}

// TestListenEndToEnd publishes each build through a web server (nginx
// serving a web root each build is deployed to, where installed; else
// rsgen serve's handler) and the test hub: the listener's mirror holds
// each build's bytes. It logs the time from the end of the deploy (the
// start of the send, which rsgen deploy makes once everything is live)
// and from the end of the send (the hub may deliver before it answers)
// to the file's landing, and the requests each notification cost.
func TestListenEndToEnd(t *testing.T) {
	rounds := 3
	if os.Getenv("RSGEN_STRESS") == "1" {
		rounds = 20
	}
	servers := map[string]string{"serve": ""}
	if nginx := servertest.Nginx(t); nginx != "" {
		servers["nginx"] = nginx
	}
	for name, nginx := range servers {
		t.Run(name, func(t *testing.T) {
			p := newPushSite(t, nginx)
			dir := filepath.Join(t.TempDir(), "mirror")
			m := startListen(t, p, dir)
			var took, afterSend []time.Duration
			for i := range rounds {
				content := strings.Repeat(fmt.Sprint(i), 1000+i)
				p.write("a.txt", content)
				p.build(time.Minute)
				p.deploy()
				start := time.Now()
				p.send()
				sent := time.Now()
				waitForFile(t, filepath.Join(dir, "a.txt"), content)
				took = append(took, time.Since(start))
				afterSend = append(afterSend, time.Since(sent))
				s := m.next(t)
				if s.Mode != "notification" || s.Fetched != 1 {
					t.Fatalf("round %d: got %+v, want a notification that fetched a.txt", i, s)
				}
				if i == 0 {
					t.Logf("requests per notification: %d (1 resource changed)", s.Requests)
				}
			}
			slices.Sort(took)
			slices.Sort(afterSend)
			t.Logf("%s, over %d rounds: from the start of the send to the file landing: median %s, max %s; from its end: median %s, max %s",
				name, rounds, took[len(took)/2], took[len(took)-1], afterSend[len(afterSend)/2], afterSend[len(afterSend)-1])
			sameTree(t, treeOf(t, dir), p.source())
		})
	}
}

// waitForFile waits until the file at path holds content.
func waitForFile(t *testing.T, path, content string) {
	t.Helper()
	for deadline := time.Now().Add(listenWait); ; {
		if data, err := os.ReadFile(path); err == nil && string(data) == content {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not get its new bytes", path)
		}
		time.Sleep(time.Millisecond) // polling: the file lands in another goroutine
	}
}

// hmacSHA256 returns the hex HMAC-SHA256 of payload keyed with secret.
func hmacSHA256(secret, payload []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(payload)
	return hex.EncodeToString(m.Sum(nil))
}
