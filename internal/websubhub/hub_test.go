package websubhub_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"hash"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsgen/rsgen/internal/websubhub"
)

// The tests below follow the hub tests of websub.rocks, the WebSub test
// suite (100 to 106), each adapted to run against a hub on loopback, then
// test what the Recommendation asks beyond them.

// subscriber is a WebSub subscriber written for these tests: it confirms
// the verifications it is told to, and records what reaches its callback.
type subscriber struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	verifies []url.Values // the query of each verification request
	answer   func(q url.Values) (int, string)
	posts    chan delivery
}

type delivery struct {
	header http.Header
	body   []byte
	query  url.Values
}

// newSubscriber starts a subscriber that echoes every challenge.
func newSubscriber(t *testing.T) *subscriber {
	s := &subscriber{t: t, posts: make(chan delivery, 100),
		answer: func(q url.Values) (int, string) { return 200, q.Get("hub.challenge") }}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *subscriber) serve(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		q := r.URL.Query()
		s.mu.Lock()
		s.verifies = append(s.verifies, q)
		answer := s.answer
		s.mu.Unlock()
		code, body := answer(q)
		w.WriteHeader(code)
		io.WriteString(w, body)
	case http.MethodPost:
		body, _ := io.ReadAll(r.Body)
		s.posts <- delivery{header: r.Header.Clone(), body: body, query: r.URL.Query()}
		w.WriteHeader(http.StatusNoContent)
	}
}

// callback returns the callback URL with path p.
func (s *subscriber) callback(p string) string { return s.srv.URL + p }

func (s *subscriber) lastVerify() url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.verifies) == 0 {
		s.t.Fatal("no verification request reached the subscriber")
	}
	return s.verifies[len(s.verifies)-1]
}

// next returns the next distribution that reached the subscriber.
func (s *subscriber) next(ctx context.Context) delivery {
	s.t.Helper()
	select {
	case d := <-s.posts:
		return d
	case <-ctx.Done():
		s.t.Fatal("no distribution reached the subscriber")
		return delivery{}
	}
}

