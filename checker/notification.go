package checker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/rsgen/rsgen/notify"
	"github.com/rsgen/rsgen/rs"
)

// Notifications
//
// A Capability List advertises a set's notification channels (ResourceSync
// Change Notification and Framework Notification 1.0.1): an entry whose loc
// is the channel's topic, with the hub as rs:ln rel="hub". The topic
// answers with 200, application/xml and Link headers naming itself
// (rel="self") and the hub (rel="hub"); it serves the channel's newest
// notification, or nothing before the first. A notification is a
// <urlset> whose root rs:md has the channel's capability, from and until;
// its entries are changes in forward chronological order, and those of a
// Framework Notification name the capability of the document that
// changed. Consecutive notifications of a channel cover consecutive
// intervals, which only the outbox a Source keeps them in shows
// (CheckOutbox): a topic serves one.

// The specifications the notification rules come from.
const (
	changeNotificationSpec    = "Change Notification 1.0.1"
	frameworkNotificationSpec = "Framework Notification 1.0.1"
)

// walkChannel checks the channel entry e of the Capability List cl: its
// hub, its topic as served, and the notification the topic serves.
func (w *walker) walkChannel(ctx context.Context, cl *Document, e *Entry, capability string) {
	hub := ""
	for i := range e.Links {
		if e.Links[i].Rel() == rs.RelHub {
			hub = e.Links[i].Href()
		}
	}
	if hub == "" {
		w.reportSection(at(cl, e.Line), kinds[capability].section, "channel-hub", "the %s channel %s names no hub: add rs:ln rel=\"hub\" with the hub's URL", kinds[capability].name, e.Loc)
	}
	if _, seen := w.seen.mark(e.Loc, capability); seen {
		return
	}
	res := w.get(ctx, e.Loc, at(cl, e.LocLine))
	if res == nil {
		return
	}
	defer res.Body.Close()
	if res.File == "" { // over HTTP: how the topic is served
		w.topicHeaders(res, e.Loc, hub)
	}
	body := bufio.NewReader(res.Body)
	if _, err := body.Peek(1); errors.Is(err, io.EOF) {
		if res.File == "" && !isXMLType(res.ContentType) {
			w.rootReport("http-content-type", e.Loc, "served as %q; want application/xml", res.ContentType)
		}
		return // no notification yet
	}
	res.Body = readCloser{body, res.Body}
	if d := w.read(res, e.Loc, capability, false); d != nil {
		w.checkUp(d, cl.URL)
	}
}

// topicHeaders checks the Link headers a topic is served with: rel="self"
// naming the topic, rel="hub" naming the hub the Capability List
// advertises. S3 cannot store a Link header: a CDN in front of it must
// add them.
func (w *walker) topicHeaders(res *Resource, topic, hub string) {
	links := notify.ParseLinkHeader(res.Links)
	if !slices.Contains(links[rs.RelSelf], topic) {
		w.rootReport("topic-link", topic, "served without Link: <%s>; rel=\"self\" (a host that cannot send it, such as S3, needs a CDN header policy that adds it)", topic)
	}
	if hub != "" && !slices.Contains(links[rs.RelHub], hub) {
		w.rootReport("topic-link", topic, "served without Link: <%s>; rel=\"hub\", the hub its Capability List advertises", hub)
	}
}

// notification applies the rules of a notification payload: a <urlset>
// with from and until, whose Framework Notification entries name a
// capability document's capability.
func (c *docChecker) notification() {
	if !c.known || !c.k.notification {
		return
	}
	if c.d.Index {
		c.rep.addSection(c.k.section, c.d.Line, "notification-urlset", "a %s is a <urlset>; split many changes into several notifications", c.k.name)
	}
	if _, ok := c.d.MD.Attr("until"); !ok {
		c.rep.addSection(c.k.section, c.d.MD.Line, "notification-interval", "the root rs:md of a %s has no until; a notification covers the interval [from, until]", c.k.name)
	}
	if c.d.Capability() != rs.CapFrameworkNotification {
		return
	}
	for i := range c.d.Entries {
		e := &c.d.Entries[i]
		if v, _ := e.MD.Attr("capability"); !notify.IsDocumentCapability(v) {
			c.rep.add(e.MD.Line, "notification-entry", "capability %q is not that of a capability document (description, capabilitylist, a list, a dump or an archive)", v)
		}
	}
}

// CheckOutbox checks the notifications pending in an outbox folder (the
// state folder's outbox, which rsgen deploy and rsgen notify send): each
// payload as a document on its own, and the intervals of each channel's,
// which must follow one another.
func CheckOutbox(ctx context.Context, dir string, opts Options) (Report, error) {
	opts = opts.withDefaults()
	pending, err := notify.OpenOutbox(dir).Pending()
	if err != nil {
		return Report{}, fmt.Errorf("check outbox %s: %w", dir, err)
	}
	var findings []Finding
	var prev *Document // the previous payload of the same channel
	for i, p := range pending {
		if err := ctx.Err(); err != nil {
			return Report{}, err
		}
		doc, rep, err := checkPayload(ctx, p.Path, opts)
		if err != nil {
			return Report{}, fmt.Errorf("check outbox %s: %w", dir, err)
		}
		if i > 0 && pending[i-1].Topic == p.Topic && prev != nil && doc != nil {
			sequence(rep, prev, doc, p.Topic)
		}
		prev = doc
		findings = append(findings, rep.findings...)
	}
	sortFindings(findings)
	return Report{Documents: len(pending), Findings: findings}, nil
}

// checkPayload reads and checks the payload in the file at path.
func checkPayload(ctx context.Context, path string, opts Options) (*Document, *reporter, error) {
	f, err := openLocal(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	rep := &reporter{url: path, file: path}
	doc := readDocument(ctxReader{ctx, f}, path, opts.Limits, rep)
	if doc.readErr != nil {
		return nil, nil, doc.readErr
	}
	if doc.Fatal {
		return nil, rep, nil
	}
	checkDocument(doc, rep, true)
	if k, ok := kindOf(doc.Capability()); !ok || !k.notification {
		rep.add(doc.Line, "capability-mismatch", "capability %q is not %s or %s, as a notification of an outbox has", doc.Capability(), rs.CapChangeNotification, rs.CapFrameworkNotification)
	}
	return doc, rep, nil
}

// sequence reports a payload of topic that does not start where the
// previous one ended: an overlap is an error, a gap a warning (a Source
// that missed changes says so by one).
func sequence(rep *reporter, prev, d *Document, topic string) {
	until, from := mdTime(prev.MD, "until"), mdTime(d.MD, "from")
	if until == nil || from == nil {
		return
	}
	switch {
	case from.t.Before(until.t):
		rep.add(d.MD.Line, "notification-sequence", "overlap: from %s is before the until %s of the channel's previous notification (%s)", d.MD.Attrs["from"], prev.MD.Attrs["until"], topic)
	case from.t.After(until.t):
		rep.addSeverity(Warning, d.MD.Line, "notification-sequence", "gap: from %s is after the until %s of the channel's previous notification (%s); Destinations read the Change Lists for it", d.MD.Attrs["from"], prev.MD.Attrs["until"], topic)
	}
}
