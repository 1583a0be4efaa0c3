// Unit tests of the document browser's pure functions (assets/viewer.js):
// parsing, places, routes, meaning, tables, aggregates, formats and chart
// geometry. Run: npm ci && npm test (in viewer/), or node --test jstest/.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const xmldom = require('@xmldom/xmldom');

// DOMParser is xmldom's, quiet: a fatal error still throws, as the
// browser's parser fails, without xmldom also printing it.
class DOMParser extends xmldom.DOMParser {
  constructor() {
    super({ onError() {} });
  }
}
const v = require('../assets/viewer.js');

const HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n';
const NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/"';

function read(xml) {
  return v.readDocument(v.parseXML(HEAD + xml, DOMParser));
}

const resourceList = read(`<urlset ${NS}>
  <rs:ln rel="up" href="http://localhost:8000/resourcesync/col/capabilitylist.xml"/>
  <rs:md capability="resourcelist" at="2026-01-04T09:00:00Z"/>
  <url>
    <loc>http://localhost:8000/col/b%20c.png</loc>
    <lastmod>2026-01-01T10:00:00Z</lastmod>
    <rs:md type="image/png" length="93" hash="md5:ce900f3451be6a7cc31250d4e87b6e07 sha-256:1e33fa4742079ff2890c5095660727a493168d27f22bcccd05b2428bba7157e7" x-extra="1"/>
    <rs:ln rel="duplicate" href="https://mirror.example.net/col/b%20c.png" pri="1"/>
    <rs:ln rel="http://www.openarchives.org/rs/terms/patch" href="http://localhost:8000/p.json-patch" type="application/json-patch+json"/>
  </url>
  <url>
    <loc>http://localhost:8000/col/a.json</loc>
    <rs:md length="1200" type="application/json"/>
  </url>
  <url>
    <loc>http://localhost:8000/col/%C3%AEle.pdf</loc>
    <lastmod>2026-01-02T10:00:00Z</lastmod>
  </url>
</urlset>`);

test('readDocument reads the root, rs:md, rs:ln and every entry', () => {
  assert.equal(resourceList.root, 'urlset');
  assert.equal(resourceList.capability, 'resourcelist');
  assert.deepEqual(resourceList.md, { capability: 'resourcelist', at: '2026-01-04T09:00:00Z' });
  assert.deepEqual(resourceList.links, [{ rel: 'up', href: 'http://localhost:8000/resourcesync/col/capabilitylist.xml' }]);
  assert.equal(resourceList.entries.length, 3);
  const [first, second] = resourceList.entries;
  assert.equal(first.n, 1);
  assert.equal(first.loc, 'http://localhost:8000/col/b%20c.png');
  assert.equal(first.lastmod, '2026-01-01T10:00:00Z');
  assert.equal(first.md['x-extra'], '1');
  assert.deepEqual(first.links[0], { rel: 'duplicate', href: 'https://mirror.example.net/col/b%20c.png', pri: '1' });
  assert.equal(second.lastmod, '');
  assert.deepEqual(second.links, []);
  assert.ok(resourceList.hasLastmod);
});

test('readDocument orders attribute names as columns: known first, the rest alphabetically', () => {
  assert.deepEqual(resourceList.mdNames, ['length', 'type', 'hash', 'x-extra']);
  assert.deepEqual(resourceList.rels, ['duplicate', 'http://www.openarchives.org/rs/terms/patch']);
});

test('readDocument reads a sitemapindex and its sitemaps', () => {
  const d = read(`<sitemapindex ${NS}><rs:md capability="changelist" from="2026-01-01T00:00:00Z"/>
    <sitemap><loc>http://h/resourcesync/s/changelists/a.xml</loc><rs:md from="2026-01-01T00:00:00Z" until="2026-01-02T00:00:00Z"/></sitemap>
    <sitemap><loc>http://h/resourcesync/s/changelists/b.xml</loc><rs:md from="2026-01-02T00:00:00Z"/></sitemap>
  </sitemapindex>`);
  assert.equal(d.root, 'sitemapindex');
  assert.equal(d.entries.length, 2);
  assert.deepEqual(d.mdNames, ['from', 'until']);
  assert.equal(v.kindOf(d), 'Change List Index');
});

test('readDocument refuses what is not a Sitemap, naming its root', () => {
  assert.throws(() => read('<html xmlns="http://www.w3.org/1999/xhtml"/>'), /root element is <html>/);
  assert.throws(() => read('<urlset/>'), /not a ResourceSync document/);
});

test('parseXML reports a document that is not well-formed', () => {
  assert.throws(() => v.parseXML('<urlset><url></urlset>', DOMParser), /^Error: not well-formed XML: .*mismatch/);
});

test('parseXML reports a browser-style parsererror element', () => {
  class ParserWithErrorElement {
    parseFromString() {
      return new xmldom.DOMParser().parseFromString('<html><parsererror>line 2: bad</parsererror></html>', 'application/xml');
    }
  }
  assert.throws(() => v.parseXML('<x', ParserWithErrorElement), /not well-formed XML: line 2: bad/);
});

// -------------------------------------------------------------- places

const description = read(`<urlset ${NS}><rs:md capability="description"/>
  <url><loc>http://localhost:8000/resourcesync/col/capabilitylist.xml</loc><rs:md capability="capabilitylist"/></url>
</urlset>`);

