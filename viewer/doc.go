// Package viewer owns rsgen's document browser: a static page, script and
// stylesheet published with every site at resourcesync/index.html (Index),
// with resourcesync/_viewer/viewer.js and viewer.css beside it. The
// generator publishes Files as they are; nothing in them depends on the
// site, and they make no request outside it.
//
// # What the page does
//
// It renders any ResourceSync document of the Source from the XML that
// Destinations read, so it cannot drift from them, and needs no XSLT. It
// starts from the Source Description at ../.well-known/resourcesync,
// relative to itself, and follows Capability Lists, Resource and Change
// Lists, their indexes and parts, dumps and their manifests, and archives.
// Each view shows the document's own rs:md and rs:ln, a status line that
// says whether it is open or closed and what a Destination should do with
// it, and a table of its entries with every attribute as a column and
// every rs:ln linked by its relation. An entry's own view shows every value
// in full. A Capability List's view also lists its notification channels
// (ResourceSync Change and Framework Notification over WebSub): the kind,
// the topic, which opens its newest notification in the browser, and the
// hub to subscribe at. The Source Description and each Capability List
// show "Sync this Source": the rsgen sync command line for the base URL
// (with --set NAME and a folder per set when there are several, the name
// as package destination gives it) or for the Capability List, and resync
// 2.0.1's, whose incremental command names the open Change List of the
// set's Change List Index, since resync cannot read an index; every word
// is quoted for a POSIX shell, so that a hostile URI pasted runs nothing.
// Lists of 50,000 entries are paged (100 rows by default), and
// filtered by path, media type and change, and sorted by any column, in
// tens of milliseconds. Pictures drawn as inline SVG, each with its numbers
// as a table: resources and bytes by media type (from the Resource List),
// and changes per day (per month over long spans) across the Change List
// Index and its archive.
//
// Routes live in the fragment: index.html#doc=resourcesync/S/changelist.xml
// &entry=3&q=…&type=…&sort=…&page=…, so every view can be linked and Back
// works. Document keys are relative to the base_url.
//
// # Where documents are fetched from
//
// The documents name URIs under the site's base_url, which need not be where
// the page is served: a dev server on another port, a host under a
// sub-path. The page takes the base_url from the Source Description's
// Capability List URIs (rsgen writes them at
// <base_url>resourcesync/<set>/capabilitylist.xml) and fetches every URI
// under it relative to its own location; links to resources are rewritten
// the same way. No other document is read: only those under the base_url
// and on the page's own origin, so that a link to a view (its #doc=
// fragment, which may name any URL) cannot make the page fetch another
// address; the page says why instead, and links to documents elsewhere
// open them as they are, outside the page. Its Content-Security-Policy
// allows no other connection either. Opened from file://, the page tries
// XMLHttpRequest, which
// browsers refuse by default (Chromium's fetch never reads file://), and
// then says to serve the folder over HTTP.
//
// # Reading documents
//
// Documents up to 1 MB are parsed with DOMParser. Larger ones are read by
// a scanner over the text, because Chromium's DOMParser alone takes 0.8 s
// for the 12 MB of a 50,000-entry Resource List and the scanner a quarter
// of that. The scanner reads the plain XML that Sitemaps are written in and
// hands anything else (CDATA, a DOCTYPE, entities, namespace declarations
// below the root, mismatched tags) to DOMParser; the unit tests check that
// both give the same result on every document of the example site.
//
// # Tests
//
// jstest/ holds the unit tests of the script's pure half (parsing, routes,
// URI mapping, status words, filtering, sorting, aggregates, chart
// geometry), run by Node's test runner (npm ci && npm test). The Go tests
// drive Debian's Chromium, headless with XSLT disabled, through the
// DevTools protocol over --remote-debugging-pipe (chrome_test.go: no
// websocket, no dependency), on the example site built over four days of
// edits and served under /sub/ on another address than its base_url, and
// on a 50,000-entry set (RSGEN_STRESS=1). They skip without Chromium,
// unless RSGEN_REQUIRE_CHROMIUM=1, and with -short.
// RSGEN_VIEWER_SCREENSHOTS=testdata/screenshots keeps the screenshots they
// take.
//
// # Caveats
//
// The base_url is found from rsgen's layout; a Source Description whose
// Capability Lists are elsewhere makes the page fetch every URI as written.
// The page keeps the last six documents it read, so an open Change List
// shown again within a visit is not re-read until the page is reloaded.
// The scanner does not check that a large document is well-formed beyond
// its tags matching; rsgen check does.
package viewer
