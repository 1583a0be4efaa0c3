package notify_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsgen/rsgen/internal/websubhub"
	"github.com/rsgen/rsgen/notify"
	"github.com/rsgen/rsgen/rs"
)

// The tests below run the sender and the subscriber end to end against
// the test hub (internal/websubhub) over loopback.

// testHub is a hub whose requests from rsgen's sender are recorded.
type testHub struct {
	*websubhub.Hub
	mu       sync.Mutex
	requests []*http.Request // from publishers, with their forms parsed
}

func startHub(t *testing.T, opts websubhub.Options) *testHub {
	th := &testHub{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Content-Type") == "application/x-www-form-urlencoded" {
			r.ParseForm() // the hub reads the parsed form
		}
		if r.Header.Get("User-Agent") == notify.UserAgent && r.PostForm.Get("hub.mode") != "subscribe" && r.PostForm.Get("hub.mode") != "unsubscribe" {
			th.mu.Lock()
			th.requests = append(th.requests, r.Clone(context.Background()))
			th.mu.Unlock()
		}
		th.Hub.ServeHTTP(w, r)
	}))
	opts.URL = srv.URL + "/hub"
	th.Hub = websubhub.New(opts)
	t.Cleanup(func() {
		srv.Close()
		th.Hub.Close()
	})
	return th
}

// listener is a Destination: a Subscriber serving its callbacks on
// loopback, with what it delivered and what it ignored.
type listener struct {
	*notify.Subscriber
	deliveries chan notify.Delivery
	problems   chan error
}