test('baseFromDescription finds the base_url under which rsgen wrote the Capability Lists', () => {
  assert.equal(v.baseFromDescription(description), 'http://localhost:8000/');
  const sub = read(`<urlset ${NS}><rs:md capability="description"/>
    <url><loc>https://data.example.org/a/b/resourcesync/s/capabilitylist.xml</loc></url></urlset>`);
  assert.equal(v.baseFromDescription(sub), 'https://data.example.org/a/b/');
  const foreign = read(`<urlset ${NS}><rs:md capability="description"/>
    <url><loc>https://other.example.org/caps.xml</loc></url></urlset>`);
  assert.equal(v.baseFromDescription(foreign), '');
});

test('a page served elsewhere fetches the base_url\'s documents from its own Source root', () => {
  const site = v.makeSite('http://127.0.0.1:8080/sub/resourcesync/index.html#doc=x');
  assert.equal(site.root, 'http://127.0.0.1:8080/sub/');
  assert.equal(site.description, 'http://127.0.0.1:8080/sub/.well-known/resourcesync');
  site.base = 'http://localhost:8000/';
  assert.equal(v.fetchURL(site, 'http://localhost:8000/resourcesync/col/resourcelist.xml'),
    'http://127.0.0.1:8080/sub/resourcesync/col/resourcelist.xml');
  assert.equal(v.fetchURL(site, 'http://localhost:8000/col/b%20c.png'), 'http://127.0.0.1:8080/sub/col/b%20c.png');
  assert.equal(v.fetchURL(site, 'https://mirror.example.net/x'), 'https://mirror.example.net/x');
});

test('route keys are relative to the base_url and round-trip', () => {
  const site = v.makeSite('http://127.0.0.1:8080/resourcesync/');
  site.base = 'http://localhost:8000/';
  const url = 'http://localhost:8000/resourcesync/col/changelists/changelist-20260101T000000Z.xml';
  const key = v.routeKey(site, url);
  assert.equal(key, 'resourcesync/col/changelists/changelist-20260101T000000Z.xml');
  assert.equal(v.routeURL(site, key), url);
  assert.equal(v.routeKey(site, 'https://elsewhere.example/x.xml'), 'https://elsewhere.example/x.xml');
  assert.equal(v.routeURL(site, 'https://elsewhere.example/x.xml'), 'https://elsewhere.example/x.xml');
  assert.equal(v.routeURL(site, v.DESCRIPTION_PATH), 'http://localhost:8000/.well-known/resourcesync');
});

test('without a known base_url, keys are relative to the page\'s Source root', () => {
  const site = v.makeSite('http://127.0.0.1:8080/resourcesync/index.html');
  assert.equal(v.routeKey(site, site.description), v.DESCRIPTION_PATH);
  assert.equal(v.routeURL(site, v.DESCRIPTION_PATH), site.description);
  assert.equal(v.fetchURL(site, 'http://localhost:8000/a'), 'http://localhost:8000/a');
});

test('readable: only the documents under the base_url and on the page\'s own origin are read', () => {
  const site = v.makeSite('http://127.0.0.1:8080/sub/resourcesync/index.html');
  site.base = 'https://data.example.org/';
  assert.ok(v.readable(site, 'https://data.example.org/resourcesync/s/resourcelist.xml'));
  assert.ok(v.readable(site, 'http://127.0.0.1:8080/sub/.well-known/resourcesync'));
  assert.ok(v.readable(site, 'http://127.0.0.1:8080/elsewhere.xml'));
  for (const url of ['https://evil.example/x.xml', 'http://127.0.0.1:9999/x.xml', 'https://data.example.org.evil.example/x.xml',
    'http://data.example.org/x.xml', 'javascript:alert(1)', 'not a url']) {
    assert.ok(!v.readable(site, url), url);
  }
  // A route key that names an address elsewhere is not read.
  assert.ok(!v.readable(site, v.routeURL(site, 'https://evil.example/x.xml')));
});

test('safeHref links only to http, https and the page\'s own scheme', () => {
  assert.equal(v.safeHref('https://a.example/x y', 'http:'), 'https://a.example/x%20y');
  assert.equal(v.safeHref('javascript:alert(1)', 'http:'), null);
  assert.equal(v.safeHref('data:text/html,<script>', 'http:'), null);
  assert.equal(v.safeHref('file:///etc/passwd', 'http:'), null);
  assert.equal(v.safeHref('file:///srv/out/a.xml', 'file:'), 'file:///srv/out/a.xml');
  assert.equal(v.safeHref('not a url', 'http:'), null);
});

test('displayPath decodes what it can and keeps the rest as written', () => {
  const site = v.makeSite('http://127.0.0.1/resourcesync/');
  site.base = 'http://localhost:8000/';
  assert.equal(v.displayPath(site, 'http://localhost:8000/col/%C3%AEle%20de%20r%C3%A9.png'), 'col/île de ré.png');
  assert.equal(v.displayPath(site, 'http://localhost:8000/col/100%'), 'col/100%');
  assert.equal(v.displayPath(site, 'https://mirror.example.net/a%20b'), 'https://mirror.example.net/a b');
});

