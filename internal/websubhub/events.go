package websubhub

import (
	"context"
	"fmt"
	"sync"
)

// Kind says what happened.
type Kind int

// The kinds of events.
const (
	Subscribed     Kind = iota + 1 // a subscription was verified: created or renewed
	Unsubscribed                   // an unsubscription was verified
	VerifyFailed                   // the callback did not confirm; nothing changed
	Denied                         // the hub refused a subscription and told the callback
	Published                      // a publication or a payload arrived for Topic
	FetchFailed                    // the topic could not be fetched after a publication ping
	Delivered                      // a distribution got a 2xx
	DeliveryFailed                 // a distribution failed and will be retried
	GaveUp                         // a distribution failed Attempts times
	Gone                           // the callback answered 410; the subscription ended
	Expired                        // a lease had ended when content came; the subscription ended
)

var kindNames = [...]string{"", "subscribed", "unsubscribed", "verify-failed", "denied", "published",
	"fetch-failed", "delivered", "delivery-failed", "gave-up", "gone", "expired"}

func (k Kind) String() string { return kindNames[k] }

// Event is one thing the hub did.
type Event struct {
	Kind            Kind
	Topic, Callback string
	Status          int    // the HTTP status the other side answered, if any
	Attempt         int    // of a distribution, from 1
	Err             error  // the transport error, if any
	Detail          string // more, in words
}

func (e Event) String() string {
	s := fmt.Sprintf("%s topic=%s", e.Kind, e.Topic)
	if e.Callback != "" {
		s += " callback=" + e.Callback
	}
	if e.Status != 0 {
		s += fmt.Sprintf(" status=%d", e.Status)
	}
	if e.Err != nil {
		s += " err=" + e.Err.Error()
	}
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// eventLog is the hub's record of events. Await takes each event once, so
// that a test waiting for two deliveries waits for two.
type eventLog struct {
	mu      sync.Mutex
	events  []Event
	taken   []bool
	changed chan struct{} // closed and replaced at each event
}

func (l *eventLog) add(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
	l.taken = append(l.taken, false)
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// Await returns the first event not taken before that match accepts, and
// takes it; it waits for one until ctx ends.
func (h *Hub) Await(ctx context.Context, match func(Event) bool) (Event, error) {
	l := &h.log
	for {
		l.mu.Lock()
		for i, e := range l.events {
			if !l.taken[i] && match(e) {
				l.taken[i] = true
				l.mu.Unlock()
				return e, nil
			}
		}
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return Event{}, fmt.Errorf("websubhub: no such event (%w); the hub's events:\n%s", ctx.Err(), h.Events())
		}
	}
}

// Events returns every event so far, one a line, for failure messages.
func (h *Hub) Events() string {
	h.log.mu.Lock()
	defer h.log.mu.Unlock()
	var s string
	for _, e := range h.log.events {
		s += e.String() + "\n"
	}
	return s
}

// Is returns a match for Await: an event of kind k for the callback
// (any callback when "").
func Is(k Kind, callback string) func(Event) bool {
	return func(e Event) bool { return e.Kind == k && (callback == "" || e.Callback == callback) }
}
