package destination

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// StatusError is an HTTP response that is not a success.
type StatusError struct {
	URL        string
	Status     string
	Code       int
	RetryAfter time.Duration // what the response asked for, when it did
}

func (e *StatusError) Error() string { return fmt.Sprintf("GET %s: %s", e.URL, e.Status) }

// StallError reports a response whose body stopped coming.
type StallError struct {
	URL   string
	After time.Duration
}

func (e *StallError) Error() string {
	return fmt.Sprintf("GET %s: no byte came for %s (a stalled response)", e.URL, e.After)
}

// client fetches for a sync, politely: a bound on connections per host,
// keep-alive, an optional rate, a User-Agent naming rsgen, retries with
// exponential backoff, and Retry-After honoured on 429 and 503, for the
// host as a whole.
type client struct {
	http      *http.Client
	userAgent string
	maps      []Map
	retries   int
	backoff   time.Duration // the first wait between tries; doubled each time
	maxWait   time.Duration // the longest Retry-After honoured
	stall     time.Duration // a response that sends nothing for this long fails
	rate      *rateLimiter

	mu     sync.Mutex
	paused map[string]time.Time // host → no request before

	requests atomic.Int64
	bytes    atomic.Int64
}

func newClient(o *Options) *client {
	c := &client{userAgent: o.UserAgent, maps: o.Maps, retries: max(o.Retries, 0), backoff: o.Backoff,
		maxWait: o.MaxRetryAfter, stall: o.Timeout, paused: map[string]time.Time{}}
	if o.Rate > 0 {
		c.rate = &rateLimiter{interval: time.Duration(float64(time.Second) / o.Rate)}
	}
	dialer := &net.Dialer{Timeout: o.Timeout, KeepAlive: 30 * time.Second}
	transport := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		MaxConnsPerHost:       o.Jobs,
		MaxIdleConnsPerHost:   o.Jobs,
		MaxIdleConns:          4 * o.Jobs,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   o.Timeout,
		ResponseHeaderTimeout: o.Timeout,
		// Bytes as the Source serves them: a transparent gunzip would
		// hand over other bytes than a .gz resource's own.
		DisableCompression: true,
	}
	c.http = &http.Client{Transport: transport, CheckRedirect: c.checkRedirect(o.OtherHosts)}
	return c
}

// mapped returns the URL to fetch u from.
func (c *client) mapped(u string) string {
	for _, m := range c.maps {
		if rest, ok := strings.CutPrefix(u, m.From); ok {
			return m.To + rest
		}
	}
	return u
}

// checkRedirect maps redirect targets as it maps URLs, and refuses a
// redirect to another host unless the sync mirrors other hosts.
func (c *client) checkRedirect(otherHosts bool) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if m := c.mapped(req.URL.String()); m != req.URL.String() {
			u, err := url.Parse(m)
			if err != nil {
				return err
			}
			req.URL, req.Host = u, u.Host
		}
		if !otherHosts && !sameOrigin(req.URL, via[0].URL) {
			return fmt.Errorf("redirected to another host, %s (rsgen sync follows such redirects only with --other-hosts)", req.URL.Redacted())
		}
		return nil
	}
}