test('setName and fileName name documents of rsgen\'s layout', () => {
  assert.equal(v.setName('http://h/resourcesync/survey-maps/changelists/c.xml'), 'survey-maps');
  assert.equal(v.setName('http://h/.well-known/resourcesync'), '');
  assert.equal(v.fileName('http://h/resourcesync/s/resourcelist.xml'), 'resourcelist.xml');
  assert.equal(v.fileName('http://h/col/manuscripts/'), 'manuscripts');
  assert.equal(v.fileName('http://h/col/a%20b.png?x=1'), 'a b.png');
});

// -------------------------------------------------------------- routes

test('routes round-trip through the fragment, defaults left out', () => {
  const r = v.parseRoute('#doc=resourcesync/col/resourcelist.xml&q=ms%20001&type=image/png&sort=md:length&dir=desc&page=3&size=500');
  assert.deepEqual(r, { doc: 'resourcesync/col/resourcelist.xml', entry: 0, q: 'ms 001', type: 'image/png', change: '', sort: 'md:length', dir: 'desc', page: 3, size: 500 });
  assert.equal(v.routeHash(r), '#doc=resourcesync/col/resourcelist.xml&q=ms%20001&type=image/png&sort=md:length&dir=desc&page=3&size=500');
  assert.deepEqual(v.parseRoute(v.routeHash(r)), r);
  assert.equal(v.routeHash(v.parseRoute('')), '#doc=.well-known/resourcesync');
});

test('parseRoute falls back to defaults for nonsense', () => {
  const r = v.parseRoute('#doc=&entry=-2&page=abc&size=7&dir=sideways');
  assert.equal(r.doc, v.DESCRIPTION_PATH);
  assert.equal(r.entry, 0);
  assert.equal(r.page, 1);
  assert.equal(r.size, 100);
  assert.equal(r.dir, 'asc');
});

test('a route key with & or # survives the fragment', () => {
  const r = { doc: 'resourcesync/a&b#c.xml', entry: 2 };
  assert.equal(v.parseRoute(v.routeHash(r)).doc, 'resourcesync/a&b#c.xml');
});

// -------------------------------------------------------------- meaning

function doc(capability, md, entries, links, root) {
  return { root: root || 'urlset', capability, md: Object.assign({ capability }, md), links: links || [], entries: entries || [] };
}

test('statusOf says a closed Change List never changes and need not be fetched again', () => {
  const st = v.statusOf(doc('changelist', { from: '2026-01-01T00:00:00Z', until: '2026-01-02T00:00:00Z' }));
  assert.equal(st.state, 'closed');
  assert.equal(st.text, 'Covers from 2026-01-01T00:00:00Z until 2026-01-02T00:00:00Z. This list never changes: a Destination that has processed it need not fetch it again.');
});

test('statusOf says an open Change List grows and is polled', () => {
  const st = v.statusOf(doc('changelist', { from: '2026-01-02T00:00:00Z' }));
  assert.equal(st.state, 'open');
  assert.match(st.text, /^Covers changes from 2026-01-02T00:00:00Z on/);
  assert.match(st.text, /polls it/);
});

test('statusOf counts the open and closed lists of an index', () => {
  const st = v.statusOf(doc('changelist', { from: 'F' }, [
    { md: { from: 'a', until: 'b' } }, { md: { from: 'b', until: 'c' } }, { md: { from: 'c' } }], [], 'sitemapindex'));
  assert.equal(st.state, 'open');
  assert.match(st.text, /An index of 3 Change Lists from F: 2 closed .* and 1 open \(poll it for new events\)/);
  const closed = v.statusOf(doc('changedump', {}, [{ md: { until: 'x' } }], [], 'sitemapindex'));
  assert.equal(closed.state, 'closed');
});

test('statusOf tells a live Resource List from an archived copy', () => {
  const live = v.statusOf(doc('resourcelist', { at: 'T' }, [], [{ rel: 'archives', href: 'x' }]), 'https://d.example/resourcesync/s/resourcelist.xml');
  assert.equal(live.state, 'snapshot');
  assert.match(live.text, /baseline/);
  assert.match(live.text, /rewrites it whenever the set changes; earlier snapshots go to its archive/);
  const copy = v.statusOf(doc('resourcelist', { at: 'T', completed: 'U' }), 'https://d.example/resourcesync/s/resourcelists/resourcelist-20260101T000000Z.xml');
  assert.match(copy.text, /at T \(completed U\)/);
  assert.match(copy.text, /This archived copy is never rewritten/);
});

test('statusOf says that a Resource List without an archive is rewritten too, its earlier snapshots not kept', () => {
  for (const url of ['https://d.example/resourcesync/s/resourcelist.xml', 'https://d.example/resourcesync/s/resourcelist-00001.xml']) {
    const st = v.statusOf(doc('resourcelist', { at: 'T' }), url);
    assert.match(st.text, /rewrites it whenever the set changes; earlier snapshots are not kept/);
    assert.doesNotMatch(st.text, /not rewritten|never rewritten/);
  }
});

test('statusOf explains every capability rsgen publishes, and any other', () => {
  for (const cap of ['description', 'capabilitylist', 'resourcedump', 'resourcedump-manifest', 'changedump-manifest',
    'resourcelist-archive', 'changelist-archive', 'resourcedump-archive', 'changedump-archive']) {
    const st = v.statusOf(doc(cap, {}));
    assert.ok(st.state && st.text.length > 40, cap);
  }
  assert.match(v.statusOf(doc('fancy', {})).text, /capability “fancy”/);
  assert.equal(v.kindOf(doc('fancy', {})), '“fancy” document');
});