func startListener(t *testing.T, opts notify.SubscriberOptions) *listener {
	l := &listener{deliveries: make(chan notify.Delivery, 100), problems: make(chan error, 100)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { l.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	opts.Callback = srv.URL + "/notify"
	opts.Deliver = func(d notify.Delivery) { l.deliveries <- d }
	opts.Problem = func(topic string, err error) { l.problems <- err }
	l.Subscriber = notify.NewSubscriber(opts)
	return l
}

func (l *listener) next(t *testing.T) notify.Delivery {
	t.Helper()
	select {
	case d := <-l.deliveries:
		return d
	case err := <-l.problems:
		t.Fatalf("the subscriber ignored a delivery: %v", err)
	case <-ctxFor(t).Done():
		t.Fatal("nothing was delivered")
	}
	return notify.Delivery{}
}

func (l *listener) nextProblem(t *testing.T) error {
	t.Helper()
	select {
	case err := <-l.problems:
		return err
	case d := <-l.deliveries:
		t.Fatalf("delivered %+v, want it ignored", d)
	case <-ctxFor(t).Done():
		t.Fatal("no problem reported")
	}
	return nil
}

// subscribe subscribes l to topic at h and waits until the hub holds the
// subscription: Subscribe returns once the Subscriber confirmed, which
// the hub records after its answer.
func subscribe(t *testing.T, l *listener, h *testHub, topic string, since time.Time) *notify.Subscription {
	t.Helper()
	sub, err := l.Subscribe(ctxFor(t), h.URL(), topic, since)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Await(ctxFor(t), websubhub.Is(websubhub.Subscribed, sub.Callback())); err != nil {
		t.Fatal(err)
	}
	return sub
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// rawSubscriber subscribes a callback of its own to topic at the hub, and
// returns the distributions it receives: their bytes, as sent.
func rawSubscriber(t *testing.T, h *testHub, topic string) <-chan *http.Request {
	ch := make(chan *http.Request, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			io.WriteString(w, r.URL.Query().Get("hub.challenge"))
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		ch <- r
	}))
	t.Cleanup(srv.Close)
	resp, err := http.PostForm(h.URL(), url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := h.Await(ctxFor(t), websubhub.Is(websubhub.Subscribed, srv.URL)); err != nil {
		t.Fatal(err)
	}
	return ch
}

func nextRaw(t *testing.T, ch <-chan *http.Request) (*http.Request, string) {
	t.Helper()
	select {
	case r := <-ch:
		body, _ := io.ReadAll(r.Body)
		return r, string(body)
	case <-ctxFor(t).Done():
		t.Fatal("nothing reached the raw subscriber")
		return nil, ""
	}
}

// twoBatches commits two consecutive notifications to the change channel
// and returns their bytes.
func twoBatches(t *testing.T, o *notify.Outbox) []string {
	batch(t, o, changeTopic, rs.CapChangeNotification, at(0), at(100),
		change("a.txt", rs.ChangeCreated, 10), change("b.txt", rs.ChangeUpdated, 20))
	batch(t, o, changeTopic, rs.CapChangeNotification, at(100), at(200), change("a.txt", rs.ChangeDeleted, 150))
	return payloads(t, o)
}

func payloads(t *testing.T, o *notify.Outbox) []string {
	var out []string
	for _, p := range mustPending(t, o) {
		data, err := os.ReadFile(p.Path)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(data))
	}
	return out
}

// Publish → hub → subscriber: the spec's POST of the payload reaches the
// Destination byte for byte, signed and parsed, in order, and leaves the
// outbox.
func TestPushEndToEnd(t *testing.T) {
	h := startHub(t, websubhub.Options{})
	l := startListener(t, notify.SubscriberOptions{})
	sub := subscribe(t, l, h, changeTopic, at(0))
	if subs := h.Subscriptions(); len(subs) != 1 || !subs[0].Secret || subs[0].Callback != sub.Callback() {
		t.Fatalf("hub subscriptions %+v: want the subscriber's, with a secret", subs)
	}
	raw := rawSubscriber(t, h, changeTopic)
	o := notify.OpenOutbox(t.TempDir())
	sent := twoBatches(t, o)

	var left []notify.Pending
	s := &notify.Sender{Hub: h.URL(), Ping: notify.PingResourceSync, Sent: func(p notify.Pending) { left = append(left, p) }}
	if n, err := s.Send(ctxFor(t), o); n != 2 || err != nil {
		t.Fatalf("Send = %d, %v", n, err)
	}
	if ps := mustPending(t, o); len(ps) != 0 || len(left) != 2 {
		t.Errorf("after sending: pending %v, sent %v", ps, left)
	}
	for i, want := range sent {
		r, body := nextRaw(t, raw)
		if body != want || r.Header.Get("Content-Type") != "application/xml" ||
			r.Header.Get("Link") != notify.LinkHeader(changeTopic, h.URL()) {
			t.Errorf("distribution %d: %s %s\n%s\nwant the payload\n%s", i, r.Header.Get("Content-Type"), r.Header.Get("Link"), body, want)
		}
	}
	d := l.next(t)
	if d.Topic != changeTopic || d.Capability != rs.CapChangeNotification || !d.From.Equal(at(0)) || !d.Until.Equal(at(100)) || d.Gap != nil ||
		len(d.Entries) != 2 || d.Entries[0].Loc != "https://example.org/a.txt" || d.Entries[1].MD.Change != "updated" {
		t.Errorf("first delivery %+v", d)
	}
	if string(d.Payload) != sent[0] {
		t.Errorf("the first delivery's payload is not the one sent, byte for byte:\n%s", d.Payload)
	}
	d = l.next(t)
	if !d.From.Equal(at(100)) || d.Gap != nil || len(d.Entries) != 1 || d.Entries[0].MD.Change != "deleted" {
		t.Errorf("second delivery %+v", d)
	}
	if string(d.Payload) != sent[1] {
		t.Errorf("the second delivery's payload is not the one sent, byte for byte:\n%s", d.Payload)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.requests {
		if r.Header.Get("Link") != notify.LinkHeader(changeTopic, h.URL()) || r.Header.Get("Content-Type") != "application/xml" {
			t.Errorf("submission with Link %q and Content-Type %q", r.Header.Get("Link"), r.Header.Get("Content-Type"))
		}
	}
	if len(h.requests) != 2 {
		t.Errorf("%d submissions with User-Agent rsgen, want 2", len(h.requests))
	}
}

// A delivery whose signature does not verify by sha256 or better with the
// subscription's secret is ignored (and answered 2xx); the next good one
// is delivered.
func TestPushBadSignatureIgnored(t *testing.T) {
	h := startHub(t, websubhub.Options{})
	l := startListener(t, notify.SubscriberOptions{})
	sub := subscribe(t, l, h, changeTopic, at(0))
	o := notify.OpenOutbox(t.TempDir())
	payload := twoBatches(t, o)[0]
	sig := func(newHash func() hash.Hash, alg string, key []byte) string {
		m := hmac.New(newHash, key)
		m.Write([]byte(payload))
		return alg + "=" + hex.EncodeToString(m.Sum(nil))
	}
	for name, header := range map[string]string{
		"none":         "",
		"other secret": sig(sha256.New, "sha256", []byte("not the secret")),
		"sha1":         sig(sha1.New, "sha1", sub.Secret()),
		"garbled":      "sha256=zz",
		"no method":    strings.TrimPrefix(sig(sha256.New, "sha256", sub.Secret()), "sha256="),
	} {
		req, _ := http.NewRequest(http.MethodPost, sub.Callback(), strings.NewReader(payload))
		req.Header.Set("Content-Type", "application/xml")
		if header != "" {
			req.Header.Set("X-Hub-Signature", header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Errorf("%s: answered %s, want 2xx", name, resp.Status)
		}
		if err := l.nextProblem(t); !errors.Is(err, notify.ErrSignature) {
			t.Errorf("%s: %v, want ErrSignature", name, err)
		}
	}
	s := &notify.Sender{Hub: h.URL()}
	if _, err := s.Send(ctxFor(t), o); err != nil {
		t.Fatal(err)
	}
	if d := l.next(t); !d.From.Equal(at(0)) || d.Gap != nil {
		t.Errorf("the first good delivery %+v, want [0, 100] without a gap", d)
	}
}

// A signed delivery whose Link header names another topic than the
// subscription's is ignored (ErrTopic); the same payload naming the
// subscription's topic is delivered.
func TestPushOtherTopicIgnored(t *testing.T) {
	h := startHub(t, websubhub.Options{})
	l := startListener(t, notify.SubscriberOptions{})
	sub := subscribe(t, l, h, changeTopic, at(0))
	payload := twoBatches(t, notify.OpenOutbox(t.TempDir()))[0]
	m := hmac.New(sha256.New, sub.Secret())
	m.Write([]byte(payload))
	for _, topic := range []string{"https://example.org/other/change.xml", changeTopic} {
		req, _ := http.NewRequest(http.MethodPost, sub.Callback(), strings.NewReader(payload))
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("X-Hub-Signature", "sha256="+hex.EncodeToString(m.Sum(nil)))
		req.Header.Set("Link", notify.LinkHeader(topic, h.URL()))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Errorf("%s: answered %s, want 2xx", topic, resp.Status)
		}
		if topic != changeTopic {
			if err := l.nextProblem(t); !errors.Is(err, notify.ErrTopic) {
				t.Errorf("a delivery naming another topic: %v, want ErrTopic", err)
			}
		} else if d := l.next(t); d.Topic != changeTopic || !d.From.Equal(at(0)) {
			t.Errorf("the delivery naming the topic: %+v, want [0, 100] of %s", d, changeTopic)
		}
	}
}

// A hub that is down keeps the notifications in the outbox, unchanged,
// after the retries; a later send delivers them, the same bytes.
func TestPushHubDown(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL + "/hub"
	down.Close()
	o := notify.OpenOutbox(t.TempDir())
	sent := twoBatches(t, o)
	var waits []time.Duration
	var failures int
	s := &notify.Sender{Hub: downURL, Attempts: 3,
		Sleep:  func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil },
		Failed: func(notify.Pending, int, error) { failures++ }}
	n, err := s.Send(ctxFor(t), o)
	var se *notify.SendError
	if n != 0 || !errors.As(err, &se) || se.Left != 2 || se.Attempts != 3 || se.Pending.Seq != 1 {
		t.Fatalf("Send = %d, %v; want a SendError after 3 attempts with 2 left", n, err)
	}
	if failures != 3 || len(waits) != 2 || waits[1] <= waits[0] {
		t.Errorf("%d failures, waits %v: want 3 failures and 2 growing waits", failures, waits)
	}
	if !strings.Contains(err.Error(), "2 notifications stay in the outbox") {
		t.Errorf("error %q does not say what stays", err)
	}
	if got := payloads(t, o); strings.Join(got, "") != strings.Join(sent, "") {
		t.Fatal("the outbox changed after a failed send")
	}

	h := startHub(t, websubhub.Options{})
	raw := rawSubscriber(t, h, changeTopic)
	s.Hub = h.URL()
	if n, err := s.Send(ctxFor(t), o); n != 2 || err != nil {
		t.Fatalf("Send = %d, %v", n, err)
	}
	for i, want := range sent {
		if _, body := nextRaw(t, raw); body != want {
			t.Errorf("resent notification %d differs from the one first written", i)
		}
	}
}

// A hub that refuses a notification (a 4xx other than 408 and 429) is
// not asked again; the error says what it answered. What was taken before
// left the outbox, what was not stays, in order.
func TestSendStopsAtRefusal(t *testing.T) {
	var calls int
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if calls == 1 {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, "topic not registered\nmore")
	}))
	defer hub.Close()
	o := notify.OpenOutbox(t.TempDir())
	twoBatches(t, o)
	batch(t, o, changeTopic, rs.CapChangeNotification, at(200), at(300), change("c", rs.ChangeCreated, 250))
	s := &notify.Sender{Hub: hub.URL, Attempts: 5, Sleep: func(context.Context, time.Duration) error { return nil }}
	n, err := s.Send(ctxFor(t), o)
	var se *notify.SendError
	if n != 1 || !errors.As(err, &se) || se.Attempts != 1 || se.Left != 2 || se.Pending.Seq != 2 {
		t.Fatalf("Send = %d, %v; want 1 sent, then a refusal after 1 attempt with 2 left", n, err)
	}
	if !strings.Contains(err.Error(), "403 Forbidden: topic not registered") || strings.Contains(err.Error(), "more") {
		t.Errorf("error %q: want the hub's status and the first line of its answer", err)
	}
	if ps := mustPending(t, o); len(ps) != 2 || ps[0].Seq != 2 || ps[1].Seq != 3 {
		t.Errorf("pending %+v, want 2 and 3", ps)
	}
}

