package destination

import (
	"sync"
	"time"

	"github.com/rsgen/rsgen/notify"
)

// EventKind says what an Event reports.
type EventKind int

// The events of a sync and an audit.
const (
	EventInfo    EventKind = iota + 1 // what the sync does and why: Msg
	EventWarning                      // something skipped or doubtful: Msg
	EventPlanned                      // the work is known: Files and Bytes to fetch
	EventFetched                      // a file was verified and placed: Path, URL, Bytes
	EventDeleted                      // a file was removed: Path
	EventFailed                       // a resource is not mirrored: Path (when known), URL, Err
	EventMissing                      // audit: a listed resource has no file: Path
	EventExtra                        // audit: a file no list names: Path
	EventDiffers                      // audit: a file's bytes are not those listed: Path, Msg
)

var eventNames = map[EventKind]string{
	EventInfo: "info", EventWarning: "warning", EventPlanned: "planned", EventFetched: "fetched",
	EventDeleted: "deleted", EventFailed: "failed", EventMissing: "missing", EventExtra: "extra",
	EventDiffers: "differs",
}

func (k EventKind) String() string { return eventNames[k] }

// Event reports one thing a sync did or found.
type Event struct {
	Kind  EventKind
	Path  string // in DIR, slash-separated
	URL   string
	Bytes int64
	Files int64 // EventPlanned
	Dump  bool  // EventFetched: the bytes came from a dump package
	Msg   string
	Err   error
}

// Summary is the outcome of a sync or an audit.
type Summary struct {
	// Mode is what the sync did: "baseline", "incremental" or "audit";
	// "notification" when Listen applied a notification.
	Mode           string
	Set            string
	CapabilityList string
	// SyncedUntil is the time up to which DIR holds the Source's changes:
	// the next sync applies those since.
	SyncedUntil time.Time
	// Notification is the interval of the notification Listen applied, or
	// whose gap it closed from the Change Lists (Mode "incremental").
	Notification notify.Interval
	// Took is how long the run took (Listen's runs; a sync's caller times
	// it).
	Took time.Duration

	Fetched      int64 // files placed
	FetchedBytes int64
	FromDumps    int64 // of the files placed, those taken from dump packages
	Deleted      int64
	Unchanged    int64 // listed and already right in DIR
	OtherHosts   int64 // resources on other hosts, skipped
	Refused      int64 // resources whose URI cannot be a file of DIR
	Failed       int64 // resources that could not be fetched and verified

	Missing, Extra, Differing int64 // audit

	Requests int64 // HTTP requests sent
	Bytes    int64 // HTTP body bytes received
}

// reporter counts and forwards events, one at a time.
type reporter struct {
	mu     sync.Mutex
	notify func(Event)
	sum    *Summary
}

func (r *reporter) event(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sum
	switch e.Kind {
	case EventFetched:
		s.Fetched++
		s.FetchedBytes += e.Bytes
		if e.Dump {
			s.FromDumps++
		}
	case EventDeleted:
		s.Deleted++
	case EventFailed:
		if _, refused := e.Err.(*RefusedError); refused {
			s.Refused++
		} else {
			s.Failed++
		}
	case EventMissing:
		s.Missing++
	case EventExtra:
		s.Extra++
	case EventDiffers:
		s.Differing++
	}
	if r.notify != nil {
		r.notify(e)
	}
}

func (r *reporter) info(msg string)    { r.event(Event{Kind: EventInfo, Msg: msg}) }
func (r *reporter) warning(msg string) { r.event(Event{Kind: EventWarning, Msg: msg}) }

func (r *reporter) count(n *int64) {
	r.mu.Lock()
	*n++
	r.mu.Unlock()
}