test('entries of lists of documents are documents; resources are not', () => {
  const e = { md: {} };
  assert.ok(v.entryIsDocument(doc('capabilitylist'), e));
  assert.ok(v.entryIsDocument(doc('changelist', {}, [], [], 'sitemapindex'), e));
  assert.ok(v.entryIsDocument(doc('changelist-archive'), e));
  assert.ok(!v.entryIsDocument(doc('resourcelist'), e));
  assert.ok(!v.entryIsDocument(doc('resourcedump'), e));
  assert.ok(v.linkIsDocument({ rel: 'up' }));
  assert.ok(v.linkIsDocument({ rel: 'contents', type: 'application/xml' }));
  assert.ok(!v.linkIsDocument({ rel: 'contents', type: 'application/zip' }));
  assert.ok(!v.linkIsDocument({ rel: 'describedby' }));
  assert.equal(v.relLabel('http://www.openarchives.org/rs/terms/patch'), 'patch');
});

// -------------------------------------------------------------- tables

test('columnsOf gives #, loc, lastmod, every attribute and links', () => {
  const cols = v.columnsOf(resourceList).map((c) => c.key + ':' + c.kind);
  assert.deepEqual(cols, ['n:n', 'loc:loc', 'lastmod:date', 'md:length:number', 'md:type:text', 'md:hash:hash', 'md:x-extra:text', 'links:links']);
});

test('filterEntries matches decoded paths in any case, and type and change', () => {
  const e = resourceList.entries;
  assert.deepEqual(v.filterEntries(e, { q: 'B C' }).map((x) => x.n), [1]);
  assert.deepEqual(v.filterEntries(e, { q: 'Île' }).map((x) => x.n), [3]);
  assert.deepEqual(v.filterEntries(e, { type: 'application/json' }).map((x) => x.n), [2]);
  assert.equal(v.filterEntries(e, {}), e);
  const changes = [{ n: 1, loc: 'a', md: { change: 'created' } }, { n: 2, loc: 'b', md: { change: 'deleted' } }];
  assert.deepEqual(v.filterEntries(changes, { change: 'deleted' }).map((x) => x.n), [2]);
  assert.deepEqual(v.filterEntries(e, { type: v.NONE }).map((x) => x.n), [3], 'NONE keeps the entries without a type');
});

test('sortEntries sorts numbers as numbers, keeps missing values last either way, and ties in order', () => {
  const e = resourceList.entries;
  assert.deepEqual(v.sortEntries(e, 'md:length', 'asc').map((x) => x.n), [1, 2, 3]);
  assert.deepEqual(v.sortEntries(e, 'md:length', 'desc').map((x) => x.n), [2, 1, 3]);
  assert.deepEqual(v.sortEntries(e, 'lastmod', 'desc').map((x) => x.n), [3, 1, 2]);
  assert.deepEqual(v.sortEntries(e, 'n', 'desc').map((x) => x.n), [3, 2, 1]);
  assert.equal(v.sortEntries(e, 'n', 'asc'), e);
  const ties = [{ n: 1, md: { type: 'b' } }, { n: 2, md: { type: 'a' } }, { n: 3, md: { type: 'b' } }];
  assert.deepEqual(v.sortEntries(ties, 'md:type', 'desc').map((x) => x.n), [1, 3, 2]);
});

test('countBy counts values, most frequent first', () => {
  const e = [{ md: { type: 'a' } }, { md: { type: 'b' } }, { md: { type: 'b' } }, { md: {} }];
  assert.deepEqual(v.countBy(e, 'type'), [{ value: 'b', count: 2 }, { value: '', count: 1 }, { value: 'a', count: 1 }]);
});

test('pageOf clamps the page to the entries there are', () => {
  assert.deepEqual(v.pageOf(50000, 1, 100), { page: 1, pages: 500, start: 0, end: 100 });
  assert.deepEqual(v.pageOf(50000, 900, 100), { page: 500, pages: 500, start: 49900, end: 50000 });
  assert.deepEqual(v.pageOf(0, 3, 100), { page: 1, pages: 1, start: 0, end: 0 });
});

// -------------------------------------------------------------- aggregates

test('mediaTypeStats counts resources and bytes by type', () => {
  assert.deepEqual(v.mediaTypeStats(resourceList.entries), [
    { type: 'application/json', count: 1, bytes: 1200 },
    { type: 'image/png', count: 1, bytes: 93 },
    { type: '(no type)', count: 1, bytes: 0 },
  ]);
});

test('foldTail folds the smallest types into one row', () => {
  const stats = Array.from({ length: 5 }, (_, i) => ({ type: 't' + i, count: 10 - i, bytes: i }));
  const folded = v.foldTail(stats, 3);
  assert.deepEqual(folded[2], { type: 'other (3 types)', count: 8 + 7 + 6, bytes: 2 + 3 + 4 });
  assert.equal(v.foldTail(stats, 5), stats);
});

test('eventDay takes the UTC day of datetime, else of lastmod', () => {
  assert.equal(v.eventDay({ md: { datetime: '2026-01-01T23:30:00Z' }, lastmod: '' }), '2026-01-01');
  assert.equal(v.eventDay({ md: { datetime: '2026-01-01T23:30:00-02:00' }, lastmod: '' }), '2026-01-02');
  assert.equal(v.eventDay({ md: {}, lastmod: '2026-03-04T00:00:00Z' }), '2026-03-04');
  assert.equal(v.eventDay({ md: {}, lastmod: '' }), '');
  assert.equal(v.eventDay({ md: { datetime: 'yesterday' }, lastmod: '' }), '');
});

