package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rsgen/rsgen/rs"
)

// Errors a Subscriber reports of what it ignores.
var (
	// ErrSignature: a delivery without a valid X-Hub-Signature of sha256
	// or better, which the Subscriber ignores (WebSub §7.1.2).
	ErrSignature = errors.New("the delivery's X-Hub-Signature does not verify")
	// ErrTopic: a delivery whose Link header names another topic (rel=
	// "self") than the subscription's, which the Subscriber ignores: a
	// hub that mixes up its callbacks cannot feed a channel another's
	// notifications.
	ErrTopic = errors.New("the delivery's Link header names another topic")
	// ErrDuplicate: a notification seen before, which is dropped.
	ErrDuplicate = errors.New("the notification was delivered before")
	// ErrDenied: the hub refused or ended the subscription (WebSub §5.2).
	ErrDenied = errors.New("the hub denied the subscription")
)

// Delivery is a notification that reached a Subscriber, checked and
// parsed.
type Delivery struct {
	Topic string // the channel, as subscribed to
	*Notification
	// Gap, when not nil, is an interval whose notifications the
	// Subscriber did not receive (or cannot count): the Destination reads
	// the Change Lists covering it.
	Gap *Interval
	// Payload is the notification as the hub delivered it, byte for byte.
	Payload []byte
}

// SubscriberOptions configures a Subscriber.
type SubscriberOptions struct {
	// Callback is the public URL under which the hub reaches the
	// Subscriber's handler; each subscription gets an unguessable URL
	// below it (WebSub §5.1: capability URLs).
	Callback string
	// Deliver is called with each delivery, in order per subscription;
	// the hub waits for its answer until Deliver returns, so Deliver
	// should hand the delivery on rather than apply it.
	Deliver func(Delivery)
	// Problem, when not nil, is told of what the Subscriber ignored or
	// failed at in the background: a delivery (ErrSignature,
	// ErrDuplicate, a payload that does not parse), a renewal, a denial.
	Problem func(topic string, err error)
	// Lease is the lease asked for (the hub's default when zero).
	Lease time.Duration
	// Client makes the requests to the hub (one with a 30-second timeout
	// when nil).
	Client *http.Client
	// After waits for renewals: it returns a channel that receives once d
	// has passed (time.After when nil).
	After func(d time.Duration) <-chan time.Time
}

// Subscriber is the Destination's side of WebSub: an http.Handler for
// the callbacks of its subscriptions.
type Subscriber struct {
	opts SubscriberOptions
	ctx  context.Context // ends with Close
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu   sync.Mutex
	subs map[string]*Subscription // by callback token
}

// NewSubscriber returns a Subscriber with opts; Deliver is required.
func NewSubscriber(opts SubscriberOptions) *Subscriber {
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: 30 * time.Second}
	}
	if opts.After == nil {
		opts.After = time.After
	}
	if opts.Problem == nil {
		opts.Problem = func(string, error) {}
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Subscriber{opts: opts, ctx: ctx, stop: stop, subs: map[string]*Subscription{}}
}

// Subscription is one subscription of a Subscriber to a topic at a hub.
type Subscription struct {
	Hub, Topic string
	callback   string
	token      string
	secret     []byte

	mu     sync.Mutex
	intent *intent // the (un)subscription waiting for the hub's verification
	lease  time.Duration
	seq    *Sequence
	ended  bool // unsubscribed, or denied
}

// intent is a request to the hub that its verification confirms.
type intent struct {
	mode string
	done chan error // receives once: nil when verified
}

// Subscribe subscribes to topic at hub and waits until the hub verified
// it (until ctx ends). since is the time up to which the Destination
// holds every change (its last pull), from which the first notification
// is gap-checked; zero when it knows none. The subscription is renewed
// before its lease ends until Close.
func (s *Subscriber) Subscribe(ctx context.Context, hub, topic string, since time.Time) (*Subscription, error) {
	token := randomHex(16)
	sub := &Subscription{Hub: hub, Topic: topic, token: token, callback: strings.TrimSuffix(s.opts.Callback, "/") + "/" + token,
		secret: []byte(randomHex(32)), seq: NewSequence(since)}
	s.mu.Lock()
	s.subs[token] = sub
	s.mu.Unlock()
	if err := s.request(ctx, sub, "subscribe"); err != nil {
		s.forget(sub)
		return nil, err
	}
	s.wg.Add(1)
	go s.renew(sub)
	return sub, nil
}