// get sends one GET of u (mapped) with the headers h and returns a
// successful response (2xx, or 304 when h makes the request
// conditional), whose body fails with a *StallError when it stops coming.
// Any other status is a *StatusError; a 429 or 503 whose Retry-After the
// sync waits for pauses every request to the host that long.
func (c *client) get(ctx context.Context, u string, h http.Header) (*http.Response, error) {
	target := c.mapped(u)
	req, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if err := c.wait(ctx, req.URL.Host); err != nil {
		return nil, err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", c.userAgent)
	ctx, cancel := context.WithCancel(ctx)
	body := &stallBody{url: u, after: c.stall, cancel: cancel}
	body.timer = time.AfterFunc(c.stall, body.fire)
	c.requests.Add(1)
	resp, err := c.http.Do(req.WithContext(ctx))
	if err != nil {
		body.stop()
		if body.stalled.Load() {
			return nil, &StallError{URL: u, After: c.stall}
		}
		return nil, fmt.Errorf("GET %s: %w", u, unwrapURLError(err))
	}
	if resp.StatusCode/100 == 2 || resp.StatusCode == http.StatusNotModified && h.Get("If-None-Match")+h.Get("If-Modified-Since") != "" {
		body.rc, body.client = resp.Body, c
		resp.Body = body
		return resp, nil
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // so that the connection is kept
	resp.Body.Close()
	body.stop()
	se := &StatusError{URL: u, Status: resp.Status, Code: resp.StatusCode, RetryAfter: retryAfter(resp.Header.Get("Retry-After"), time.Now())}
	if (se.Code == http.StatusTooManyRequests || se.Code == http.StatusServiceUnavailable) && se.RetryAfter <= c.maxWait {
		c.pause(req.URL.Host, se.RetryAfter)
	}
	return nil, se
}

// unwrapURLError drops the *url.Error around err, whose message repeats
// the method and URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// retry runs try until it succeeds, fails for good, or has been retried
// c.retries times, waiting between tries as the failure asks: a
// Retry-After, else an exponential backoff with jitter.
func (c *client) retry(ctx context.Context, try func() error) error {
	for attempt := 0; ; attempt++ {
		err := try()
		if err == nil || ctx.Err() != nil {
			return err
		}
		wait, ok := c.retryWait(err, attempt)
		if !ok || attempt >= c.retries {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// retryWait says whether err is worth another try, and after how long.
func (c *client) retryWait(err error, attempt int) (time.Duration, bool) {
	backoff := c.backoff << min(attempt, 10)
	backoff = min(backoff, 30*time.Second)
	backoff += time.Duration(rand.Int64N(int64(backoff)/4 + 1))
	var se *StatusError
	if errors.As(err, &se) {
		switch se.Code {
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			if se.RetryAfter > c.maxWait {
				return 0, false
			}
			return max(se.RetryAfter, backoff), true
		case http.StatusRequestTimeout, http.StatusTooEarly, http.StatusInternalServerError,
			http.StatusBadGateway, http.StatusGatewayTimeout:
			return backoff, true
		}
		return 0, false
	}
	var me *MismatchError
	var stall *StallError
	var ne net.Error
	switch {
	case errors.As(err, &me), errors.As(err, &stall), errors.As(err, &ne),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED):
		return backoff, true
	}
	return 0, false
}

// pause keeps every request to host waiting for d.
func (c *client) pause(host string, d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if until := time.Now().Add(d); until.After(c.paused[host]) {
		c.paused[host] = until
	}
}

// wait waits for the host's pause and the rate.
func (c *client) wait(ctx context.Context, host string) error {
	c.mu.Lock()
	until := c.paused[host]
	c.mu.Unlock()
	if d := time.Until(until); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	if c.rate != nil {
		return c.rate.wait(ctx)
	}
	return nil
}

// retryAfter reads a Retry-After value: seconds, or an HTTP date; 0 when
// there is none or it does not parse.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// rateLimiter spaces requests interval apart.
type rateLimiter struct {
	interval time.Duration
	mu       sync.Mutex
	next     time.Time
}

func (r *rateLimiter) wait(ctx context.Context) error {
	r.mu.Lock()
	now := time.Now()
	at := r.next
	if at.Before(now) {
		at = now
	}
	r.next = at.Add(r.interval)
	r.mu.Unlock()
	if d := at.Sub(now); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// stallBody is a response body that fails when no byte comes for a
// while: a timer, reset by every read that gets bytes, cancels the
// request.
type stallBody struct {
	url     string
	rc      io.ReadCloser
	client  *client
	after   time.Duration
	timer   *time.Timer
	cancel  context.CancelFunc
	stalled atomic.Bool
}

func (b *stallBody) fire() { b.stalled.Store(true); b.cancel() }

func (b *stallBody) stop() { b.timer.Stop(); b.cancel() }

func (b *stallBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.timer.Reset(b.after)
		b.client.bytes.Add(int64(n))
	}
	if err != nil && !errors.Is(err, io.EOF) {
		if b.stalled.Load() {
			return n, &StallError{URL: b.url, After: b.after}
		}
		return n, fmt.Errorf("GET %s: %w", b.url, err)
	}
	return n, err
}

func (b *stallBody) Close() error {
	err := b.rc.Close()
	b.stop()
	return err
}