// topicServer serves a topic with the given Content-Type and body, and the
// Link headers of discovery (§4).
func topicServer(t *testing.T, hubURL, contentType string, body *string) string {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Link", "<"+srv.URL+r.URL.Path+`>; rel="self"`)
		w.Header().Add("Link", "<"+hubURL+`>; rel="hub"`)
		w.Header().Set("Content-Type", contentType)
		io.WriteString(w, *body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/topic"
}

// ctxFor bounds a test's waiting: a hub that never does what a test awaits
// fails it instead of hanging.
func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func postForm(t *testing.T, hubURL string, form url.Values) (int, string) {
	t.Helper()
	resp, err := http.PostForm(hubURL, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// subscribe subscribes callback to topic with the extra parameters and
// waits until the hub verified it.
func subscribe(t *testing.T, h *websubhub.Hub, topic, callback string, extra url.Values) {
	t.Helper()
	form := url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {callback}}
	for k, v := range extra {
		form[k] = v
	}
	if code, body := postForm(t, h.URL(), form); code != http.StatusAccepted {
		t.Fatalf("subscribe: %d %s, want 202 Accepted", code, body)
	}
	if _, err := h.Await(ctxFor(t), websubhub.Is(websubhub.Subscribed, callback)); err != nil {
		t.Fatal(err)
	}
}

func publish(t *testing.T, h *websubhub.Hub, form url.Values) {
	t.Helper()
	form.Set("hub.mode", "publish")
	if code, body := postForm(t, h.URL(), form); code/100 != 2 {
		t.Fatalf("publish: %d %s", code, body)
	}
}

// checkDistribution checks a distribution of the topic: its body and
// Content-Type are the topic's, and one Link header names the topic
// (rel=self) and the hub (rel=hub) (§7).
func checkDistribution(t *testing.T, d delivery, h *websubhub.Hub, topic, contentType, body string) {
	t.Helper()
	if string(d.body) != body {
		t.Errorf("body %q, want the topic's %q", d.body, body)
	}
	if got := d.header.Get("Content-Type"); got != contentType {
		t.Errorf("Content-Type %q, want the topic's %q", got, contentType)
	}
	want := `<` + topic + `>; rel="self", <` + h.URL() + `>; rel="hub"`
	if links := d.header.Values("Link"); len(links) != 1 || links[0] != want {
		t.Errorf("Link %q, want one header %q", links, want)
	}
}

// 100: a typical subscriber request, with only hub.mode, hub.topic and
// hub.callback: verified with hub.lease_seconds, and notifications come
// with no signature.
func TestHub100TypicalSubscriber(t *testing.T) {
	h := websubhub.Start(t, websubhub.Options{})
	content := "<html><body>post 1</body></html>"
	topic := topicServer(t, h.URL(), "text/html; charset=utf-8", &content)
	sub := newSubscriber(t)
	subscribe(t, h, topic, sub.callback("/cb/100"), nil)

	q := sub.lastVerify()
	if q.Get("hub.mode") != "subscribe" || q.Get("hub.topic") != topic || q.Get("hub.challenge") == "" {
		t.Errorf("verification query %v: want hub.mode=subscribe, the topic and a challenge", q)
	}
	if q.Get("hub.lease_seconds") != "864000" {
		t.Errorf("hub.lease_seconds %q, want the default 10 days (864000)", q.Get("hub.lease_seconds"))
	}
	// websub.rocks publishes with hub.topic alone.
	publish(t, h, url.Values{"hub.topic": {topic}})
	d := sub.next(ctxFor(t))
	checkDistribution(t, d, h, topic, "text/html; charset=utf-8", content)
	if sig := d.header.Get("X-Hub-Signature"); sig != "" {
		t.Errorf("X-Hub-Signature %q on a subscription without a secret", sig)
	}
}

// 101: the subscriber includes hub.secret; notifications are signed with
// it, by each recognized algorithm (§7.1.1).
func TestHub101SubscriberSecret(t *testing.T) {
	for alg, newHash := range map[string]func() hash.Hash{
		"sha1": sha1.New, "sha256": sha256.New, "sha384": sha512.New384, "sha512": sha512.New,
	} {
		t.Run(alg, func(t *testing.T) {
			h := websubhub.Start(t, websubhub.Options{Algorithm: alg})
			content := "<feed>1</feed>"
			topic := topicServer(t, h.URL(), "application/atom+xml", &content)
			sub := newSubscriber(t)
			secret := "s3cret-for-101"
			subscribe(t, h, topic, sub.callback("/cb/101"), url.Values{"hub.secret": {secret}})
			// hub.url alone, the other form hubs take.
			publish(t, h, url.Values{"hub.url": {topic}})
			d := sub.next(ctxFor(t))
			checkDistribution(t, d, h, topic, "application/atom+xml", content)
			m := hmac.New(newHash, []byte(secret))
			m.Write([]byte(content))
			if want := alg + "=" + hex.EncodeToString(m.Sum(nil)); d.header.Get("X-Hub-Signature") != want {
				t.Errorf("X-Hub-Signature %q, want %q", d.header.Get("X-Hub-Signature"), want)
			}
		})
	}
}

// 102: parameters the hub does not know, hub.* or not, are ignored.
func TestHub102AdditionalParameters(t *testing.T) {
	h := websubhub.Start(t, websubhub.Options{})
	content := "<p>102</p>"
	topic := topicServer(t, h.URL(), "text/html", &content)
	sub := newSubscriber(t)
	subscribe(t, h, topic, sub.callback("/cb/102"), url.Values{"foo": {"bar"}, "hub.foo": {"hub.bar"}})
	publish(t, h, url.Values{"hub.topic": {topic}, "hub.url": {topic}})
	checkDistribution(t, sub.next(ctxFor(t)), h, topic, "text/html", content)
}

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// 103: re-subscribing before the lease ends renews the one subscription of
// that topic and callback (§5.1), with the lease counted from the new
// verification; the lease is enforced once it ends (§5.3.1).
func TestHub103ResubscribeBeforeExpiry(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	h := websubhub.Start(t, websubhub.Options{Now: clock.Now})
	content := "<p>103</p>"
	topic := topicServer(t, h.URL(), "text/html", &content)
	sub := newSubscriber(t)
	cb := sub.callback("/cb/103")
	lease := url.Values{"hub.lease_seconds": {"100"}}
	subscribe(t, h, topic, cb, lease)
	if got := sub.lastVerify().Get("hub.lease_seconds"); got != "100" {
		t.Fatalf("hub.lease_seconds %q, want the 100 asked for", got)
	}
	clock.Advance(60 * time.Second)
	subscribe(t, h, topic, cb, lease)
	if subs := h.Subscriptions(); len(subs) != 1 || !subs[0].Expires.Equal(clock.Now().Add(100*time.Second)) {
		t.Fatalf("subscriptions %+v: want one, renewed until %s", subs, clock.Now().Add(100*time.Second))
	}

	clock.Advance(60 * time.Second) // past the first lease, within the renewed one
	publish(t, h, url.Values{"hub.topic": {topic}})
	checkDistribution(t, sub.next(ctxFor(t)), h, topic, "text/html", content)

	clock.Advance(60 * time.Second) // past the renewed lease
	publish(t, h, url.Values{"hub.topic": {topic}})
	if _, err := h.Await(ctxFor(t), websubhub.Is(websubhub.Expired, cb)); err != nil {
		t.Fatal(err)
	}
	h.Close()
	if len(sub.posts) != 0 {
		t.Errorf("an expired subscription got %d distributions", len(sub.posts))
	}
}

// 104: an unsubscription is verified with hub.mode=unsubscribe and then
// nothing more is delivered; a subscription beside it still gets the
// content.
func TestHub104Unsubscribe(t *testing.T) {
	h := websubhub.Start(t, websubhub.Options{})
	content := "<p>104</p>"
	topic := topicServer(t, h.URL(), "text/html", &content)
	gone, stays := newSubscriber(t), newSubscriber(t)
	subscribe(t, h, topic, gone.callback("/cb/104"), nil)
	subscribe(t, h, topic, stays.callback("/cb/104"), nil)

	form := url.Values{"hub.mode": {"unsubscribe"}, "hub.topic": {topic}, "hub.callback": {gone.callback("/cb/104")}}
	if code, body := postForm(t, h.URL(), form); code != http.StatusAccepted {
		t.Fatalf("unsubscribe: %d %s", code, body)
	}
	if _, err := h.Await(ctxFor(t), websubhub.Is(websubhub.Unsubscribed, gone.callback("/cb/104"))); err != nil {
		t.Fatal(err)
	}
	if q := gone.lastVerify(); q.Get("hub.mode") != "unsubscribe" || q.Get("hub.topic") != topic || q.Get("hub.challenge") == "" {
		t.Errorf("verification query %v: want hub.mode=unsubscribe, the topic and a challenge", q)
	}
	publish(t, h, url.Values{"hub.topic": {topic}})
	stays.next(ctxFor(t))
	h.Close() // every distribution under way has ended
	if len(gone.posts) != 0 {
		t.Errorf("an unsubscribed callback got %d distributions", len(gone.posts))
	}
}

// 105 and 106: content that is neither HTML nor XML is delivered as it is,
// with its Content-Type.
func TestHub105106PlaintextAndJSON(t *testing.T) {
	for _, tc := range []struct{ name, contentType, content string }{
		{"105-plaintext", "text/plain", "line 1\nline 2 — ünïcode\n"},
		{"106-json", "application/json", `{"items":[{"id":1,"text":"a"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := websubhub.Start(t, websubhub.Options{})
			content := tc.content
			topic := topicServer(t, h.URL(), tc.contentType, &content)
			sub := newSubscriber(t)
			subscribe(t, h, topic, sub.callback("/cb"), nil)
			publish(t, h, url.Values{"hub.topic": {topic}})
			checkDistribution(t, sub.next(ctxFor(t)), h, topic, tc.contentType, content)
		})
	}
}

// The ResourceSync notification specifications' submission: the payload
// is POSTed with its Content-Type and a Link header naming the topic; the
// hub distributes it as it came, without fetching anything.
func TestHubDirectPayload(t *testing.T) {
	h := websubhub.Start(t, websubhub.Options{})
	sub := newSubscriber(t)
	topic := "http://source.example/resourcesync/notification/set1.xml" // never fetched
	subscribe(t, h, topic, sub.callback("/cb"), url.Values{"hub.secret": {"k"}})

	payload := `<?xml version="1.0" encoding="UTF-8"?>` + "\n<urlset/>\n"
	req, _ := http.NewRequest(http.MethodPost, h.URL(), strings.NewReader(payload))
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("Link", `<`+topic+`>; rel="self", <`+h.URL()+`>; rel="hub"`)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("direct payload: %s, want 2xx", resp.Status)
	}
	d := sub.next(ctxFor(t))
	checkDistribution(t, d, h, topic, "application/xml", payload)
	m := hmac.New(sha256.New, []byte("k"))
	m.Write([]byte(payload))
	if want := "sha256=" + hex.EncodeToString(m.Sum(nil)); d.header.Get("X-Hub-Signature") != want {
		t.Errorf("X-Hub-Signature %q, want %q", d.header.Get("X-Hub-Signature"), want)
	}
}

// A verification that is not answered with 2xx and the challenge leaves
// the subscriptions as they were (§5.1, §5.3.1); every challenge is
// different (§8.2: random and single-use).
func TestHubVerificationFails(t *testing.T) {
	h := websubhub.Start(t, websubhub.Options{})
	topic := "http://source.example/topic"
	sub := newSubscriber(t)
	var challenges []string
	for i, answer := range []func(q url.Values) (int, string){
		func(q url.Values) (int, string) { return 404, "" },
		func(q url.Values) (int, string) { return 200, "not the challenge" },
		func(q url.Values) (int, string) { return 302, q.Get("hub.challenge") },
	} {
		sub.mu.Lock()
		sub.answer = answer
		sub.mu.Unlock()
		cb := sub.callback("/cb")
		postForm(t, h.URL(), url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {cb}})
		if _, err := h.Await(ctxFor(t), websubhub.Is(websubhub.VerifyFailed, cb)); err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		challenges = append(challenges, sub.lastVerify().Get("hub.challenge"))
	}
	if subs := h.Subscriptions(); len(subs) != 0 {
		t.Errorf("subscriptions %+v after failed verifications", subs)
	}
	if challenges[0] == challenges[1] || challenges[1] == challenges[2] || len(challenges[0]) < 32 {
		t.Errorf("challenges %q: want each random and new", challenges)
	}
}

// The callback's own query string is kept, and the hub's parameters are
// appended to it (§5.1.1); distributions go to the exact callback.
func TestHubCallbackQueryKept(t *testing.T) {
	h := websubhub.Start(t, websubhub.Options{})
	sub := newSubscriber(t)
	topic := "http://source.example/topic"
	subscribe(t, h, topic, sub.callback("/cb?id=7&hub.mode=mine"), nil)
	q := sub.lastVerify()
	if q.Get("id") != "7" || q["hub.mode"][0] != "mine" || q["hub.mode"][1] != "subscribe" {
		t.Errorf("verification query %v: want id=7 and hub.mode=mine kept, the hub's appended", q)
	}
	postDirect(t, h, topic, "x")
	if d := sub.next(ctxFor(t)); d.query.Get("id") != "7" {
		t.Errorf("distribution query %v, want id=7", d.query)
	}
}

func postDirect(t *testing.T, h *websubhub.Hub, topic, payload string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.URL(), strings.NewReader(payload))
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("Link", `<`+topic+`>; rel="self", <`+h.URL()+`>; rel="hub"`)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("direct payload: %s", resp.Status)
	}
}

// A failed distribution is retried with growing waits until it succeeds,
// and given up after Attempts; deliveries keep publication order.
func TestHubRetries(t *testing.T) {
	var mu sync.Mutex
	var waits []time.Duration
	h := websubhub.Start(t, websubhub.Options{Attempts: 3, Sleep: func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, d)
		return nil
	}})
	topic := "http://source.example/topic"
	var failures int // the callback's remaining failures
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			io.WriteString(w, r.URL.Query().Get("hub.challenge"))
			return
		}
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if failures > 0 {
			failures--
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		got = append(got, string(body))
	}))
	defer srv.Close()
	subscribe(t, h, topic, srv.URL, nil)

	mu.Lock()
	failures = 2
	mu.Unlock()
	postDirect(t, h, topic, "one")
	postDirect(t, h, topic, "two")
	for range 2 {
		if _, err := h.Await(ctxFor(t), websubhub.Is(websubhub.Delivered, srv.URL)); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	if strings.Join(got, ",") != "one,two" || len(waits) != 2 || waits[1] <= waits[0] {
		t.Errorf("delivered %q after waits %v: want one,two in order after two growing waits", got, waits)
	}
	failures = 3
	mu.Unlock()
	postDirect(t, h, topic, "three")
	if ev, err := h.Await(ctxFor(t), websubhub.Is(websubhub.GaveUp, srv.URL)); err != nil || ev.Attempt != 3 || ev.Status != 503 {
		t.Fatalf("gave up: %v %v, want after 3 attempts with 503", ev, err)
	}
	if len(h.Subscriptions()) != 1 {
		t.Error("a subscription whose delivery failed was dropped before its lease ended (§7)")
	}
}

// A callback answering 410 Gone ends its subscription (§7).
func TestHubGone(t *testing.T) {
	h := websubhub.Start(t, websubhub.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			io.WriteString(w, r.URL.Query().Get("hub.challenge"))
			return
		}
		w.WriteHeader(http.StatusGone)
	}))
	defer srv.Close()
	topic := "http://source.example/topic"
	subscribe(t, h, topic, srv.URL, nil)
	postDirect(t, h, topic, "x")
	if _, err := h.Await(ctxFor(t), websubhub.Is(websubhub.Gone, srv.URL)); err != nil {
		t.Fatal(err)
	}
	if subs := h.Subscriptions(); len(subs) != 0 {
		t.Errorf("subscriptions %+v after 410 Gone", subs)
	}
}

// A subscription the hub refuses is told so with hub.mode=denied and a
// reason (§5.2).
func TestHubDenied(t *testing.T) {
	h := websubhub.Start(t, websubhub.Options{Deny: func(topic string) string { return "not this topic" }})
	sub := newSubscriber(t)
	cb := sub.callback("/cb")
	postForm(t, h.URL(), url.Values{"hub.mode": {"subscribe"}, "hub.topic": {"http://x.example/t"}, "hub.callback": {cb}})
	if _, err := h.Await(ctxFor(t), websubhub.Is(websubhub.Denied, cb)); err != nil {
		t.Fatal(err)
	}
	if q := sub.lastVerify(); q.Get("hub.mode") != "denied" || q.Get("hub.topic") != "http://x.example/t" || q.Get("hub.reason") != "not this topic" {
		t.Errorf("denial query %v", q)
	}
	if len(h.Subscriptions()) != 0 {
		t.Error("a denied subscription was made")
	}
}

// Leases asked for are kept within the hub's bounds, and the verification
// says which lease was granted.
func TestHubLeaseBounds(t *testing.T) {
	h := websubhub.Start(t, websubhub.Options{MinLease: time.Minute, MaxLease: time.Hour})
	sub := newSubscriber(t)
	for asked, granted := range map[string]string{"5": "60", "7200": "3600", "600": "600"} {
		subscribe(t, h, "http://x.example/t", sub.callback("/cb"), url.Values{"hub.lease_seconds": {asked}})
		if got := sub.lastVerify().Get("hub.lease_seconds"); got != granted {
			t.Errorf("asked %s seconds: granted %s, want %s", asked, got, granted)
		}
	}
}

// Bad requests get a 4xx with a plain-text reason, before any
// verification (§5.1.2).
func TestHubBadRequests(t *testing.T) {
	h := websubhub.Start(t, websubhub.Options{})
	cb, topic := "http://127.0.0.1:1/cb", "http://x.example/t"
	for _, tc := range []struct {
		name string
		form url.Values
		want string
	}{
		{"no mode", url.Values{"hub.topic": {topic}, "hub.callback": {cb}}, "hub.mode is missing"},
		{"bad mode", url.Values{"hub.mode": {"subscribe-all"}, "hub.topic": {topic}, "hub.callback": {cb}}, "is not subscribe"},
		{"no callback", url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}}, "hub.callback is missing"},
		{"relative callback", url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {"/cb"}}, "not an absolute"},
		{"no topic", url.Values{"hub.mode": {"unsubscribe"}, "hub.callback": {cb}}, "hub.topic is missing"},
		{"long secret", url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {cb}, "hub.secret": {strings.Repeat("s", 200)}}, "less than 200 bytes"},
		{"bad lease", url.Values{"hub.mode": {"subscribe"}, "hub.topic": {topic}, "hub.callback": {cb}, "hub.lease_seconds": {"-1"}}, "positive decimal integer"},
		{"publish nothing", url.Values{"hub.mode": {"publish"}}, "hub.topic or hub.url"},
		{"publish bad url", url.Values{"hub.mode": {"publish"}, "hub.url": {"ftp://x/"}}, "not an absolute"},
	} {
		code, body := postForm(t, h.URL(), tc.form)
		if code != http.StatusBadRequest || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %q, want 400 saying %q", tc.name, code, body, tc.want)
		}
	}
	for _, tc := range []struct{ name, contentType, link, body string }{
		{"no self link", "application/xml", `<http://h/>; rel="hub"`, "<x/>"},
		{"empty payload", "application/xml", `<` + topic + `>; rel="self"`, ""},
	} {
		req, _ := http.NewRequest(http.MethodPost, h.URL(), strings.NewReader(tc.body))
		req.Header.Set("Content-Type", tc.contentType)
		req.Header.Set("Link", tc.link)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %s, want 400", tc.name, resp.Status)
		}
	}
	resp, err := http.Get(h.URL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %s, want 405", resp.Status)
	}
	if ev := h.Events(); strings.Contains(ev, "subscribed") || strings.Contains(ev, "verify") {
		t.Errorf("a bad request was verified:\n%s", ev)
	}
}
