package generator_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/deploy"
	"github.com/rsgen/rsgen/internal/freeport"
	"github.com/rsgen/rsgen/internal/servertest"
	"github.com/rsgen/rsgen/internal/websubhub"
	"github.com/rsgen/rsgen/notify"
	"github.com/rsgen/rsgen/snapshot"
)

// The end to end scenario of push notifications, on loopback with the
// real components: a build, a deploy to a web root served by nginx
// (configured by the snippet the build wrote), the test hub, and a
// Destination's notify.Subscriber.

// e2eHub is a WebSub hub on a port of its own, which can be stopped and
// started again at the same URL (a hub that is down), and which counts
// the requests it receives and makes.
type e2eHub struct {
	t        *testing.T
	port     int
	url      string
	srv      *http.Server
	hub      *websubhub.Hub
	received atomic.Int64 // publications (submissions and pings)
	made     atomic.Int64 // fetches of topics and distributions
}

func startE2EHub(t *testing.T) *e2eHub {
	h := &e2eHub{t: t, port: freeport.Get(t)}
	h.url = fmt.Sprintf("http://127.0.0.1:%d/hub", h.port)
	h.start()
	t.Cleanup(h.stop)
	return h
}

type countingTransport struct{ n *atomic.Int64 }

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func (h *e2eHub) start() {
	h.hub = websubhub.New(websubhub.Options{URL: h.url, Client: &http.Client{Timeout: 10 * time.Second, Transport: countingTransport{&h.made}}})
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", h.port))
	if err != nil {
		h.t.Fatal(err)
	}
	h.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("User-Agent") == notify.UserAgent && !isSubscription(r) {
			h.received.Add(1)
		}
		h.hub.ServeHTTP(w, r)
	})}
	go h.srv.Serve(ln)
}

// isSubscription reports whether r is a Destination's (un)subscription,
// reading its form (the hub reads the parsed form).
func isSubscription(r *http.Request) bool {
	if r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || r.ParseForm() != nil {
		return false
	}
	mode := r.PostForm.Get("hub.mode")
	return mode == "subscribe" || mode == "unsubscribe"
}

func (h *e2eHub) stop() {
	if h.srv != nil {
		h.srv.Close()
		h.hub.Close()
		h.srv = nil
	}
}

// e2eDestination is a Destination listening for notifications.
type e2eDestination struct {
	sub        *notify.Subscriber
	deliveries chan received
}

type received struct {
	d  notify.Delivery
	at time.Time
}

