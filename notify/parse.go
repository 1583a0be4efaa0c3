package notify

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rsgen/rsgen/rs"
)

// Notification is a payload read back: what a Destination applies, and
// what a checker validates.
type Notification struct {
	Capability  string // rs.CapChangeNotification or rs.CapFrameworkNotification
	From, Until time.Time
	Links       []rs.Link // of the root
	Entries     []rs.Entry
}

// Parse reads a payload and checks it against the specifications: a
// <urlset> (never a <sitemapindex>) with a notification capability, from
// and until, and entries with a change, in forward chronological order
// within [from, until] where they have a datetime, and, in a Framework
// Notification, the capability of the document that changed. It holds at
// most one document's entries (rs.MaxEntries).
func Parse(r io.Reader) (*Notification, error) {
	rd := rs.NewReader(r)
	h, err := rd.Head()
	if err != nil {
		return nil, fmt.Errorf("notify: payload: %w", err)
	}
	n := &Notification{Capability: h.MD.Capability, From: h.MD.From, Until: h.MD.Until, Links: h.Links}
	if err := checkHead(h); err != nil {
		return nil, fmt.Errorf("notify: payload: %w", err)
	}
	var last time.Time
	err = rd.Entries(func(e *rs.Entry) error {
		if err := checkEntry(n.Capability, e, n.From, n.Until, last, false); err != nil {
			return fmt.Errorf("entry %s: %w", e.Loc, err)
		}
		if e.MD.Datetime.After(last) {
			last = e.MD.Datetime
		}
		n.Entries = append(n.Entries, *e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("notify: payload: %w", err)
	}
	return n, nil
}

// checkHead checks the root of a payload.
func checkHead(h *rs.Head) error {
	if h.Root != rs.URLSet {
		return errors.New("a notification is a <urlset>, never a <sitemapindex>")
	}
	if h.MD.From.IsZero() || h.MD.Until.IsZero() {
		return errors.New("the root <rs:md> must have from and until")
	}
	head := Head{Capability: h.MD.Capability, From: h.MD.From, Until: h.MD.Until}
	return head.check()
}