// With ping = "websub" the hub is told hub.topic and hub.url and fetches
// the topic URI, which serves the channel's newest payload with its
// headers; the older pending ones leave the outbox with it.
func TestPushWebSubPing(t *testing.T) {
	h := startHub(t, websubhub.Options{})
	o := notify.OpenOutbox(t.TempDir())
	// The topic URI serves the channel's newest payload, as the build
	// publishes it beside the outbox.
	var newest atomic.Value
	topicSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range notify.TopicHeaders("http://"+r.Host+r.URL.Path, h.URL()) {
			w.Header()[k] = v
		}
		io.WriteString(w, newest.Load().(string))
	}))
	defer topicSrv.Close()
	topicURL := topicSrv.URL + "/change.xml"
	batch(t, o, topicURL, rs.CapChangeNotification, at(0), at(100), change("a.txt", rs.ChangeCreated, 10))
	batch(t, o, topicURL, rs.CapChangeNotification, at(100), at(200), change("a.txt", rs.ChangeDeleted, 150))
	newest.Store(payloads(t, o)[1])

	l := startListener(t, notify.SubscriberOptions{})
	subscribe(t, l, h, topicURL, at(100))
	s := &notify.Sender{Hub: h.URL(), Ping: notify.PingWebSub}
	if n, err := s.Send(ctxFor(t), o); n != 2 || err != nil {
		t.Fatalf("Send = %d, %v", n, err)
	}
	if d := l.next(t); !d.From.Equal(at(100)) || d.Gap != nil || d.Entries[0].MD.Change != "deleted" {
		t.Errorf("delivery %+v, want the newest payload", d)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.requests) != 1 {
		t.Fatalf("%d pings, want one for the channel", len(h.requests))
	}
	r := h.requests[0]
	if r.Form.Get("hub.mode") != "publish" || r.Form.Get("hub.topic") != topicURL || r.Form.Get("hub.url") != topicURL {
		t.Errorf("ping form %v", r.Form)
	}
	if ps := mustPending(t, o); len(ps) != 0 {
		t.Errorf("pending %v after the ping", ps)
	}
}