func subscribeE2E(t *testing.T, hub, topic string) *e2eDestination {
	d := &e2eDestination{deliveries: make(chan received, 16)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { d.sub.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	d.sub = notify.NewSubscriber(notify.SubscriberOptions{Callback: srv.URL + "/notify",
		Deliver: func(n notify.Delivery) { d.deliveries <- received{n, time.Now()} },
		Problem: func(topic string, err error) { t.Errorf("the subscriber ignored a delivery of %s: %v", topic, err) }})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := d.sub.Subscribe(ctx, hub, topic, time.Time{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.sub.Close(context.Background()) })
	return d
}

func (d *e2eDestination) next(t *testing.T) received {
	t.Helper()
	select {
	case r := <-d.deliveries:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("nothing was delivered within 30s")
	}
	return received{}
}

// TestNotificationEndToEnd: build → deploy to a web root served by nginx
// → the hub → a subscribed Destination, which receives the notification
// the topic serves, byte for byte, both as the specifications submit it
// and by a WebSub ping (the hub then fetches the topic from nginx, whose
// Link headers name it and the hub); a hub that is down keeps the
// notifications in the outbox, and a later deploy sends them. It logs the
// requests per notification and the time from the end of a deploy to the
// Destination's receipt.
func TestNotificationEndToEnd(t *testing.T) {
	bin := nginxPath(t)
	for _, ping := range []notify.Ping{notify.PingResourceSync, notify.PingWebSub} {
		t.Run(string(ping), func(t *testing.T) { testNotificationEndToEnd(t, bin, ping) })
	}
}

func testNotificationEndToEnd(t *testing.T, bin string, ping notify.Ping) {
	hub := startE2EHub(t)
	port := freeport.Get(t)
	base := fmt.Sprintf("http://127.0.0.1:%d/", port)
	s := newSite(t, base, func(c *config.Config) {
		c.Publish.Targets = []config.Target{config.TargetNginx}
		c.Notification.Hub, c.Notification.Ping = hub.url, ping
	})
	www := t.TempDir()
	store, err := deploy.OpenDir(www)
	if err != nil {
		t.Fatal(err)
	}
	publish := func(now time.Time) *deploy.Summary {
		t.Helper()
		s.build(now)
		sum, err := deploy.Run(context.Background(), deploy.Options{Out: s.Out, State: s.State, BaseURL: base, CopyResources: true,
			ShortCache: s.Cfg.Publish.ShortCache.Duration, Store: store, MaxDeletes: -1})
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	send := func(sum *deploy.Summary, attempts int) (int, error) {
		return deploy.SendNotifications(context.Background(), s.State, notify.Sender{Hub: hub.url, Ping: ping, Until: sum.Built,
			Attempts: attempts, Backoff: func(int) time.Duration { return time.Millisecond }}, nil)
	}
	s.write("a.txt", "a")
	publish(t0)
	servertest.ServeNginx(t, bin, www, port)
	topic := base + changeTopic
	dest := subscribeE2E(t, hub.url, topic)

	// A change: deployed, then sent; the Destination holds the topic's bytes.
	s.write("b.txt", "b")
	sum := publish(t0.Add(time.Minute))
	hub.received.Store(0)
	hub.made.Store(0)
	deployed := time.Now()
	if n, err := send(sum, 0); n != 1 || err != nil {
		t.Fatalf("sent %d, %v; want the notification of b.txt", n, err)
	}
	got := dest.next(t)
	toHub, fromHub := hub.received.Load(), hub.made.Load()
	served := getTopic(t, topic, hub.url)
	if string(got.d.Payload) != served {
		t.Fatalf("the Destination received\n%s\nthe topic serves\n%s", got.d.Payload, served)
	}
	if len(got.d.Entries) != 1 || got.d.Entries[0].Loc != base+"b.txt" {
		t.Errorf("entries %+v, want b.txt's creation", got.d.Entries)
	}
	t.Logf("ping %s: %d requests to the hub and %d from it (fetches, distributions) for one notification; "+
		"%s from the end of the deploy to the Destination's receipt (loopback)",
		ping, toHub, fromHub, got.at.Sub(deployed).Round(10*time.Microsecond))

	// The hub is down: the notification stays, and a later deploy sends it.
	hub.stop()
	s.write("c.txt", "c")
	sum = publish(t0.Add(2 * time.Minute))
	if n, err := send(sum, 2); n != 0 || err == nil {
		t.Fatalf("sent %d, %v to a hub that is down", n, err)
	}
	pending, err := notify.OpenOutbox(filepath.Join(s.State, snapshot.OutboxDir)).Pending()
	if err != nil || len(pending) != 1 {
		t.Fatalf("outbox %v, %v; want the notification of c.txt", pending, err)
	}
	kept, err := os.ReadFile(pending[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	hub.start()
	dest = subscribeE2E(t, hub.url, topic) // the hub keeps no subscription across a restart
	sum = publish(t0.Add(3 * time.Minute)) // nothing changed: a deploy with nothing to upload
	if n, err := send(sum, 0); n != 1 || err != nil {
		t.Fatalf("sent %d, %v once the hub is back", n, err)
	}
	if got := dest.next(t); string(got.d.Payload) != string(kept) {
		t.Errorf("the Destination received\n%s\nwant what the outbox kept\n%s", got.d.Payload, kept)
	}
}

// getTopic fetches the topic from nginx and checks how it is served.
func getTopic(t *testing.T, topic, hub string) string {
	t.Helper()
	resp, err := http.Get(topic)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	want := notify.TopicHeaders(topic, hub)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != want.Get("Content-Type") ||
		resp.Header.Get("Link") != want.Get("Link") || resp.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("nginx serves the topic with %s, Content-Type %q, Link %q, Cache-Control %q; want 200 and %v",
			resp.Status, resp.Header.Get("Content-Type"), resp.Header.Get("Link"), resp.Header.Get("Cache-Control"), want)
	}
	return string(body)
}