const events = [
  { md: { change: 'created', datetime: '2026-01-01T10:00:00Z' } },
  { md: { change: 'updated', datetime: '2026-01-01T11:00:00Z' } },
  { md: { change: 'created', datetime: '2026-01-01T12:00:00Z' } },
  { md: { change: 'deleted', datetime: '2026-01-04T12:00:00Z' } },
  { md: { change: 'updated' }, lastmod: '' },
  { md: {} },
];

test('changeActivity counts events by day and change, and those without a time', () => {
  const a = v.changeActivity(events);
  assert.deepEqual(Object.fromEntries(a.days), {
    '2026-01-01': { created: 2, updated: 1, deleted: 0 },
    '2026-01-04': { created: 0, updated: 0, deleted: 1 },
  });
  assert.equal(a.undated, 1);
});

test('activityBuckets fills the days without changes', () => {
  const b = v.activityBuckets(v.changeActivity(events).days);
  assert.equal(b.unit, 'day');
  assert.deepEqual(b.buckets.map((x) => x.key), ['2026-01-01', '2026-01-02', '2026-01-03', '2026-01-04']);
  assert.deepEqual(b.buckets[1], { key: '2026-01-02', created: 0, updated: 0, deleted: 0 });
  assert.deepEqual(v.activityBuckets(new Map()), { unit: 'day', buckets: [] });
});

test('activityBuckets counts by month over long spans', () => {
  const days = new Map([
    ['2025-01-15', { created: 1, updated: 0, deleted: 0 }],
    ['2025-01-20', { created: 0, updated: 2, deleted: 0 }],
    ['2025-06-01', { created: 0, updated: 0, deleted: 3 }],
  ]);
  const b = v.activityBuckets(days);
  assert.equal(b.unit, 'month');
  assert.deepEqual(b.buckets.map((x) => x.key), ['2025-01', '2025-02', '2025-03', '2025-04', '2025-05', '2025-06']);
  assert.deepEqual(b.buckets[0], { key: '2025-01', created: 1, updated: 2, deleted: 0 });
  assert.equal(b.buckets[5].deleted, 3);
});

// -------------------------------------------------------------- formats

test('formats', () => {
  assert.equal(v.formatCount(50000), '50,000');
  assert.equal(v.formatCount(999), '999');
  assert.equal(v.formatCount(1234567), '1,234,567');
  assert.equal(v.formatBytes(93), '93 B');
  assert.equal(v.formatBytes(4700), '4.6 KiB');
  assert.equal(v.formatBytes(50 * 1024 * 1024), '50 MiB');
  assert.equal(v.formatMs(412.4), '412 ms');
  assert.equal(v.formatMs(1530), '1.53 s');
  assert.deepEqual(v.shortHash('md5:ce900f3451be6a7cc31250d4e87b6e07 sha-256:1e33fa4742079ff2890c5095660727a4'),
    ['md5:ce900f3451be…', 'sha-256:1e33fa474207…']);
  assert.deepEqual(v.shortHash('md5:abc'), ['md5:abc']);
});

// -------------------------------------------------------------- charts

test('niceMax rounds up to 1, 2 or 5 times a power of ten', () => {
  assert.deepEqual([0, 1, 3, 7, 10, 11, 180, 50000].map(v.niceMax), [1, 1, 5, 10, 10, 20, 200, 50000]);
});

test('activityChart stacks created, updated and deleted in proportion', () => {
  const buckets = [
    { key: 'a', created: 2, updated: 1, deleted: 1 },
    { key: 'b', created: 0, updated: 0, deleted: 0 },
    { key: 'c', created: 0, updated: 0, deleted: 2 },
  ];
  const g = v.activityChart(buckets, 400, 200);
  assert.equal(g.max, 5);
  assert.equal(g.bars.length, 3);
  const [a, b, c] = g.bars;
  assert.deepEqual(a.segments.map((s) => s.change), ['created', 'updated', 'deleted']);
  const unit = g.plotH / g.max;
  for (const s of a.segments) assert.ok(Math.abs(s.height - s.count * unit) < 1e-9);
  // Stacked from the axis up, without gaps.
  assert.ok(Math.abs(a.segments[0].y + a.segments[0].height - (g.top + g.plotH)) < 1e-9);
  assert.ok(Math.abs(a.segments[1].y + a.segments[1].height - a.segments[0].y) < 1e-9);
  assert.deepEqual(b.segments, []);
  assert.equal(c.total, 2);
  assert.ok(a.x < b.x && b.x < c.x && c.x + c.width <= g.left + g.plotW);
  assert.deepEqual(g.ticks.map((t) => t.value), [0, 5]);
});

test('barRows draws the largest value across the room and the rest in proportion', () => {
  const rows = v.barRows([{ type: 'a', count: 10 }, { type: 'b', count: 5 }, { type: 'c', count: 0 }], 'count', 400, 100, 26);
  const room = 400 - 100 - 90;
  assert.equal(rows[0].width, room);
  assert.equal(rows[1].width, room / 2);
  assert.equal(rows[2].width, 0);
  assert.deepEqual(rows.map((r) => r.y), [0, 26, 52]);
});

