package generator

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rsgen/rsgen/hosting"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/notify"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// Notifications (package notify)
//
// With [notification] hub set, a set has a Change Notification channel
// (its resources' changes) and, when asked, a Framework Notification
// channel (the capability documents the build created, updated or
// deleted: one entry each, never for an index, a component naming its
// index). Its Capability List advertises each channel's topic with the
// hub; the topic serves the channel's newest notification.
//
// A build writes a batch per channel into the outbox in the state folder,
// covering the time since the channel's last notification up to the
// build's: the payloads are finished while the documents are written, the
// newest is published at the topic with the build's other files, and the
// outbox takes the batch just before the output is published. A build
// killed before that commit leaves nothing in the outbox and publishes
// nothing, and its changes, which the saved state does not hold, are
// found again by the next build. One killed after it leaves the
// notification: the next build either finds the same changes again,
// published or not, and notifies them again in the next interval (a
// Destination applies them twice, harmlessly), or, when the output holds
// them already, rebuilds its state from it (recover.go) and leaves them
// to that notification. A notification ends at its build's time, and
// rsgen deploy and rsgen notify send only those that end by the time of
// the last build whose state was saved (notify.Sender.Until): never one
// of changes that a killed build may not have published. Nothing is lost
// either way.
//
// A channel that was off while its set changed missed those changes: its
// next batch starts at the previous build, after a gap, which sends
// Destinations to the Change Lists (notify.Head.AfterGap).

// channel is a notification channel of a set.
type channel struct {
	capability string // rs.CapChangeNotification or rs.CapFrameworkNotification
	rel        string // the output path of its topic
}

// channels returns the notification channels of set st.
func channels(s *site, st *set) []channel {
	var chs []channel
	n := &s.cfg.Notification
	if st.WantsChangeNotification(n) {
		chs = append(chs, channel{rs.CapChangeNotification, layout.ChangeNotificationTopic(st.Name)})
	}
	if st.WantsFrameworkNotification(n) {
		chs = append(chs, channel{rs.CapFrameworkNotification, layout.FrameworkNotificationTopic(st.Name)})
	}
	return chs
}

// writeChannels adds the channels of set st to its Capability List: each
// topic with the hub (rel="hub") and the channel's capability.
func writeChannels(s *site, w *rs.Writer, st *set) error {
	for _, ch := range channels(s, st) {
		e := rs.Entry{Loc: s.docURL(ch.rel), MD: rs.MD{Capability: ch.capability},
			Links: []rs.Link{{Rel: rs.RelHub, Href: s.cfg.Notification.Hub}}}
		if err := w.Entry(&e); err != nil {
			return err
		}
	}
	return nil
}

// topicHeaders gives the hosting rule of a topic the headers a topic is
// served with (notify.TopicHeaders); other rules are left as they are.
func topicHeaders(s *site, r *hosting.Rule) {
	if !layout.IsTopic(r.Path) || !s.cfg.Notification.On() {
		return
	}
	h := notify.TopicHeaders(s.docURL(r.Path), s.cfg.Notification.Hub)
	r.ContentType = h.Get("Content-Type")
	h.Del("Content-Type")
	r.Header = h
}

// notifications are the batches a build wrote into the outbox, their
// payloads finished and committed just before the output is published
// (see Notifications above).
type notifications struct {
	batches []*notify.Batch
}

// enqueue puts the batches into the outbox, before the output that
// publishes what they name is renamed into place: once it is, the next
// build may no longer find those changes (it rebuilds its state from the
// output when a kill left it newer than the state).
func (ns *notifications) enqueue() error {
	for len(ns.batches) > 0 {
		if _, err := ns.batches[0].Commit(); err != nil {
			return err
		}
		ns.batches = ns.batches[1:]
	}
	return nil
}

// abort drops the batches not committed.
func (ns *notifications) abort() {
	for _, batch := range ns.batches {
		batch.Abort()
	}
	ns.batches = nil
}

// notifier writes the notifications of one build: of site s, after the
// previous state prev, at the build's time now, through the sink w.
type notifier struct {
	s    *site
	prev *snapshot.State
	now  int64
	w    *sink.Sink
	ob   *notify.Outbox
}

