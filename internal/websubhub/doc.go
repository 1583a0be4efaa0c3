// Package websubhub is a TEST COMPONENT, not a product feature: a WebSub
// hub that rsgen's tests publish notifications to and subscribe through.
// rsgen never runs it for a user; a Source configures a real hub.
//
// It exists because no WebSub hub can be installed on the machines the
// tests run on (the Go hubs' modules are refused by the module proxy, and
// none is packaged for Debian or npm). It follows the W3C WebSub
// Recommendation (2018-01-23) to the letter where the tests could notice:
//
//   - Subscribing (§5.1): a form POST with hub.mode "subscribe" or
//     "unsubscribe", hub.callback, hub.topic and the optional
//     hub.lease_seconds and hub.secret (under 200 bytes); parameters it
//     does not understand are ignored. An error is a 400 with a plain-text
//     reason; a good request is answered 202 Accepted before anything else
//     happens.
//   - Verification of intent (§5.3), asynchronous: a GET to the callback,
//     its query string kept and hub.mode, hub.topic, a random single-use
//     hub.challenge and (for a subscription) hub.lease_seconds appended.
//     Only a 2xx whose body is the challenge verifies; otherwise the
//     subscription is left as it was. A subscription the hub refuses
//     (Options.Deny) gets hub.mode=denied instead (§5.2).
//   - Leases: the requested lease within Options.MinLease and
//     Options.MaxLease, the default 10 days, echoed in the verification;
//     an expired subscription gets nothing. Subscribing again before the
//     lease ends renews the same (topic, callback) subscription, with its
//     new secret or none.
//   - Publishing (§6 leaves it open): a form POST with hub.mode=publish and
//     hub.topic or hub.url (either, or both, as hubs differ); the hub then
//     fetches the topic and distributes what it answered. And the
//     ResourceSync notification specifications' direct submission: a POST
//     whose body is the payload, with a Content-Type other than a form and
//     `Link: <TOPIC>; rel="self", <HUB>; rel="hub"`, distributed as is.
//   - Content distribution (§7): a POST of the full content to each live
//     subscription of the topic, with the topic's Content-Type, one Link
//     header naming the topic (rel=self) and the hub (rel=hub), and, for a
//     subscription with a secret, X-Hub-Signature: ALG=HEX, an HMAC of the
//     body (sha256 by default; sha1, sha384 and sha512 as §7.1.1 allows).
//     Only a 2xx succeeds; a failure is retried with backoff up to
//     Options.Attempts, a 410 ends the subscription. Deliveries to one
//     subscription keep the order of publication.
//
// The tests observe the hub through its event log (Await) rather than by
// waiting: every verification, delivery and failure is an Event. Leases
// are measured on Options.Now and retries wait through Options.Sleep, so a
// test can expire a lease or skip a backoff without a wall clock.
//
// # Caveats
//
// The hub keeps its subscriptions in memory, and serves plain HTTP on
// loopback; it validates no publisher and no topic beyond its form.
package websubhub