// A notification that starts after the last one ended reports the gap; a
// notification delivered again is dropped.
func TestSubscriberGapAndDuplicate(t *testing.T) {
	h := startHub(t, websubhub.Options{})
	l := startListener(t, notify.SubscriberOptions{})
	subscribe(t, l, h, changeTopic, at(0))
	o := notify.OpenOutbox(t.TempDir())
	ps := batch(t, o, changeTopic, rs.CapChangeNotification, at(0), at(100), change("a", rs.ChangeCreated, 10))
	first, _ := os.ReadFile(ps[0].Path)
	ps = append(ps, batch(t, o, changeTopic, rs.CapChangeNotification, at(100), at(200), change("b", rs.ChangeCreated, 110))...)
	batch(t, o, changeTopic, rs.CapChangeNotification, at(200), at(300), change("c", rs.ChangeCreated, 210))
	if err := o.Remove(ps[1]); err != nil { // lost on the way
		t.Fatal(err)
	}
	s := &notify.Sender{Hub: h.URL()}
	if _, err := s.Send(ctxFor(t), o); err != nil {
		t.Fatal(err)
	}
	if d := l.next(t); d.Gap != nil {
		t.Errorf("first delivery has a gap %+v", d.Gap)
	}
	if d := l.next(t); d.Gap == nil || !d.Gap.From.Equal(at(100)) || !d.Gap.Until.Equal(at(200)) {
		t.Errorf("delivery after a lost one: gap %+v, want [100, 200]", d.Gap)
	}
	req, _ := http.NewRequest(http.MethodPost, h.URL(), strings.NewReader(string(first)))
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("Link", notify.LinkHeader(changeTopic, h.URL()))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := l.nextProblem(t); !errors.Is(err, notify.ErrDuplicate) {
		t.Errorf("a resent notification: %v, want ErrDuplicate", err)
	}
}