// prepareNotifications writes the batch of every channel of the plan p's
// sets and publishes each channel's newest notification at its topic. It
// runs after the documents are written, so that it knows which changed.
func prepareNotifications(s *site, prev *snapshot.State, p *buildPlan, w *sink.Sink) (ns *notifications, err error) {
	ns = &notifications{}
	if !s.cfg.Notification.On() {
		return ns, nil
	}
	defer func() {
		if err != nil {
			ns.abort()
		}
	}()
	n := &notifier{s: s, prev: prev, now: p.now, w: w, ob: notify.OpenOutbox(filepath.Join(s.cfg.State, snapshot.OutboxDir))}
	var docs []documentChange // the framework channels', read once
	for k := range p.sets {
		sp := &p.sets[k]
		for _, ch := range channels(s, sp.set) {
			entries := changeEntries(s, sp.events)
			if ch.capability == rs.CapFrameworkNotification {
				if docs == nil {
					if docs, err = n.documentChanges(); err != nil {
						return ns, err
					}
				}
				entries = frameworkEntries(s, sp.set, docs)
			}
			batch, err := n.writeChannel(sp.set, ch, entries)
			if err != nil {
				return ns, err
			}
			if batch != nil {
				ns.batches = append(ns.batches, batch)
			}
		}
	}
	return ns, nil
}

// entrySource hands each entry of a batch to add, in forward
// chronological order; the entry's datetime is set by add.
type entrySource func(add func(*rs.Entry) error) error

// changeEntries returns the entries of a set's Change Notification: the
// set's events of this build, in the order of its Change List and with
// the same loc, change, hash, length and type.
func changeEntries(s *site, events []snapshot.Event) entrySource {
	return func(add func(*rs.Entry) error) error {
		for i := range events {
			if err := add(changeEntry(s, &events[i])); err != nil {
				return err
			}
		}
		return nil
	}
}

// writeChannel writes the batch of one channel of set st and publishes
// its newest notification at the topic. It returns nil when the batch has
// no entries: the topic then keeps the channel's last notification.
func (n *notifier) writeChannel(st *set, ch channel, entries entrySource) (*notify.Batch, error) {
	topic := n.s.docURL(ch.rel)
	last, hasLast, err := n.ob.Last(topic)
	if err != nil {
		return nil, err
	}
	head := n.channelHead(st, ch, last, hasLast)
	batch, err := n.ob.Begin(topic, head)
	if err != nil {
		return nil, err
	}
	err = entries(func(e *rs.Entry) error {
		e.MD.Datetime = head.Until // in 1.0 mode too: a notification's entries have a datetime
		return batch.Add(e)
	})
	var newest string
	if err == nil {
		newest, err = batch.Finish()
	}
	if err != nil {
		batch.Abort()
		return nil, fmt.Errorf("notification of %s: %w", topic, err)
	}
	if newest == "" {
		batch.Abort()
		return nil, n.keepTopic(ch, last)
	}
	if err := n.publishTopic(ch.rel, newest); err != nil {
		batch.Abort()
		return nil, err
	}
	return batch, nil
}

// channelHead returns the head of a channel's batch: from the until of its
// last notification (last, when hasLast) to the build's time. A channel's
// first batch starts at the previous build, whose changes it does not
// cover; so does the batch of a channel that missed changes of its set
// while it was off, after a gap. A build whose time the clock put before
// the channel's last notification (one killed after its commit) ends its
// batch there.
func (n *notifier) channelHead(st *set, ch channel, last time.Time, hasLast bool) notify.Head {
	now := unixTime(n.now)
	prevBuild := now
	if n.prev.LastBuild != 0 {
		prevBuild = unixTime(n.prev.LastBuild)
	}
	head := notify.Head{Capability: ch.capability, From: last, Links: []rs.Link{n.s.upLink(st)}}
	switch changed := unixTime(n.prev.SetChanged[st.Name]); {
	case !hasLast:
		head.From = prevBuild
	case changed.After(last):
		head.From, head.AfterGap = prevBuild, true
	}
	head.Until = now
	if head.Until.Before(head.From) {
		head.Until = head.From
	}
	return head
}

// publishTopic publishes the payload in the file newest at the topic rel.
func (n *notifier) publishTopic(rel, newest string) error {
	return n.w.Write(rel, func(w io.Writer) error {
		f, err := os.Open(newest)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		return err
	})
}

