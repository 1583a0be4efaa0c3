package websubhub

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Options configures a Hub. The zero Options is a hub with the defaults.
type Options struct {
	// URL is the hub's own URL, named in the rel=hub Link header of
	// every distribution. Start sets it; a hub served otherwise must be
	// given it.
	URL string
	// Algorithm signs distributions to subscriptions with a secret:
	// "sha1", "sha256" (the default), "sha384" or "sha512".
	Algorithm string
	// DefaultLease is the lease of a subscription that asks for none (10
	// days, the Recommendation's suggestion, when zero); MinLease and
	// MaxLease bound the leases asked for (1 second and 30 days when zero).
	DefaultLease, MinLease, MaxLease time.Duration
	// Attempts is how many times a distribution is tried before the hub
	// gives up on it (5 when zero); Backoff is the wait before retry n
	// (from 1; 100 ms doubled each time when nil).
	Attempts int
	Backoff  func(n int) time.Duration
	// Now is the hub's clock for leases (time.Now when nil).
	Now func() time.Time
	// Sleep waits before a retry; it returns early with ctx's error (a
	// timer when nil).
	Sleep func(ctx context.Context, d time.Duration) error
	// Deny, when it returns a reason, refuses a subscription to topic:
	// the hub then tells the callback hub.mode=denied (§5.2).
	Deny func(topic string) string
	// Client makes the hub's requests: verifications, fetches of topics,
	// distributions (a client with a 10-second timeout when nil).
	Client *http.Client
}

// Hub is a WebSub hub (see the package comment). It is an http.Handler
// for the hub URL; Close stops its background work.
type Hub struct {
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu   sync.Mutex
	subs map[subKey]*subscription
	log  eventLog
}

// subKey is a subscription's unique key (§1): its topic and callback.
type subKey struct{ topic, callback string }

// subscription is a verified subscription.
type subscription struct {
	subKey
	secret  string
	expires time.Time
	queue   []message // distributions not yet made, in publication order
	sending bool      // a goroutine is draining queue
}

// message is one content distribution: the topic's content.
type message struct {
	contentType string
	body        []byte
}

// New returns a hub with opts, defaults filled in.
func New(opts Options) *Hub {
	if opts.Algorithm == "" {
		opts.Algorithm = "sha256"
	}
	if _, ok := algorithms[opts.Algorithm]; !ok {
		panic(fmt.Sprintf("websubhub: unknown algorithm %q", opts.Algorithm))
	}
	opts.DefaultLease = orDefault(opts.DefaultLease, 10*24*time.Hour)
	opts.MinLease = orDefault(opts.MinLease, time.Second)
	opts.MaxLease = orDefault(opts.MaxLease, 30*24*time.Hour)
	if opts.Attempts <= 0 {
		opts.Attempts = 5
	}
	if opts.Backoff == nil {
		opts.Backoff = func(n int) time.Duration { return 100 * time.Millisecond << (n - 1) }
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: 10 * time.Second}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Hub{opts: opts, ctx: ctx, cancel: cancel, subs: map[subKey]*subscription{}}
}

// Start serves a new hub on a loopback port for the duration of the test
// tb, and returns it with its URL set.
func Start(tb testing.TB, opts Options) *Hub {
	tb.Helper()
	h := New(opts)
	srv := httptest.NewServer(h)
	h.opts.URL = srv.URL + "/"
	tb.Cleanup(func() {
		srv.Close() // first, so that no request starts background work after Close
		h.Close()
	})
	return h
}

// URL returns the hub's URL.
func (h *Hub) URL() string { return h.opts.URL }

// Close stops the verifications and distributions under way and waits for
// them to end.
func (h *Hub) Close() {
	h.cancel()
	h.wg.Wait()
}

// Subscription describes a live subscription, for tests.
type Subscription struct {
	Topic, Callback string
	Secret          bool // it was made with a secret
	Expires         time.Time
}

// Subscriptions returns the subscriptions whose lease has not ended.
func (h *Hub) Subscriptions() []Subscription {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.opts.Now()
	var out []Subscription
	for _, s := range h.subs {
		if s.expires.After(now) {
			out = append(out, Subscription{Topic: s.topic, Callback: s.callback, Secret: s.secret != "", Expires: s.expires})
		}
	}
	return out
}

// ServeHTTP answers the hub URL: subscriptions, unsubscriptions and
// publications, as form POSTs, and the direct submission of a payload.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		httpError(w, http.StatusMethodNotAllowed, "the hub takes POST requests")
		return
	}
	if isForm(r) {
		h.serveForm(w, r)
		return
	}
	h.serveDirect(w, r)
}

// goBackground runs fn in the background; Close waits for it.
func (h *Hub) goBackground(fn func()) {
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		fn()
	}()
}

func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintln(w, msg)
}

// randomToken returns a random string of n bytes, hex-encoded.
func randomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
