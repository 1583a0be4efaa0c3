package destination

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"
)

// DumpPolicy says when a sync takes resources from dump packages.
type DumpPolicy int

const (
	// DumpsAuto uses a Resource Dump or Change Dumps when fetching their
	// packages costs less than fetching the resources one by one.
	DumpsAuto DumpPolicy = iota
	// DumpsAlways uses them whenever the Source publishes them.
	DumpsAlways
	// DumpsNever fetches every resource by itself.
	DumpsNever
)

var dumpPolicyNames = []string{"auto", "always", "never"}

func (p DumpPolicy) String() string { return dumpPolicyNames[p] }

// ParseDumpPolicy reads auto, always or never.
func ParseDumpPolicy(s string) (DumpPolicy, error) {
	for i, n := range dumpPolicyNames {
		if s == n {
			return DumpPolicy(i), nil
		}
	}
	return 0, fmt.Errorf("%q: want auto, always or never", s)
}

// Options configure a sync. Defaults fills what is left zero.
type Options struct {
	// Source is where the Source is found: its base URL (ending in "/"),
	// its Source Description, or one of its Capability Lists.
	Source string
	// Dir is the folder the resources are mirrored into.
	Dir string
	// State is the folder of the sync's state; "" is DefaultState(Dir).
	State string
	// Set picks one of several Capability Lists: by name (the folder of an
	// rsgen set, resourcesync/NAME/capabilitylist.xml, else the list's
	// file name without .xml) or by URL.
	Set string

	Dumps DumpPolicy
	// Baseline takes a baseline even when the Change Lists would do: it
	// looks at every file of DIR again and fetches what differs.
	Baseline bool
	// NoRebaseline makes a gap in the Change Lists an error rather than
	// the cause of a new baseline.
	NoRebaseline bool
	// KeepDeleted leaves in DIR the files of resources the Source
	// deleted; the state forgets them.
	KeepDeleted bool
	// OtherHosts mirrors resources on other hosts than the Source's under
	// DIR/HOST/, and follows redirects to other hosts.
	OtherHosts bool
	// DryRun plans and reports, and writes nothing: neither DIR nor the
	// state.
	DryRun bool

	// Jobs bounds the fetches in flight, in all and so per host; it is also
	// the most connections kept to a host.
	Jobs int
	// Rate bounds the requests per second, in all; 0 is no bound.
	Rate float64
	Maps []Map
	// UserAgent names the client in every request.
	UserAgent string
	// Timeout bounds connecting, waiting for a response's headers, and
	// each wait for more of its body.
	Timeout time.Duration
	// Retries is how many times a failed fetch is tried again; negative
	// is never.
	Retries int
	// Backoff is the first wait before a retry, doubled for each next.
	Backoff time.Duration
	// MaxRetryAfter is the longest Retry-After a sync waits for; a
	// Source asking for more fails the fetch.
	MaxRetryAfter time.Duration

	// Notify, when set, receives the sync's events as they happen, from
	// one goroutine at a time.
	Notify func(Event)
}

// The defaults of Options.
const (
	DefaultJobs          = 4
	DefaultTimeout       = 30 * time.Second
	DefaultRetries       = 3
	DefaultBackoff       = time.Second
	DefaultMaxRetryAfter = 10 * time.Minute
	DefaultUserAgent     = "rsgen/devel"
)

// Defaults returns o with every zero field set to its default.
func (o Options) Defaults() Options {
	if o.State == "" && o.Dir != "" {
		o.State = DefaultState(o.Dir)
	}
	if o.Jobs <= 0 {
		o.Jobs = DefaultJobs
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Retries == 0 {
		o.Retries = DefaultRetries
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	return o
}

// DefaultState returns the state folder of a sync into dir:
// .rsgen-sync/NAME beside it, where NAME is dir's own name, so that
// folders mirrored side by side keep their states apart and DIR holds
// nothing but the mirrored resources.
func DefaultState(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = filepath.Clean(dir)
	}
	return filepath.Join(filepath.Dir(abs), ".rsgen-sync", filepath.Base(abs))
}

// UsageError is an error of what the user asked: a set that is not there,
// a Source with several sets and no --set, a state that belongs to
// another Source.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// ErrIncomplete is returned, wrapped with the count, when some resources
// could not be mirrored (each reported by an EventFailed): DIR holds every
// other one, and the next sync tries them again.
var ErrIncomplete = errors.New("the mirror is incomplete")

// ErrOutOfSync is returned by Audit when DIR differs from the Source.
var ErrOutOfSync = errors.New("DIR is out of sync with the Source")

// ErrGap is returned with NoRebaseline when the Source's Change Lists no
// longer reach back to the last sync.
var ErrGap = errors.New("the Change Lists no longer reach back to the last sync")

// Map makes a sync fetch every URL that starts with From from To instead:
// a mirror, a staging host, or loopback in tests. Paths in DIR stay those
// of the URLs the Source lists.
type Map struct{ From, To string }

// ParseMap reads FROM=TO.
func ParseMap(s string) (Map, error) {
	from, to, ok := strings.Cut(s, "=")
	if !ok || from == "" || to == "" {
		return Map{}, fmt.Errorf("%q: want FROM=TO, two URL prefixes", s)
	}
	for _, u := range []string{from, to} {
		p, err := url.Parse(u)
		if err != nil || p.Scheme != "http" && p.Scheme != "https" || p.Host == "" {
			return Map{}, fmt.Errorf("%q: %q is not an http:// or https:// URL prefix", s, u)
		}
	}
	return Map{From: from, To: to}, nil
}
