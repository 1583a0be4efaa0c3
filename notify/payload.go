package notify

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/rsgen/rsgen/rs"
)

// Head is what a batch of payloads says of itself: the channel's
// capability (rs.CapChangeNotification or rs.CapFrameworkNotification),
// the interval the batch covers, and the root links of every payload (an
// rs:ln rel="up" to the Capability List, say).
type Head struct {
	Capability  string
	From, Until time.Time
	Links       []rs.Link
	// AfterGap lets the batch start after the channel's last
	// notification ended: the channel missed the changes in between (it
	// was switched off meanwhile), and the gap its intervals then show
	// sends Destinations to the Change Lists for them.
	AfterGap bool
}

func (h *Head) check() error {
	if h.Capability != rs.CapChangeNotification && h.Capability != rs.CapFrameworkNotification {
		return fmt.Errorf("capability %q is not %s or %s", h.Capability, rs.CapChangeNotification, rs.CapFrameworkNotification)
	}
	for _, t := range []time.Time{h.From, h.Until} {
		if err := rs.CheckTime(t); err != nil {
			return err
		}
	}
	if h.Until.Before(h.From) {
		return fmt.Errorf("until %s is before from %s", h.Until.UTC().Format(rs.TimeLayout), h.From.UTC().Format(rs.TimeLayout))
	}
	return nil
}

// documentCapabilities are the capabilities of the documents a Framework
// Notification can be about.
var documentCapabilities = map[string]bool{
	rs.CapDescription: true, rs.CapCapabilityList: true,
	rs.CapResourceList: true, rs.CapChangeList: true, rs.CapResourceDump: true, rs.CapChangeDump: true,
	rs.CapResourceListArchive: true, rs.CapChangeListArchive: true,
	rs.CapResourceDumpArchive: true, rs.CapChangeDumpArchive: true,
}

// IsDocumentCapability reports whether a Framework Notification may be
// about a document of the capability: a capability document, never a
// manifest or a notification.
func IsDocumentCapability(capability string) bool { return documentCapabilities[capability] }

// checkEntry checks an entry of a payload with the capability of the
// channel, in the interval [from, until], after an entry of time last.
// The specifications make datetime optional; rsgen writes it always
// (needDatetime), so that a split falls between two times.
func checkEntry(capability string, e *rs.Entry, from, until, last time.Time, needDatetime bool) error {
	switch e.MD.Change {
	case rs.ChangeCreated, rs.ChangeUpdated, rs.ChangeDeleted:
	default:
		return fmt.Errorf("change %q is not created, updated or deleted", e.MD.Change)
	}
	t := e.MD.Datetime
	switch {
	case t.IsZero() && needDatetime:
		return errors.New("no datetime")
	case t.IsZero():
	case t.Before(from) || t.After(until):
		return fmt.Errorf("datetime %s is outside [%s, %s]", fmtTime(t), fmtTime(from), fmtTime(until))
	case t.Before(last):
		return fmt.Errorf("datetime %s is before the previous entry's %s (entries go in forward chronological order)", fmtTime(t), fmtTime(last))
	}
	if capability == rs.CapFrameworkNotification {
		if !documentCapabilities[e.MD.Capability] {
			return fmt.Errorf("capability %q is not that of a capability document", e.MD.Capability)
		}
	} else if e.MD.Capability != "" {
		return fmt.Errorf("capability %q in a Change Notification entry", e.MD.Capability)
	}
	return nil
}

// checkTopic checks that topic is an absolute http or https URI, with no
// character a header or the channel record could not carry.
func checkTopic(topic string) error {
	u, err := url.Parse(topic)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		strings.IndexFunc(topic, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '<' || r == '>' }) >= 0 {
		return fmt.Errorf("topic %q is not an absolute http or https URI", topic)
	}
	return nil
}

func fmtTime(t time.Time) string { return t.UTC().Format(rs.TimeLayout) }

// part is one payload being written into a temporary file. Its root
// <rs:md> is written first, but a part's until is known only when the
// part is full or the batch ends; it is written as the batch's until and
// overwritten in place when the part ends earlier. Times have one width
// (rs.TimeLayout), so the overwrite changes no other byte.
type part struct {
	f     *os.File
	w     *rs.Writer
	from  time.Time
	until int64 // offset of the root until value in the file
}

// startPart starts a part covering [from, h.Until] in a new temporary
// file created by create.
func startPart(create func() (*os.File, error), h *Head, from time.Time, limits [2]int64) (*part, error) {
	md := rs.MD{Capability: h.Capability, From: from, Until: h.Until}
	offset, err := untilOffset(md, h.Links)
	if err != nil {
		return nil, err
	}
	f, err := create()
	if err != nil {
		return nil, err
	}
	w := rs.NewWriter(f, rs.URLSet)
	w.SetLimits(int(limits[0]), limits[1])
	if err := w.Start(md, h.Links...); err != nil {
		f.Close()
		return nil, err
	}
	return &part{f: f, w: w, from: from, until: offset}, nil
}

// untilOffset returns the offset of the root until value in a document
// started with md and links: the last until=" of its head, since root
// links come before the root <rs:md> and have no until.
func untilOffset(md rs.MD, links []rs.Link) (int64, error) {
	var head bytes.Buffer
	w := rs.NewWriter(&head, rs.URLSet)
	if err := w.Start(md, links...); err != nil {
		return 0, err
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	i := bytes.LastIndex(head.Bytes(), []byte(` until="`))
	if i < 0 {
		return 0, errors.New("notify: no until in a payload's head")
	}
	return int64(i + len(` until="`)), nil
}

// finish closes the part's document with until as its root until, and
// syncs the file.
func (p *part) finish(until, batchUntil time.Time) error {
	err := p.w.Close()
	if err == nil && !until.Equal(batchUntil) {
		_, err = p.f.WriteAt([]byte(fmtTime(until)), p.until)
	}
	if err == nil {
		err = p.f.Sync()
	}
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// discard closes the part's file without finishing it.
func (p *part) discard() { p.f.Close() }