// keepTopic publishes again what a channel's topic serves, when it is the
// channel's last notification (ending at last); otherwise (the output was
// wiped, or a build killed before its commit published a notification the
// outbox never took, or the file is not a notification) it publishes the
// topic empty, as before the first notification.
func (n *notifier) keepTopic(ch channel, last time.Time) error {
	cur := n.w.Path(ch.rel)
	if info, err := os.Stat(cur); err == nil && info.Size() > 0 {
		head, err := readPublished(cur, nil)
		if err == nil && head.Root == rs.URLSet && head.MD.Capability == ch.capability && head.MD.Until.Equal(last) {
			return n.publishTopic(ch.rel, cur)
		}
	}
	return n.w.Write(ch.rel, func(io.Writer) error { return nil })
}

// documentChange is a capability document this build created, updated
// or deleted: what a Framework Notification says of it.
type documentChange struct {
	rel, capability, change string
	index                   string // the URI of its index, for a component
}

// documentChanges returns the capability documents this build created or
// updated (those the sink holds), in the order of publication, then those it
// deleted (the previous build's that it does not write). Indexes are left
// out: their components stand for them.
func (n *notifier) documentChanges() ([]documentChange, error) {
	before := make(map[string]bool, len(n.prev.Outputs))
	for _, p := range n.prev.Outputs {
		before[p] = true
	}
	var fresh []string // the sink is locked while it hands them on
	err := n.w.Staged(func(rel string) error {
		if isFrameworkDocument(rel) {
			fresh = append(fresh, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var docs []documentChange
	for _, rel := range fresh {
		change := rs.ChangeCreated
		if before[rel] {
			change = rs.ChangeUpdated
		}
		d, err := documentChangeOf(n.w.Current(n.w.Path(rel)), rel, change)
		if err != nil {
			return nil, err
		}
		if d != nil {
			docs = append(docs, *d)
		}
	}
	written := map[string]bool{}
	for _, p := range n.w.Outputs() {
		written[p] = true
	}
	for _, p := range n.prev.Outputs {
		if written[p] || !isFrameworkDocument(p) {
			continue
		}
		d, err := documentChangeOf(n.w.Path(p), p, rs.ChangeDeleted)
		if errors.Is(err, fs.ErrNotExist) {
			continue // gone with the output already: nothing says what it was
		}
		if err != nil {
			return nil, err
		}
		if d != nil {
			docs = append(docs, *d)
		}
	}
	return docs, nil
}

// isFrameworkDocument reports whether the output file at rel may be a
// capability document: a document that is not a topic.
func isFrameworkDocument(rel string) bool {
	return sink.KindOf(rel) == sink.Document && !layout.IsTopic(rel)
}

// documentChangeOf reads the head of the document in file, published at
// rel, and returns what a Framework Notification says of its change; nil
// for an index and for what is no capability document (a manifest).
func documentChangeOf(file, rel, change string) (*documentChange, error) {
	head, err := readPublished(file, nil)
	if err != nil {
		return nil, err
	}
	if head.Root != rs.URLSet || !notify.IsDocumentCapability(head.MD.Capability) {
		return nil, nil
	}
	d := &documentChange{rel: rel, capability: head.MD.Capability, change: change}
	for _, l := range head.Links {
		if l.Rel == rs.RelIndex {
			d.index = l.Href
		}
	}
	return d, nil
}

// frameworkEntries returns the entries of set st's Framework
// Notification: the changes of its documents and of the Source
// Description above them.
func frameworkEntries(s *site, st *set, docs []documentChange) entrySource {
	return func(add func(*rs.Entry) error) error {
		for _, d := range docs {
			if d.rel != layout.SourceDescription && !strings.HasPrefix(d.rel, layout.SetDir(st.Name)+"/") {
				continue
			}
			e := rs.Entry{Loc: s.docURL(d.rel), MD: rs.MD{Capability: d.capability, Change: d.change}}
			if d.index != "" {
				e.Links = []rs.Link{{Rel: rs.RelIndex, Href: d.index}}
			}
			if err := add(&e); err != nil {
				return err
			}
		}
		return nil
	}
}