// Close unsubscribes every subscription (each waiting for the hub's
// verification until ctx ends) and stops the renewals. The handler
// answers 410 Gone for them afterwards, so that a hub ends any left.
func (s *Subscriber) Close(ctx context.Context) error {
	s.stop()
	s.wg.Wait()
	s.mu.Lock()
	var subs []*Subscription
	for _, sub := range s.subs {
		subs = append(subs, sub)
	}
	s.mu.Unlock()
	var errs []error
	for _, sub := range subs {
		if err := s.request(ctx, sub, "unsubscribe"); err != nil {
			errs = append(errs, err)
		}
		s.forget(sub)
	}
	return errors.Join(errs...)
}

func (s *Subscriber) forget(sub *Subscription) {
	s.mu.Lock()
	delete(s.subs, sub.token)
	s.mu.Unlock()
	sub.mu.Lock()
	sub.ended = true
	sub.mu.Unlock()
}

// request sends a subscription or unsubscription to the hub and waits for
// its verification.
func (s *Subscriber) request(ctx context.Context, sub *Subscription, mode string) error {
	in := &intent{mode: mode, done: make(chan error, 1)}
	sub.mu.Lock()
	sub.intent = in
	sub.mu.Unlock()
	defer func() {
		sub.mu.Lock()
		if sub.intent == in {
			sub.intent = nil
		}
		sub.mu.Unlock()
	}()
	form := url.Values{"hub.mode": {mode}, "hub.topic": {sub.Topic}, "hub.callback": {sub.callback}}
	if mode == "subscribe" {
		form.Set("hub.secret", string(sub.secret))
		if s.opts.Lease > 0 {
			form.Set("hub.lease_seconds", strconv.FormatInt(int64(s.opts.Lease/time.Second), 10))
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.Hub, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("notify: %s to %s at %s: %w", mode, sub.Topic, sub.Hub, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", UserAgent)
	resp, err := s.opts.Client.Do(req)
	if err != nil {
		return fmt.Errorf("notify: %s to %s at %s: %w", mode, sub.Topic, sub.Hub, err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("notify: %s to %s at %s: %w", mode, sub.Topic, sub.Hub, &hubError{status: resp.StatusCode, body: excerpt(body)})
	}
	select {
	case err := <-in.done:
		if err != nil {
			return fmt.Errorf("notify: %s to %s at %s: %w", mode, sub.Topic, sub.Hub, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("notify: %s to %s at %s: the hub did not verify it: %w", mode, sub.Topic, sub.Hub, ctx.Err())
	}
}

// renew subscribes again when four fifths of the lease have passed, and
// retries a failed renewal after a tenth of the lease, until Close.
func (s *Subscriber) renew(sub *Subscription) {
	defer s.wg.Done()
	for {
		sub.mu.Lock()
		lease := sub.lease
		sub.mu.Unlock()
		wait := lease * 4 / 5
		if lease <= 0 {
			return // a lease of no length: nothing to renew
		}
		for {
			select {
			case <-s.opts.After(wait):
			case <-s.ctx.Done():
				return
			}
			err := s.request(s.ctx, sub, "subscribe")
			if err == nil {
				break
			}
			if s.ctx.Err() != nil {
				return
			}
			s.opts.Problem(sub.Topic, fmt.Errorf("renewal: %w", err))
			wait = max(lease/10, time.Second)
		}
	}
}

// ServeHTTP answers the hub at the subscriptions' callbacks: the
// verification of intent (GET) and deliveries (POST).
func (s *Subscriber) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	sub := s.subs[path.Base(r.URL.Path)]
	s.mu.Unlock()
	switch {
	case sub == nil && r.Method == http.MethodPost:
		w.WriteHeader(http.StatusGone) // WebSub §7: the hub may end the subscription
	case sub == nil:
		http.NotFound(w, r)
	case r.Method == http.MethodGet:
		s.verify(w, r.URL.Query(), sub)
	case r.Method == http.MethodPost:
		s.receive(w, r, sub)
	default:
		w.Header().Set("Allow", "GET, POST")
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

// verify answers a verification of intent: the challenge is echoed only
// for the topic and mode the Subscriber asked for, and 404 answers any
// other (WebSub §5.3.1). A denial ends the subscription.
func (s *Subscriber) verify(w http.ResponseWriter, q url.Values, sub *Subscription) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	mode, in := q.Get("hub.mode"), sub.intent
	if q.Get("hub.topic") != sub.Topic {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if mode == "denied" {
		err := fmt.Errorf("%w: %s", ErrDenied, excerpt([]byte(q.Get("hub.reason"))))
		if in != nil {
			in.done <- err
			sub.intent = nil
		} else {
			sub.ended = true
			s.opts.Problem(sub.Topic, err)
		}
		w.WriteHeader(http.StatusOK)
		return
	}
	if in == nil || in.mode != mode || q.Get("hub.challenge") == "" {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if mode == "subscribe" {
		secs, err := strconv.ParseInt(q.Get("hub.lease_seconds"), 10, 64)
		if err != nil || secs <= 0 {
			w.WriteHeader(http.StatusNotFound) // the hub must grant a lease (§5.3)
			return
		}
		sub.lease = time.Duration(secs) * time.Second
	}
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, q.Get("hub.challenge"))
	in.done <- nil
	sub.intent = nil
}

// signatureAlgorithms are the X-Hub-Signature methods accepted: sha256
// or better (WebSub §8.3; sha1 is broken).
var signatureAlgorithms = map[string]func() hash.Hash{
	"sha256": sha256.New, "sha384": sha512.New384, "sha512": sha512.New,
}

// receive takes a delivery: it checks its signature, parses it, drops a
// duplicate, and hands it on with the gap before it. What it ignores is
// still answered 2xx (WebSub §7.1.2 allows it), so that a forger learns
// nothing and a hub does not retry what will not pass.
func (s *Subscriber) receive(w http.ResponseWriter, r *http.Request, sub *Subscription) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, rs.MaxBytes+rs.ReadSlack))
	if err != nil {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		s.opts.Problem(sub.Topic, fmt.Errorf("delivery: %w", err))
		return
	}
	if !validSignature(r.Header.Get("X-Hub-Signature"), sub.secret, body) {
		w.WriteHeader(http.StatusAccepted)
		s.opts.Problem(sub.Topic, ErrSignature)
		return
	}
	if err := checkSelf(r.Header.Values("Link"), sub.Topic); err != nil {
		w.WriteHeader(http.StatusAccepted)
		s.opts.Problem(sub.Topic, err)
		return
	}
	n, err := Parse(bytes.NewReader(body))
	if err != nil {
		w.WriteHeader(http.StatusAccepted)
		s.opts.Problem(sub.Topic, err)
		return
	}
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.ended {
		w.WriteHeader(http.StatusGone)
		return
	}
	dup, gap := sub.seq.Observe(n.From, n.Until, sha256.Sum256(body))
	if dup {
		w.WriteHeader(http.StatusAccepted)
		s.opts.Problem(sub.Topic, fmt.Errorf("notification [%s, %s]: %w", fmtTime(n.From), fmtTime(n.Until), ErrDuplicate))
		return
	}
	// Deliver runs under the subscription's lock, so that deliveries keep
	// the order their sequence was checked in.
	s.opts.Deliver(Delivery{Topic: sub.Topic, Notification: n, Gap: gap, Payload: body})
	w.WriteHeader(http.StatusNoContent)
}

// checkSelf returns ErrTopic when the Link headers of a delivery name a
// topic (rel="self") and none is topic. WebSub §7 has the hub send it;
// a delivery without one is taken as the subscription's, which its
// callback URL and signature already identify.
func checkSelf(links []string, topic string) error {
	self := ParseLinkHeader(links)[rs.RelSelf]
	if len(self) == 0 || slices.Contains(self, topic) {
		return nil
	}
	return fmt.Errorf("%w: %s, not %s", ErrTopic, excerpt([]byte(strings.Join(self, " "))), topic)
}

// validSignature reports whether header, an X-Hub-Signature value
// "METHOD=HEX", is the HMAC of body keyed with secret by a method of
// sha256 or better; the comparison takes constant time.
func validSignature(header string, secret, body []byte) bool {
	method, sig, ok := strings.Cut(header, "=")
	newHash := signatureAlgorithms[strings.ToLower(method)]
	if !ok || newHash == nil {
		return false
	}
	want, err := hex.DecodeString(sig)
	if err != nil {
		return false
	}
	m := hmac.New(newHash, secret)
	m.Write(body)
	return hmac.Equal(m.Sum(nil), want)
}

// randomHex returns n random bytes, hex-encoded.
func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}