// The subscription is renewed when four fifths of the lease have passed:
// the hub sees the same subscription verified again.
func TestSubscriberRenewsLease(t *testing.T) {
	h := startHub(t, websubhub.Options{})
	waits := make(chan time.Duration, 10)
	fire := make(chan time.Time)
	l := startListener(t, notify.SubscriberOptions{Lease: 100 * time.Second,
		After: func(d time.Duration) <-chan time.Time { waits <- d; return fire }})
	sub := subscribe(t, l, h, changeTopic, time.Time{})
	if d := <-waits; d != 80*time.Second {
		t.Errorf("renewal after %s, want 80s of the 100s lease", d)
	}
	fire <- time.Time{}
	if _, err := h.Await(ctxFor(t), websubhub.Is(websubhub.Subscribed, sub.Callback())); err != nil {
		t.Fatal(err)
	}
	if subs := h.Subscriptions(); len(subs) != 1 {
		t.Errorf("subscriptions after renewal %+v, want the one", subs)
	}
	<-waits // the next renewal is scheduled
}

// Close unsubscribes: the hub verifies it and drops the subscription, and
// the callback answers 410 Gone afterwards.
func TestSubscriberUnsubscribesOnClose(t *testing.T) {
	h := startHub(t, websubhub.Options{})
	l := startListener(t, notify.SubscriberOptions{})
	sub := subscribe(t, l, h, changeTopic, time.Time{})
	if err := l.Close(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Await(ctxFor(t), websubhub.Is(websubhub.Unsubscribed, sub.Callback())); err != nil {
		t.Fatal(err)
	}
	if subs := h.Subscriptions(); len(subs) != 0 {
		t.Errorf("subscriptions %+v after Close", subs)
	}
	resp, err := http.Post(sub.Callback(), "application/xml", strings.NewReader("<urlset/>"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusGone {
		t.Errorf("a delivery after Close: %s, want 410 Gone", resp.Status)
	}
}

// The Subscriber confirms only the (un)subscription it asked for: any
// other verification request gets 404 (WebSub §5.3.1). A hub's denial
// fails Subscribe.
func TestSubscriberVerification(t *testing.T) {
	h := startHub(t, websubhub.Options{})
	l := startListener(t, notify.SubscriberOptions{})
	sub := subscribe(t, l, h, changeTopic, time.Time{})
	base, _ := url.Parse(sub.Callback())
	for name, q := range map[string]url.Values{
		"other topic":       {"hub.mode": {"subscribe"}, "hub.topic": {"https://evil.example/t"}, "hub.challenge": {"c"}, "hub.lease_seconds": {"9"}},
		"nothing pending":   {"hub.mode": {"subscribe"}, "hub.topic": {changeTopic}, "hub.challenge": {"c"}, "hub.lease_seconds": {"9"}},
		"unsubscribe":       {"hub.mode": {"unsubscribe"}, "hub.topic": {changeTopic}, "hub.challenge": {"c"}},
		"unknown callback":  {"hub.mode": {"subscribe"}, "hub.topic": {changeTopic}, "hub.challenge": {"c"}},
		"mode is not known": {"hub.mode": {"publish"}, "hub.topic": {changeTopic}, "hub.challenge": {"c"}},
	} {
		u := *base
		if name == "unknown callback" {
			u.Path += "x"
		}
		u.RawQuery = q.Encode()
		resp, err := http.Get(u.String())
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || string(body) == "c" {
			t.Errorf("%s: %s %q, want 404 without the challenge", name, resp.Status, body)
		}
	}

	denying := startHub(t, websubhub.Options{Deny: func(string) string { return "closed" }})
	if _, err := l.Subscribe(ctxFor(t), denying.URL(), changeTopic, time.Time{}); !errors.Is(err, notify.ErrDenied) || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Subscribe at a denying hub: %v, want ErrDenied with the reason", err)
	}
}

// A topic URI answers with Content-Type application/xml and one Link
// header naming the topic (self) and the hub.
func TestTopicHeaders(t *testing.T) {
	h := notify.TopicHeaders("https://example.org/t.xml", "https://hub.example/")
	want := http.Header{
		"Content-Type": {"application/xml"},
		"Link":         {`<https://example.org/t.xml>; rel="self", <https://hub.example/>; rel="hub"`},
	}
	if len(h) != len(want) || h.Get("Content-Type") != want.Get("Content-Type") || h.Get("Link") != want.Get("Link") {
		t.Errorf("TopicHeaders = %v, want %v", h, want)
	}
}

// TestParseLinkHeader: relations are read from each link of each value,
// a comma inside a URI or a quoted parameter does not split a link, and
// rel may name several relations.
func TestParseLinkHeader(t *testing.T) {
	got := notify.ParseLinkHeader([]string{`<http://a.example/x,y>; rel="self", <http://h.example/>; title="a, b"; rel=hub`, `<http://c.example/>; REL="alternate self"`})
	if strings.Join(got["self"], " ") != "http://a.example/x,y http://c.example/" || strings.Join(got["hub"], " ") != "http://h.example/" ||
		strings.Join(got["alternate"], " ") != "http://c.example/" {
		t.Errorf("parsed %v", got)
	}
}

func TestPingFromConfig(t *testing.T) {
	var p notify.Ping
	for _, v := range []string{"resourcesync", "websub"} {
		if err := p.UnmarshalText([]byte(v)); err != nil || string(p) != v {
			t.Errorf("%s: %v %q", v, err, p)
		}
	}
	if err := p.UnmarshalText([]byte("xmpp")); err == nil || !strings.Contains(err.Error(), `"resourcesync" or "websub"`) {
		t.Errorf("xmpp: %v", err)
	}
}

// A Sender with Until sends only the payloads that end by then (those of
// the builds a deploy published), oldest first, and leaves the newer in
// the outbox.
func TestSendUntil(t *testing.T) {
	h := startHub(t, websubhub.Options{})
	o := notify.OpenOutbox(t.TempDir())
	twoBatches(t, o)
	s := &notify.Sender{Hub: h.URL(), Until: at(150)}
	if n, err := s.Send(ctxFor(t), o); n != 1 || err != nil {
		t.Fatalf("Send = %d, %v; want the first payload sent", n, err)
	}
	if ps := mustPending(t, o); len(ps) != 1 || !ps[0].From.Equal(at(100)) {
		t.Fatalf("pending %+v, want the second payload", ps)
	}
	s.Until = time.Time{}
	if n, err := s.Send(ctxFor(t), o); n != 1 || err != nil {
		t.Fatalf("Send = %d, %v; want the second payload sent", n, err)
	}
}