test('mapLimit keeps order and at most limit calls running', async () => {
  let running = 0;
  let most = 0;
  const out = await v.mapLimit([5, 1, 4, 2, 3], 2, async (x) => {
    running++;
    most = Math.max(most, running);
    await new Promise((resolve) => setImmediate(resolve));
    running--;
    return x * 10;
  });
  assert.deepEqual(out, [50, 10, 40, 20, 30]);
  assert.equal(most, 2);
});

// -------------------------------------------------------------- scanner

const { readFileSync, readdirSync, statSync } = require('node:fs');
const path = require('node:path');

function bothReaders(xml) {
  return [v.scanDocument(xml), v.readDocument(v.parseXML(xml, DOMParser))];
}

test('scanDocument reads what DOMParser reads, in the same shape', () => {
  const xml = HEAD + `<?xml-stylesheet type="text/xsl" href="s.xsl"?>
<!-- a comment before the root -->
<urlset ${NS}>
  <rs:ln rel="up" href="http://h/a?x=1&amp;y=2"/>
  <rs:md capability="changelist" from='2026-01-01T00:00:00Z'/>
  <!-- a comment between entries -->
  <url>
    <loc>
      http://h/a%20b&amp;c&#x2F;d&#47;e
    </loc>
    <lastmod>2026-01-01T10:00:00Z</lastmod>
    <rs:md change="updated" datetime="2026-01-01T10:00:00Z" hash="md5:00" length = "5" type="text/plain"></rs:md>
    <rs:ln rel="alternate" href="http://h/x&quot;y&lt;z&gt;" type='a "quoted" type'/>
    <other xmlns:o="urn:o"><loc>not an entry's loc</loc></other>
  </url>
  <url><loc>http://h/2</loc><rs:md change="deleted"/></url>
</urlset>`;
  const [scanned, parsed] = bothReaders(xml);
  assert.deepEqual(scanned, null, 'a namespace declaration below the root is left to DOMParser');
  const plain = xml.replace(' xmlns:o="urn:o"', '').replace('<other>', '<rs:other>').replace('</other>', '</rs:other>');
  const [s2, p2] = bothReaders(plain);
  assert.deepEqual(s2, p2);
  assert.equal(s2.entries[0].loc, 'http://h/a%20b&c/d/e');
  assert.equal(s2.entries[0].links[0].href, 'http://h/x"y<z>');
  assert.equal(s2.entries[0].links[0].type, 'a "quoted" type');
  assert.equal(s2.links[0].href, 'http://h/a?x=1&y=2');
  assert.equal(s2.entries.length, 2);
  assert.ok(parsed.entries.length === 2);
});

test('scanDocument resolves other prefixes as DOMParser does', () => {
  const xml = HEAD + `<sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:r="http://www.openarchives.org/rs/terms/" xmlns:rs="urn:not-resourcesync">
  <r:md capability="resourcelist" at="2026-01-01T00:00:00Z"/>
  <rs:md capability="ignored"/>
  <sm:sitemap><sm:loc>http://h/p1.xml</sm:loc><r:md at="2026-01-01T00:00:00Z"/></sm:sitemap>
</sm:sitemapindex>`;
  const [scanned, parsed] = bothReaders(xml);
  assert.deepEqual(scanned, parsed);
  assert.equal(scanned.capability, 'resourcelist');
  assert.equal(scanned.root, 'sitemapindex');
});

test('scanDocument leaves to DOMParser what it does not read', () => {
  const cases = {
    'CDATA': `<urlset ${NS}><url><loc><![CDATA[http://h/a]]></loc></url></urlset>`,
    'a DOCTYPE': `<!DOCTYPE urlset [<!ENTITY e "x">]><urlset ${NS}><url><loc>&e;</loc></url></urlset>`,
    'an unknown entity': `<urlset ${NS}><url><loc>http://h/&nbsp;</loc></url></urlset>`,
    'a mismatched end tag': `<urlset ${NS}><url><loc>http://h/a</lastmod></url></urlset>`,
    'a truncated document': `<urlset ${NS}><url><loc>http://h/a</loc></url>`,
    'an unbound prefix': `<urlset ${NS}><x:url/></urlset>`,
    'an element in loc': `<urlset ${NS}><url><loc>http://h/<b>a</b></loc></url></urlset>`,
    'a root that is not a Sitemap': `<html ${NS}/>`,
  };
  for (const [what, body] of Object.entries(cases)) {
    assert.equal(v.scanDocument(HEAD + body), null, what);
  }
});

test('readText scans large documents and parses small ones', () => {
  const entry = '<url><loc>http://h/a</loc><rs:md length="1"/></url>\n';
  const small = HEAD + `<urlset ${NS}><rs:md capability="resourcelist"/>${entry}</urlset>`;
  const large = HEAD + `<urlset ${NS}><rs:md capability="resourcelist"/>${entry.repeat(Math.ceil(v.SCAN_ABOVE / entry.length) + 1)}</urlset>`;
  assert.equal(v.readText(small, DOMParser).reader, 'DOMParser');
  const read = v.readText(large, DOMParser);
  assert.equal(read.reader, 'scanner');
  assert.equal(read.doc.entries.length, Math.ceil(v.SCAN_ABOVE / entry.length) + 1);
  const broken = large.replace('</urlset>', '');
  assert.throws(() => v.readText(broken, DOMParser), /not well-formed XML/);
});

