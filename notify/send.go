package notify

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/rsgen/rsgen/rs"
)

// Ping is how a Sender submits a notification to the hub.
type Ping string

// The two ways.
const (
	// PingResourceSync POSTs the payload itself, with Content-Type
	// application/xml and the Link header naming topic and hub, as the
	// ResourceSync notification specifications do.
	PingResourceSync Ping = "resourcesync"
	// PingWebSub sends a WebSub publish ping (hub.mode=publish with
	// hub.topic and hub.url, since hubs differ in which they read), for
	// hubs that fetch the topic URI themselves.
	PingWebSub Ping = "websub"
)

// UnmarshalText reads a Ping from configuration.
func (p *Ping) UnmarshalText(text []byte) error {
	switch v := Ping(strings.TrimSpace(string(text))); v {
	case PingResourceSync, PingWebSub:
		*p = v
		return nil
	}
	return fmt.Errorf("ping %q is not %q or %q", text, PingResourceSync, PingWebSub)
}

// Sender submits the outbox's payloads to a hub.
type Sender struct {
	Hub  string // the hub's URL
	Ping Ping   // PingResourceSync when ""
	// Client makes the requests (one with a 60-second timeout when nil).
	Client *http.Client
	// Attempts is how many times a submission is tried (5 when zero);
	// Backoff is the wait before retry n, from 1 (1 s doubled each time,
	// at most 1 minute, when nil); Sleep waits, returning early with
	// ctx's error (a timer when nil).
	Attempts int
	// Until, when not zero, sends only the payloads whose until is not
	// after it: those of the builds a deploy published, not of a build
	// that ran meanwhile.
	Until   time.Time
	Backoff func(n int) time.Duration
	Sleep   func(ctx context.Context, d time.Duration) error
	// Sent, when not nil, is told of each payload after it left the
	// outbox; Failed of each failed attempt.
	Sent   func(Pending)
	Failed func(p Pending, attempt int, err error)
}

// SendError is Send's error when the hub did not take a notification:
// it and the Left - 1 after it stay in the outbox for the next run.
type SendError struct {
	Hub      string
	Pending  Pending
	Attempts int
	Left     int // notifications left in the outbox
	Err      error
}

func (e *SendError) Error() string {
	return fmt.Sprintf("notify: the hub %s did not take notification %d of %s after %d attempts; %d notifications stay in the outbox for the next run: %v",
		e.Hub, e.Pending.Seq, e.Pending.Topic, e.Attempts, e.Left, e.Err)
}

func (e *SendError) Unwrap() error { return e.Err }

// hubError is a hub's answer other than 2xx.
type hubError struct {
	status int
	body   string
}

func (e *hubError) Error() string {
	if e.body == "" {
		return fmt.Sprintf("the hub answered %d %s", e.status, http.StatusText(e.status))
	}
	return fmt.Sprintf("the hub answered %d %s: %s", e.status, http.StatusText(e.status), e.body)
}

// retryable reports whether a failure may pass: a transport error, a
// timeout, too many requests, or a server error. Any other 4xx means the
// hub refuses the request, which sending it again will not change.
func (e *hubError) retryable() bool {
	return e.status >= 500 || e.status == http.StatusRequestTimeout || e.status == http.StatusTooManyRequests
}

// Send submits the pending payloads, oldest first, each removed from the
// outbox when the hub answered 2xx. It returns how many were sent; when
// the hub does not take one, it stops there with a *SendError.
func (s *Sender) Send(ctx context.Context, o *Outbox) (int, error) {
	pending, err := o.Pending()
	if err != nil {
		return 0, err
	}
	if !s.Until.IsZero() {
		pending = slices.DeleteFunc(pending, func(p Pending) bool { return p.Until.After(s.Until) })
	}
	sent := 0
	for i := 0; i < len(pending); {
		// A publish ping delivers what the topic serves: the channel's
		// newest payload, which stands for the older ones too.
		batch := pending[i : i+1]
		if s.Ping == PingWebSub {
			batch = sameTopic(pending[i:])
		}
		p := batch[len(batch)-1]
		if attempts, err := s.submit(ctx, p); err != nil {
			return sent, &SendError{Hub: s.Hub, Pending: pending[i], Attempts: attempts, Left: len(pending) - i, Err: err}
		}
		for _, q := range batch {
			if err := o.Remove(q); err != nil {
				return sent, err
			}
			sent++
			if s.Sent != nil {
				s.Sent(q)
			}
		}
		i += len(batch)
	}
	return sent, nil
}

// sameTopic returns the leading payloads of ps that share the first one's
// topic.
func sameTopic(ps []Pending) []Pending {
	n := 1
	for n < len(ps) && ps[n].Topic == ps[0].Topic {
		n++
	}
	return ps[:n]
}

// submit submits p, retrying with backoff; it returns the attempts made.
func (s *Sender) submit(ctx context.Context, p Pending) (int, error) {
	attempts := s.Attempts
	if attempts <= 0 {
		attempts = 5
	}
	for n := 1; ; n++ {
		err := s.request(ctx, p)
		if err == nil {
			return n, nil
		}
		if s.Failed != nil {
			s.Failed(p, n, err)
		}
		he, isHub := err.(*hubError)
		if n >= attempts || ctx.Err() != nil || (isHub && !he.retryable()) {
			return n, err
		}
		if err := s.sleep(ctx, s.backoff(n)); err != nil {
			return n, err
		}
	}
}

// request makes one submission of p.
func (s *Sender) request(ctx context.Context, p Pending) error {
	req, err := s.newRequest(ctx, p)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", UserAgent)
	client := s.Client
	if client == nil {
		client = &http.Client{Timeout: 60 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &hubError{status: resp.StatusCode, body: excerpt(body)}
	}
	return nil
}

// newRequest returns the request that submits p: its payload, or a
// publish ping naming its topic.
func (s *Sender) newRequest(ctx context.Context, p Pending) (*http.Request, error) {
	if s.Ping == PingWebSub {
		form := url.Values{"hub.mode": {"publish"}, "hub.topic": {p.Topic}, "hub.url": {p.Topic}}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Hub, strings.NewReader(form.Encode()))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		return req, err
	}
	// The payload is streamed from its file (up to 50 MB); the transport
	// closes it.
	f, err := os.Open(p.Path)
	if err != nil {
		return nil, fmt.Errorf("notify: outbox: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("notify: outbox: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Hub, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	req.ContentLength = info.Size()
	req.Header.Set("Content-Type", rs.NotificationMediaType)
	req.Header.Set("Link", LinkHeader(p.Topic, s.Hub))
	return req, nil
}

func (s *Sender) backoff(n int) time.Duration {
	if s.Backoff != nil {
		return s.Backoff(n)
	}
	return min(time.Second<<(n-1), time.Minute)
}

func (s *Sender) sleep(ctx context.Context, d time.Duration) error {
	if s.Sleep != nil {
		return s.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// excerpt returns the first line of a hub's answer, at most 200
// characters, printable, for an error message.
func excerpt(body []byte) string {
	s, _, _ := strings.Cut(string(body), "\n")
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return -1
	}, s)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.TrimSpace(s)
}
