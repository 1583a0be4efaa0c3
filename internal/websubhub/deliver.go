package websubhub

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"net/http"
)

// algorithms are the recognized algorithm names of X-Hub-Signature
// (§7.1.1).
var algorithms = map[string]func() hash.Hash{
	"sha1": sha1.New, "sha256": sha256.New, "sha384": sha512.New384, "sha512": sha512.New,
}

// distribute queues msg for every live subscription of topic; one whose
// lease has ended is dropped instead (leases are enforced, §5.3.1).
func (h *Hub) distribute(topic string, msg message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.opts.Now()
	for key, s := range h.subs {
		if key.topic != topic {
			continue
		}
		if !s.expires.After(now) {
			delete(h.subs, key)
			h.log.add(Event{Kind: Expired, Topic: key.topic, Callback: key.callback})
			continue
		}
		s.queue = append(s.queue, msg)
		if !s.sending {
			s.sending = true
			h.goBackground(func() { h.drain(s) })
		}
	}
}

// drain makes the distributions queued for s, in order, until none is
// left.
func (h *Hub) drain(s *subscription) {
	for {
		h.mu.Lock()
		if len(s.queue) == 0 || h.ctx.Err() != nil {
			s.sending = false
			h.mu.Unlock()
			return
		}
		msg, secret := s.queue[0], s.secret
		s.queue = s.queue[1:]
		h.mu.Unlock()
		h.deliver(s.subKey, secret, msg)
	}
}

// deliver makes one distribution, retrying with backoff (§7: a hub
// SHOULD retry up to limits of its own). A 410 Gone ends the
// subscription.
func (h *Hub) deliver(key subKey, secret string, msg message) {
	for attempt := 1; ; attempt++ {
		status, err := h.post(key, secret, msg)
		ev := Event{Topic: key.topic, Callback: key.callback, Status: status, Err: err, Attempt: attempt}
		switch {
		case err == nil && status >= 200 && status <= 299:
			ev.Kind = Delivered
			h.log.add(ev)
			return
		case err == nil && status == http.StatusGone:
			ev.Kind = Gone
			h.unsubscribe(key)
			h.log.add(ev)
			return
		case attempt >= h.opts.Attempts:
			ev.Kind = GaveUp
			h.log.add(ev)
			return
		}
		ev.Kind = DeliveryFailed
		h.log.add(ev)
		if h.opts.Sleep(h.ctx, h.opts.Backoff(attempt)) != nil {
			return
		}
	}
}

// post sends msg to the subscription's callback with the topic's
// Content-Type, the Link header and, with a secret, the signature.
func (h *Hub) post(key subKey, secret string, msg message) (int, error) {
	req, err := http.NewRequestWithContext(h.ctx, http.MethodPost, key.callback, bytes.NewReader(msg.body))
	if err != nil {
		return 0, err
	}
	if msg.contentType != "" {
		req.Header.Set("Content-Type", msg.contentType)
	}
	// §7: one Link header with rel=self and rel=hub, combined.
	req.Header.Set("Link", fmt.Sprintf(`<%s>; rel="self", <%s>; rel="hub"`, key.topic, h.opts.URL))
	if secret != "" {
		req.Header.Set("X-Hub-Signature", h.opts.Algorithm+"="+sign(h.opts.Algorithm, secret, msg.body))
	}
	resp, err := h.opts.Client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // the body is ignored (§7)
	return resp.StatusCode, nil
}

// sign returns the hexadecimal HMAC of body keyed with secret (§7.1).
func sign(alg, secret string, body []byte) string {
	m := hmac.New(algorithms[alg], []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}