// RSGEN_VIEWER_SITE names a built site (.ci/viewer-tests builds the
// example): both readers must agree on every one of its documents.
test('both readers agree on every document of a built site', (t) => {
  const site = process.env.RSGEN_VIEWER_SITE;
  if (!site) {
    t.skip('set RSGEN_VIEWER_SITE to an output folder (.ci/viewer-tests does)');
    return;
  }
  const files = [path.join(site, '.well-known', 'resourcesync')];
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) {
        if (name !== 'mementos') walk(p);
      } else if (name.endsWith('.xml')) files.push(p);
    }
  };
  walk(path.join(site, 'resourcesync'));
  // The example site's first build: 32 documents since no document but
  // the open Change List is published empty.
  assert.ok(files.length >= 30, files.length + ' documents');
  for (const f of files) {
    const [scanned, parsed] = bothReaders(readFileSync(f, 'utf8'));
    assert.deepEqual(scanned, parsed, f);
  }
});

const withChannels = read(`<urlset ${NS}>
  <rs:ln rel="up" href="http://localhost:8000/.well-known/resourcesync"/>
  <rs:md capability="capabilitylist"/>
  <url>
    <loc>http://localhost:8000/resourcesync/col/resourcelist.xml</loc>
    <rs:md capability="resourcelist"/>
  </url>
  <url>
    <loc>http://localhost:8000/resourcesync/col/notification/change.xml</loc>
    <rs:md capability="change-notification"/>
    <rs:ln rel="hub" href="https://hub.example.org/"/>
  </url>
  <url>
    <loc>http://localhost:8000/resourcesync/col/notification/framework.xml</loc>
    <rs:md capability="framework-notification"/>
  </url>
</urlset>`);

test('channelsOf lists the notification channels of a Capability List: kind, topic, hub', () => {
  assert.deepEqual(v.channelsOf(withChannels), [
    { kind: 'Change Notification', capability: 'change-notification', topic: 'http://localhost:8000/resourcesync/col/notification/change.xml', hub: 'https://hub.example.org/' },
    { kind: 'Framework Notification', capability: 'framework-notification', topic: 'http://localhost:8000/resourcesync/col/notification/framework.xml', hub: '' },
  ]);
  assert.deepEqual(v.channelsOf(resourceList), []);
  assert.match(v.statusOf(withChannels).text, /subscribes to a channel’s topic at its hub/);
});

test('a notification says what it is, and an empty topic why it is empty', () => {
  const n = read(`<urlset ${NS}>
  <rs:ln rel="up" href="http://localhost:8000/resourcesync/col/capabilitylist.xml"/>
  <rs:md capability="change-notification" from="2026-01-01T00:00:00Z" until="2026-01-01T01:00:00Z"/>
  <url>
    <loc>http://localhost:8000/col/a.txt</loc>
    <rs:md change="created" datetime="2026-01-01T01:00:00Z"/>
  </url>
</urlset>`);
  assert.equal(v.kindOf(n), 'Change Notification');
  const st = v.statusOf(n);
  assert.equal(st.state, 'notification');
  assert.match(st.text, /from 2026-01-01T00:00:00Z until 2026-01-01T01:00:00Z/);
  assert.throws(() => v.readText('', DOMParser), /empty: a notification topic serves nothing until/);
});

// The "Sync this Source" box: the commands of rsgen sync and resync 2.0.1.

const SD = 'https://data.example.org/.well-known/resourcesync';
const BASELINE = 'resync-sync --baseline --delete --hash sha-256 --capabilitylist ';
const INCREMENTAL = 'resync-sync --incremental --delete --hash sha-256 --changelist-uri ';

function descriptionOf(...locs) {
  return read(`<urlset ${NS}><rs:md capability="description"/>
  ${locs.map((l) => `<url><loc>${l}</loc><rs:md capability="capabilitylist"/></url>`).join('\n')}</urlset>`);
}

function capabilityListOf(changeList) {
  return read(`<urlset ${NS}>
  <rs:ln rel="up" href="${SD}"/>
  <rs:md capability="capabilitylist"/>
  <url><loc>https://data.example.org/resourcesync/books/resourcelist.xml</loc><rs:md capability="resourcelist"/></url>
  ${changeList ? `<url><loc>${changeList}</loc><rs:md capability="changelist"/></url>` : ''}
</urlset>`);
}

test('syncCommands: a Source with one set is synced from its base URL', () => {
  const cmds = v.syncCommands(SD, descriptionOf('https://data.example.org/resourcesync/books/capabilitylist.xml'));
  assert.deepEqual(cmds.rsgen, ['rsgen sync https://data.example.org/ mirror/']);
  assert.deepEqual(cmds.resync, [BASELINE + 'https://data.example.org/resourcesync/books/capabilitylist.xml https://data.example.org/ mirror/']);
  assert.match(cmds.notes.join(' '), /--incremental .*Capability List/);
});

