// Package notify owns rsgen's push notifications: the ResourceSync Change
// Notification and Framework Notification specifications (1.0.1,
// 2017-07-20) over WebSub (W3C Recommendation, 2018-01-23). It holds the
// payload documents, the outbox that keeps them until a hub has taken
// them, the sender that submits them, the headers a topic URI is served
// with, and the subscriber side a Destination listens with.
//
// # Channels and payloads
//
// A channel is a WebSub topic: one Change Notification channel per set of
// resources, and Framework Notification channels for changes to the
// capability documents. A payload is a <urlset> whose root <rs:md> has
// the channel's capability ("change-notification" or
// "framework-notification") and the mandatory from and until of the
// interval it covers; its entries, in forward chronological order, each
// have an <rs:md> with change and datetime (and, for a Change
// Notification, hash, length and type as a Change List has them; for a
// Framework Notification, the capability of the document that changed and
// an rs:ln rel="index" naming the index of a component). Consecutive
// payloads of a channel cover consecutive intervals: each one's from is
// the until of the one before. A payload is never a <sitemapindex>: past
// the document limits (50,000 entries, 50 MB) it is split into several
// urlsets, each starting where the one before ended.
//
// # The outbox
//
// The build appends the payloads of its changes to an Outbox, a folder in
// the state: one folder per channel, one file per payload, named by a
// sequence number, and a channel record that commits a batch. A payload
// is written once and never rewritten, so a notification sent twice is
// byte for byte the same and a Destination drops the duplicate. Every
// write is a temporary file, fsync, rename and fsync of the folder, and a
// batch becomes part of the outbox only when its channel record is
// renamed into place: a process killed at any point leaves the outbox as
// it was before the batch or as it is after it. Batch.Finish ends the
// payloads before that commit, so that a build can publish the newest at
// its topic with the rest of its output.
//
// # Sending
//
// A Sender submits the pending payloads to the hub, oldest first, either
// as the specifications do (a POST of the payload with Content-Type
// application/xml and a Link header naming the topic and the hub) or with
// a WebSub publish ping (hub.mode=publish with hub.topic and hub.url) for
// hubs that fetch the topic. A payload leaves the outbox only when the hub
// answered 2xx. Failures are retried with backoff, then the Sender stops
// and leaves the rest for the next run. Sender.Until holds back the
// payloads that end later: those of builds whose output is not known to
// be published.
//
// # Subscribing
//
// A Subscriber is the Destination's side: an http.Handler for its
// callbacks that subscribes with a random secret, answers the hub's
// verification only for what it asked, checks X-Hub-Signature (sha256 or
// better) on every delivery and ignores one that fails or whose Link
// header names another topic, renews leases
// before they end, unsubscribes on Close, and hands each payload on as a
// Delivery with its parsed entries and, when notifications were missed, the
// gap that the Destination closes from the Change Lists.
//
// # Caveats
//
// rsgen gives every change of a build the build's time, so a build with
// more changes than one document holds is split into parts whose
// intervals after the first are the one instant [t, t]. Intervals cannot
// reveal a lost part among those, so the Subscriber reports each such
// part with a gap of that instant: the Destination reads the Change List
// that covers it.
//
// With ping = "websub" the hub fetches the topic URI, which serves only
// the newest payload of the channel: pending payloads older than it
// cannot be delivered, and leave the outbox with it. A Destination sees
// the gap and reads the Change Lists.
package notify
