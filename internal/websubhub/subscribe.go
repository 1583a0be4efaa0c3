package websubhub

import (
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxSecret is the Recommendation's bound on hub.secret (§5.1: less than
// 200 bytes).
const maxSecret = 200

// maxForm bounds the body of a form request.
const maxForm = 64 << 10

// request is a subscription or unsubscription request that was accepted.
type request struct {
	mode     string // "subscribe" or "unsubscribe"
	topic    string
	callback string
	lease    time.Duration // asked for, or the default
	secret   string
}

func isForm(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/x-www-form-urlencoded"
}

// serveForm answers a form request: hub.mode says which.
func (h *Hub) serveForm(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		httpError(w, http.StatusBadRequest, "the form cannot be read: "+err.Error())
		return
	}
	switch mode := r.PostForm.Get("hub.mode"); mode {
	case "subscribe", "unsubscribe":
		req, msg := h.readRequest(mode, r.PostForm)
		if msg != "" {
			httpError(w, http.StatusBadRequest, msg)
			return
		}
		// §5.1.2: 202 first; verification happens after the response and
		// never changes it.
		w.WriteHeader(http.StatusAccepted)
		h.goBackground(func() { h.verify(req) })
	case "publish":
		h.servePublish(w, r.PostForm)
	case "":
		httpError(w, http.StatusBadRequest, "hub.mode is missing")
	default:
		httpError(w, http.StatusBadRequest, "hub.mode "+strconv.Quote(mode)+" is not subscribe, unsubscribe or publish")
	}
}

// readRequest checks the parameters of a (un)subscription; it returns the
// reason it refuses one, or "". Parameters it does not know are ignored
// (§5.1).
func (h *Hub) readRequest(mode string, form url.Values) (request, string) {
	req := request{mode: mode, topic: form.Get("hub.topic"), callback: form.Get("hub.callback"),
		secret: form.Get("hub.secret"), lease: h.opts.DefaultLease}
	if msg := checkURL("hub.callback", req.callback); msg != "" {
		return req, msg
	}
	if msg := checkURL("hub.topic", req.topic); msg != "" {
		return req, msg
	}
	if len(req.secret) >= maxSecret {
		return req, "hub.secret must be less than 200 bytes"
	}
	if s := form.Get("hub.lease_seconds"); s != "" && mode == "subscribe" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return req, "hub.lease_seconds " + strconv.Quote(s) + " is not a positive decimal integer"
		}
		req.lease = min(max(time.Duration(min(n, 1<<32))*time.Second, h.opts.MinLease), h.opts.MaxLease)
	}
	return req, ""
}

// checkURL returns why v, the value of parameter name, is not an absolute
// http or https URL, or "".
func checkURL(name, v string) string {
	if v == "" {
		return name + " is missing"
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return name + " " + strconv.Quote(v) + " is not an absolute http or https URL"
	}
	return ""
}

// verify verifies the intent of the subscriber (§5.3) and, when it
// confirms, makes the request take effect. A refused subscription is told
// so instead (§5.2).
func (h *Hub) verify(req request) {
	if req.mode == "subscribe" && h.opts.Deny != nil {
		if reason := h.opts.Deny(req.topic); reason != "" {
			h.deny(req, reason)
			return
		}
	}
	challenge := randomToken(24) // random, and used for this one request
	q := url.Values{"hub.mode": {req.mode}, "hub.topic": {req.topic}, "hub.challenge": {challenge}}
	if req.mode == "subscribe" {
		q.Set("hub.lease_seconds", strconv.FormatInt(int64(req.lease/time.Second), 10))
	}
	asked := h.opts.Now() // the lease runs from the verification request
	status, body, err := h.get(withQuery(req.callback, q))
	ev := Event{Topic: req.topic, Callback: req.callback, Status: status, Err: err}
	switch {
	case err != nil || status < 200 || status > 299:
		ev.Kind = VerifyFailed
	case body != challenge:
		ev.Kind, ev.Detail = VerifyFailed, "the response body is not the challenge"
	case req.mode == "subscribe":
		ev.Kind = Subscribed
		h.subscribe(req, asked.Add(req.lease))
	default:
		ev.Kind = Unsubscribed
		h.unsubscribe(subKey{req.topic, req.callback})
	}
	h.log.add(ev)
}

// deny tells the callback that its subscription is refused.
func (h *Hub) deny(req request, reason string) {
	q := url.Values{"hub.mode": {"denied"}, "hub.topic": {req.topic}, "hub.reason": {reason}}
	status, _, err := h.get(withQuery(req.callback, q))
	h.log.add(Event{Kind: Denied, Topic: req.topic, Callback: req.callback, Status: status, Err: err, Detail: reason})
}

// subscribe creates the subscription, or renews it with the new secret
// (or none) and lease: one subscription per topic and callback (§5.1).
func (h *Hub) subscribe(req request, expires time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	key := subKey{req.topic, req.callback}
	s := h.subs[key]
	if s == nil {
		s = &subscription{subKey: key}
		h.subs[key] = s
	}
	s.secret, s.expires = req.secret, expires
}

func (h *Hub) unsubscribe(key subKey) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, key)
}

// get makes a GET request and returns the status and up to 64 KiB of
// the body.
func (h *Hub) get(u string) (int, string, error) {
	req, err := http.NewRequestWithContext(h.ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := h.opts.Client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, string(body), err
}

// withQuery appends q to the query string of u, keeping the parameters u
// has (§5.1.1).
func withQuery(u string, q url.Values) string {
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + q.Encode()
}