test('syncCommands: each set of several gets --set NAME and a folder of its own', () => {
  const cmds = v.syncCommands('https://h.example/a/.well-known/resourcesync', descriptionOf(
    'https://h.example/a/resourcesync/books/capabilitylist.xml',
    'https://h.example/a/resourcesync/maps%20old/capabilitylist.xml',
    'https://h.example/a/caps/extra.xml'));
  assert.deepEqual(cmds.rsgen, [
    'rsgen sync https://h.example/a/ mirror/books/ --set books',
    "rsgen sync https://h.example/a/ mirror/set-2/ --set 'maps old'",
    'rsgen sync https://h.example/a/ mirror/extra/ --set extra',
  ]);
  assert.deepEqual(cmds.resync, [
    BASELINE + 'https://h.example/a/resourcesync/books/capabilitylist.xml https://h.example/a/ mirror/books/',
    BASELINE + 'https://h.example/a/resourcesync/maps%20old/capabilitylist.xml https://h.example/a/ mirror/set-2/',
    BASELINE + 'https://h.example/a/caps/extra.xml https://h.example/a/ mirror/extra/',
  ]);
  // Two sets of one name are told apart by their URL.
  const twin = v.syncCommands(SD, descriptionOf('https://data.example.org/x/books.xml', 'https://data.example.org/y/books.xml'));
  assert.deepEqual(twin.rsgen, [
    'rsgen sync https://data.example.org/ mirror/set-1/ --set https://data.example.org/x/books.xml',
    'rsgen sync https://data.example.org/ mirror/set-2/ --set https://data.example.org/y/books.xml',
  ]);
  assert.deepEqual(v.syncCommands(SD, descriptionOf()).rsgen, []);
});

test('syncSetName names sets as rsgen sync does (destination setName)', () => {
  assert.equal(v.syncSetName('https://h.example/resourcesync/books/capabilitylist.xml'), 'books');
  assert.equal(v.syncSetName('https://h.example/resourcesync/a%20b/capabilitylist.xml?x=1'), 'a b');
  assert.equal(v.syncSetName('https://h.example/capabilitylist.xml'), 'capabilitylist');
  assert.equal(v.syncSetName('https://h.example/lists/caps.xml'), 'caps');
});

test('syncCommands: a Capability List is synced from its URL; resync reads its Change List, or the open one of an index', () => {
  const cl = 'https://data.example.org/resourcesync/books/capabilitylist.xml';
  const named = 'https://data.example.org/resourcesync/books/changelist.xml';
  const doc = capabilityListOf(named);
  const reading = v.syncCommands(cl, doc, undefined);
  assert.deepEqual(reading.rsgen, ['rsgen sync ' + cl + ' mirror/']);
  assert.deepEqual(reading.resync, [BASELINE + cl + ' https://data.example.org/ mirror/']);
  assert.match(reading.notes[0], /Reading the Change List/);

  const list = read(`<urlset ${NS}><rs:md capability="changelist" from="2026-01-01T00:00:00Z"/></urlset>`);
  assert.deepEqual(v.syncCommands(cl, doc, { url: named, doc: list }).resync.slice(1), [INCREMENTAL + named + ' https://data.example.org/ mirror/']);

  const index = read(`<sitemapindex ${NS}><rs:md capability="changelist"/>
    <sitemap><loc>https://data.example.org/resourcesync/books/changelists/changelist-1.xml</loc><rs:md from="2026-01-01T00:00:00Z" until="2026-01-02T00:00:00Z"/></sitemap>
    <sitemap><loc>https://data.example.org/resourcesync/books/changelists/changelist-2.xml</loc><rs:md from="2026-01-02T00:00:00Z"/></sitemap>
  </sitemapindex>`);
  const viaIndex = v.syncCommands(cl, doc, { url: named, doc: index });
  assert.deepEqual(viaIndex.resync.slice(1), [INCREMENTAL + 'https://data.example.org/resourcesync/books/changelists/changelist-2.xml https://data.example.org/ mirror/']);
  assert.match(viaIndex.notes.join(' '), /resync cannot read a Change List Index/);

  assert.match(v.syncCommands(cl, doc, { url: named, error: 'The server answered 404' }).notes[0], /Could not read the Change List.*404/);
  const none = v.syncCommands(cl, capabilityListOf(''), undefined);
  assert.equal(none.resync.length, 1);
  assert.match(none.notes[0], /publishes no Change List/);
  assert.equal(v.syncCommands(cl, resourceList), null);
});

test('syncCommands quotes what a hostile Source writes, so that a pasted command runs nothing else', () => {
  const hostile = `https://evil.example/resourcesync/&lt;script&gt;alert(1)&lt;/script&gt;'";$(touch x)/capabilitylist.xml`;
  const cmds = v.syncCommands('https://evil.example/.well-known/resourcesync',
    descriptionOf(hostile, 'https://evil.example/resourcesync/b/capabilitylist.xml'));
  const loc = `https://evil.example/resourcesync/<script>alert(1)</script>'";$(touch x)/capabilitylist.xml`;
  const quoted = `'https://evil.example/resourcesync/<script>alert(1)</script>'\\''";$(touch x)/capabilitylist.xml'`;
  // The set is named by the last folder, as rsgen sync names it.
  assert.equal(cmds.rsgen[0], `rsgen sync https://evil.example/ mirror/set-1/ --set 'script>'\\''";$(touch x)'`);
  assert.equal(cmds.resync[0], BASELINE + quoted + ' https://evil.example/ mirror/set-1/');
  assert.equal(v.shellWords([loc]), quoted);
  assert.equal(v.shellWords(['', 'a b', "it's"]), `'' 'a b' 'it'\\''s'`);
});
