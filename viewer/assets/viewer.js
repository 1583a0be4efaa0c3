/* rsgen document browser.
 *
 * Renders any ResourceSync document of this Source from its XML (fetch and
 * DOMParser), without XSLT, starting from the Source Description at
 * ../.well-known/resourcesync relative to this page. Routes live in the
 * fragment (#doc=resourcesync/collection/resourcelist.xml&entry=3), so
 * every view can be linked, bookmarked and reached with Back.
 *
 * The documents name their URIs under the Source's base_url, which need not
 * be where this page is served (a dev server on another port, a host under
 * a sub-path). The page works out the base_url from the Source
 * Description's Capability List URIs (rsgen writes them at
 * <base_url>resourcesync/<set>/capabilitylist.xml) and fetches every URI
 * under it relative to where it is itself served. It reads no document
 * elsewhere than under the base_url or on its own origin (readable), so
 * that a link to a view cannot make it fetch another address.
 *
 * The first half of this file is pure (parsing, routing, aggregation,
 * formatting, chart geometry) and is exported to Node for unit tests when
 * `module` exists; the second half draws the page in a browser. Nothing
 * read from a document is ever inserted as HTML: text goes in textContent
 * and only http(s) URIs (or the page's own scheme) become links.
 */
(function (root, factory) {
  'use strict';
  const api = factory();
  if (typeof module === 'object' && module.exports) {
    module.exports = api;
  } else if (root.document) {
    api.start(root);
  }
}(this, function () {
  'use strict';

  const SITEMAP_NS = 'http://www.sitemaps.org/schemas/sitemap/0.9';
  const RS_NS = 'http://www.openarchives.org/rs/terms/';
  const DESCRIPTION_PATH = '.well-known/resourcesync';
  const PAGE_SIZES = [50, 100, 500, 1000];
  const DEFAULT_PAGE_SIZE = 100;

  // MD_ORDER is the column order of rs:md attributes; any other attribute
  // a document carries follows, in alphabetical order.
  const MD_ORDER = ['capability', 'change', 'datetime', 'at', 'completed', 'from', 'until',
    'length', 'type', 'hash', 'path', 'encoding'];
  const DATE_ATTRS = new Set(['lastmod', 'datetime', 'at', 'completed', 'from', 'until', 'modified']);
  const NUMERIC_ATTRS = new Set(['length', 'pri', 'n']);
  const CHANGES = ['created', 'updated', 'deleted'];

  // REL_LABELS shortens link relations written as URIs.
  const REL_LABELS = { [RS_NS + 'patch']: 'patch' };

  // DOCUMENT_RELS are the relations whose target is another ResourceSync
  // document, followed inside the browser.
  const DOCUMENT_RELS = new Set(['up', 'index', 'archives', 'contents', 'resourcesync']);

  // LISTS_OF_DOCUMENTS are capabilities whose entries are documents.
  const LISTS_OF_DOCUMENTS = new Set(['description', 'capabilitylist', 'resourcelist-archive',
    'changelist-archive', 'resourcedump-archive', 'changedump-archive']);

  const KINDS = {
    description: 'Source Description',
    capabilitylist: 'Capability List',
    resourcelist: 'Resource List',
    changelist: 'Change List',
    resourcedump: 'Resource Dump',
    changedump: 'Change Dump',
    'resourcedump-manifest': 'Resource Dump Manifest',
    'changedump-manifest': 'Change Dump Manifest',
    'resourcelist-archive': 'Resource List Archive',
    'changelist-archive': 'Change List Archive',
    'resourcedump-archive': 'Resource Dump Archive',
    'changedump-archive': 'Change Dump Archive',
    'change-notification': 'Change Notification',
    'framework-notification': 'Framework Notification',
  };

  // NOTIFICATION_CAPABILITIES are the capabilities of the notification
  // channels a Capability List advertises (ResourceSync Change
  // Notification and Framework Notification, over WebSub): the entry's loc
  // is the channel's topic, its rs:ln rel="hub" the hub.
  const NOTIFICATION_CAPABILITIES = new Set(['change-notification', 'framework-notification']);

  // ---------------------------------------------------------------- parsing

  // parseXML parses text with a DOMParser class (the browser's, or
  // @xmldom/xmldom's in Node) and fails with the parser's own words.
  function parseXML(text, Parser) {
    let xml;
    try {
      xml = new Parser().parseFromString(text, 'application/xml');
    } catch (err) {
      throw new Error('not well-formed XML: ' + oneLine(err.message));
    }
    const failure = xml.getElementsByTagName('parsererror')[0];
    if (failure) {
      throw new Error('not well-formed XML: ' + oneLine(failure.textContent));
    }
    return xml;
  }

  function oneLine(s) {
    const line = String(s).replace(/\s+/g, ' ').trim();
    return line.length > 300 ? line.slice(0, 300) + '…' : line;
  }

  // readDocument turns a parsed ResourceSync document into plain data:
  // its root, rs:md and rs:ln, and its entries with theirs, plus the
  // attribute names and relations that occur, for columns and filters.
  function readDocument(xml) {
    const top = xml.documentElement;
    if (!top || top.namespaceURI !== SITEMAP_NS || (top.localName !== 'urlset' && top.localName !== 'sitemapindex')) {
      const name = top ? top.nodeName : 'nothing';
      throw new Error('not a ResourceSync document: its root element is <' + name + '>, not a Sitemap <urlset> or <sitemapindex>');
    }
    const doc = newDocument(top.localName);
    const mdNames = new Set();
    const rels = new Set();
    for (let el = top.firstChild; el; el = el.nextSibling) {
      if (el.nodeType !== 1) continue;
      if (el.namespaceURI === RS_NS && el.localName === 'md') {
        doc.md = attributes(el);
      } else if (el.namespaceURI === RS_NS && el.localName === 'ln') {
        doc.links.push(attributes(el));
      } else if (el.namespaceURI === SITEMAP_NS && (el.localName === 'url' || el.localName === 'sitemap')) {
        const entry = readEntry(el, doc.entries.length + 1);
        for (const name in entry.md) mdNames.add(name);
        for (const ln of entry.links) rels.add(ln.rel || '');
        if (entry.lastmod) doc.hasLastmod = true;
        doc.entries.push(entry);
      }
    }
    return finish(doc, mdNames, rels);
  }

  // newDocument and finish are the start and end of reading a document,
  // whichever reader reads it.
  function newDocument(root) {
    return { root: root, capability: '', md: {}, links: [], entries: [], mdNames: [], rels: [], hasLastmod: false };
  }

  function finish(doc, mdNames, rels) {
    doc.capability = doc.md.capability || '';
    doc.mdNames = orderAttributes(mdNames);
    doc.rels = Array.from(rels).sort();
    return doc;
  }

  function readEntry(el, n) {
    const entry = { n: n, loc: '', lastmod: '', md: {}, links: [] };
    for (let c = el.firstChild; c; c = c.nextSibling) {
      if (c.nodeType !== 1) continue;
      if (c.namespaceURI === SITEMAP_NS) {
        if (c.localName === 'loc') entry.loc = c.textContent.trim();
        else if (c.localName === 'lastmod') entry.lastmod = c.textContent.trim();
      } else if (c.namespaceURI === RS_NS) {
        if (c.localName === 'md') entry.md = attributes(c);
        else if (c.localName === 'ln') entry.links.push(attributes(c));
      }
    }
    return entry;
  }

  function attributes(el) {
    const out = {};
    const list = el.attributes;
    for (let i = 0; i < list.length; i++) out[list[i].name] = list[i].value;
    return out;
  }

  // orderAttributes puts attribute names in MD_ORDER, then the others
  // alphabetically.
  function orderAttributes(names) {
    const known = MD_ORDER.filter((n) => names.has(n));
    const other = Array.from(names).filter((n) => !MD_ORDER.includes(n)).sort();
    return known.concat(other);
  }

  // ---------------------------------------------------------------- scanning

  // SCAN_ABOVE is the size from which documents are read by scanDocument
  // rather than DOMParser: Chromium's DOMParser takes 0.8 s for the 12 MB
  // of a 50,000-entry Resource List, the scanner a quarter of that.
  const SCAN_ABOVE = 1 << 20;

  // Unsupported stops the scanner at XML it leaves to DOMParser.
  class Unsupported extends Error {}

  const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

  function decodeXML(s) {
    if (s.indexOf('&') < 0) return s;
    return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[A-Za-z]+);?/g, (m, ref) => {
      if (m[m.length - 1] !== ';') throw new Unsupported('a reference without ;');
      if (ref[0] === '#') return String.fromCodePoint(ref[1] === 'x' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10));
      if (!(ref in ENTITIES)) throw new Unsupported('the entity ' + ref);
      return ENTITIES[ref];
    });
  }

  const ATTRIBUTE = /([^\s=/>]+)\s*=\s*(?:"([^"<]*)"|'([^'<]*)')/g;

  function scanAttributes(src) {
    const out = {};
    if (!src) return out;
    ATTRIBUTE.lastIndex = 0;
    let m;
    while ((m = ATTRIBUTE.exec(src))) out[m[1]] = decodeXML(m[2] !== undefined ? m[2] : m[3]);
    return out;
  }

  // MARKUP matches a start tag (1 empty, 2 name, 3 attributes, 4 "/" when
  // self-closing), an end tag (1 "/"), or the start of a comment, a
  // processing instruction or other markup (5).
  const MARKUP = /<(\/?)([A-Za-z_][\w.:-]*)((?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|<(!--|!|\?)/g;

  // scanDocument reads a Sitemap document the way readDocument does, with
  // a scanner over its text instead of a DOM, for large documents. It
  // returns null for anything beyond the plain XML that Sitemap documents
  // are written in (CDATA, a DOCTYPE, entities, namespace declarations
  // below the root, mismatched tags): DOMParser then reads the document,
  // and says what is wrong with it if anything is.
  function scanDocument(text) {
    try {
      return scan(text);
    } catch (err) {
      if (err instanceof Unsupported) return null;
      throw err;
    }
  }

  function scan(text) {
    MARKUP.lastIndex = 0;
    let m = skipToElement(text);
    if (!m || m[1] || m[4]) return null;
    const ns = { '': '' };
    const rootAttrs = scanAttributes(m[3]);
    for (const name in rootAttrs) {
      if (name === 'xmlns') ns[''] = rootAttrs[name];
      else if (name.startsWith('xmlns:')) ns[name.slice(6)] = rootAttrs[name];
    }
    const resolve = (qname) => {
      const i = qname.indexOf(':');
      const prefix = i < 0 ? '' : qname.slice(0, i);
      if (!(prefix in ns)) throw new Unsupported('the prefix ' + prefix);
      return { ns: ns[prefix], local: i < 0 ? qname : qname.slice(i + 1) };
    };
    const root = resolve(m[2]);
    if (root.ns !== SITEMAP_NS || (root.local !== 'urlset' && root.local !== 'sitemapindex')) return null;
    const doc = newDocument(root.local);
    const mdNames = new Set();
    const rels = new Set();
    const open = [m[2]];
    let entry = null;
    let textOf = '';
    let textStart = 0;
    while ((m = MARKUP.exec(text))) {
      if (m[5]) {
        skipComment(text, m);
        continue;
      }
      const qname = m[2];
      if (m[1]) {
        if (open.pop() !== qname) throw new Unsupported('a mismatched end tag');
        if (textOf) {
          const value = decodeXML(text.slice(textStart, m.index)).trim();
          if (textOf === 'loc') entry.loc = value;
          else {
            entry.lastmod = value;
            doc.hasLastmod = true;
          }
          textOf = '';
        }
        if (open.length === 1 && entry) {
          for (const name in entry.md) mdNames.add(name);
          for (const ln of entry.links) rels.add(ln.rel || '');
          doc.entries.push(entry);
          entry = null;
        }
        if (open.length === 0) return finish(doc, mdNames, rels);
        continue;
      }
      if (textOf) throw new Unsupported('an element inside ' + textOf);
      if (m[3] && m[3].indexOf('xmlns') >= 0) throw new Unsupported('a namespace declaration below the root');
      const el = resolve(qname);
      const rs = el.ns === RS_NS;
      const sm = el.ns === SITEMAP_NS;
      if (open.length === 1) {
        if (rs && el.local === 'md') doc.md = scanAttributes(m[3]);
        else if (rs && el.local === 'ln') doc.links.push(scanAttributes(m[3]));
        else if (sm && (el.local === 'url' || el.local === 'sitemap')) entry = { n: doc.entries.length + 1, loc: '', lastmod: '', md: {}, links: [] };
      } else if (open.length === 2 && entry) {
        if (rs && el.local === 'md') entry.md = scanAttributes(m[3]);
        else if (rs && el.local === 'ln') entry.links.push(scanAttributes(m[3]));
        else if (sm && (el.local === 'loc' || el.local === 'lastmod') && !m[4]) {
          textOf = el.local;
          textStart = MARKUP.lastIndex;
        }
      }
      if (!m[4]) open.push(qname);
    }
    return null; // the root never ends
  }

  // skipToElement skips the XML declaration, processing instructions and
  // comments before the root element and returns its start tag.
  function skipToElement(text) {
    let m;
    while ((m = MARKUP.exec(text))) {
      if (!m[5]) return m;
      skipComment(text, m);
    }
    return null;
  }

  // skipComment moves past a comment or a processing instruction, and
  // leaves any other markup to DOMParser.
  function skipComment(text, m) {
    const end = m[5] === '!--' ? '-->' : (m[5] === '?' ? '?>' : '');
    const at = end ? text.indexOf(end, m.index + 2) : -1;
    if (at < 0) throw new Unsupported('markup <' + m[5]);
    MARKUP.lastIndex = at + end.length;
  }

  // readText reads a document's text with the reader its size calls for,
  // and says which it was.
  function readText(text, Parser) {
    if (text.trim() === '') {
      throw new Error('empty: a notification topic serves nothing until its channel’s first notification; no other document is ever empty');
    }
    const scanned = text.length > SCAN_ABOVE ? scanDocument(text) : null;
    return scanned ? { doc: scanned, reader: 'scanner' } : { doc: readDocument(parseXML(text, Parser)), reader: 'DOMParser' };
  }

  // ---------------------------------------------------------------- places

  // makeSite returns where this page's Source is served: its root (the
  // folder above resourcesync/) and the Source Description's URL. base is
  // the base_url the documents are written under, once known.
  function makeSite(pageHref) {
    return {
      root: new URL('../', pageHref).href,
      description: new URL('../' + DESCRIPTION_PATH, pageHref).href,
      protocol: new URL(pageHref).protocol,
      base: '',
    };
  }

  // baseFromDescription returns the base_url the Source Description's
  // Capability Lists are written under, or '' when none follows rsgen's
  // layout (then URIs are fetched as they are written).
  function baseFromDescription(doc) {
    for (const e of doc.entries) {
      const m = /^(.*\/)resourcesync\/[^/]+\/capabilitylist\.xml$/.exec(e.loc);
      if (m) return m[1];
    }
    return '';
  }

  function underBase(site, url) {
    return site.base !== '' && url.startsWith(site.base);
  }

  // readable says whether this page reads the document at url: one of its
  // own Source, under the base_url (read where the page's Source is
  // served) or on the page's own origin. Any other address is left alone,
  // so that a link to this page (its #doc= fragment) cannot make it fetch
  // whatever address the link names.
  function readable(site, url) {
    if (underBase(site, url)) return true;
    try {
      return new URL(url).origin === new URL(site.root).origin;
    } catch (err) {
      return false;
    }
  }

  // notReadable says why the document at url is not read.
  function notReadable(site, url) {
    const where = site.base ? site.base + ' (served here at ' + site.root + ')' : site.root;
    return 'This page reads only the documents of its own Source, under ' + where + ' or on ' + new URL(site.root).origin +
      ', so that a link cannot make it fetch another address; ' + url + ' is elsewhere. Open it directly if you trust it.';
  }

  // fetchURL maps a URI as written in a document to where this page can
  // fetch or link it: under the base_url, relative to the page's own
  // Source root; anything else as it is.
  function fetchURL(site, url) {
    return underBase(site, url) ? site.root + url.slice(site.base.length) : url;
  }

  // routeKey is the short form of a document URI in routes: relative to
  // the base_url when under it, so links survive a move of the Source.
  function routeKey(site, url) {
    if (underBase(site, url)) return url.slice(site.base.length);
    if (url === site.description) return DESCRIPTION_PATH;
    return url;
  }

  // routeURL reverses routeKey.
  function routeURL(site, key) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(key)) return key;
    return (site.base || site.root) + key;
  }

  // safeHref returns url if a page may link to it (http, https, or the
  // page's own scheme), else null: a document could carry javascript: URIs.
  function safeHref(url, protocol) {
    let u;
    try {
      u = new URL(url);
    } catch (err) {
      return null;
    }
    return u.protocol === 'http:' || u.protocol === 'https:' || u.protocol === protocol ? u.href : null;
  }

  // displayPath is what a person reads for a URI: its path below the
  // base_url, percent-decoded, or the whole URI when elsewhere.
  function displayPath(site, url) {
    const s = underBase(site, url) ? url.slice(site.base.length) : url;
    try {
      return decodeURIComponent(s);
    } catch (err) {
      return s;
    }
  }

  // setName returns the set a document of rsgen's layout belongs to.
  function setName(url) {
    const m = /\/resourcesync\/([^/]+)\//.exec(url);
    if (!m) return '';
    try {
      return decodeURIComponent(m[1]);
    } catch (err) {
      return m[1];
    }
  }

  function fileName(url) {
    const path = url.replace(/[?#].*$/, '').replace(/\/$/, '');
    const name = path.slice(path.lastIndexOf('/') + 1);
    try {
      return decodeURIComponent(name);
    } catch (err) {
      return name;
    }
  }

  // ---------------------------------------------------------------- routes

  // parseRoute reads the fragment: doc (a route key), entry (1-based
  // position), and the table's state.
  function parseRoute(hash) {
    const p = new URLSearchParams(String(hash || '').replace(/^#/, ''));
    const int = (name, def) => {
      const v = parseInt(p.get(name) || '', 10);
      return Number.isFinite(v) && v > 0 ? v : def;
    };
    const size = int('size', DEFAULT_PAGE_SIZE);
    return {
      doc: p.get('doc') || DESCRIPTION_PATH,
      entry: int('entry', 0),
      q: p.get('q') || '',
      type: p.get('type') || '',
      change: p.get('change') || '',
      sort: p.get('sort') || 'n',
      dir: p.get('dir') === 'desc' ? 'desc' : 'asc',
      page: int('page', 1),
      size: PAGE_SIZES.includes(size) ? size : DEFAULT_PAGE_SIZE,
    };
  }

  // routeHash writes a route, leaving defaults out and keeping / and :
  // readable.
  function routeHash(r) {
    const parts = [];
    const add = (name, value) => {
      parts.push(name + '=' + encodeURIComponent(value).replace(/%2F/g, '/').replace(/%3A/g, ':'));
    };
    add('doc', r.doc || DESCRIPTION_PATH);
    if (r.entry) add('entry', r.entry);
    if (r.q) add('q', r.q);
    if (r.type) add('type', r.type);
    if (r.change) add('change', r.change);
    if (r.sort && r.sort !== 'n') add('sort', r.sort);
    if (r.dir === 'desc') add('dir', 'desc');
    if (r.page > 1) add('page', r.page);
    if (r.size && r.size !== DEFAULT_PAGE_SIZE) add('size', r.size);
    return '#' + parts.join('&');
  }

  // ---------------------------------------------------------------- meaning

  function kindOf(doc) {
    const kind = KINDS[doc.capability] || (doc.capability ? '“' + doc.capability + '” document' : 'Sitemap');
    return doc.root === 'sitemapindex' ? kind + ' Index' : kind;
  }

  function relLabel(rel) {
    return REL_LABELS[rel] || rel || '(no rel)';
  }

  // entryIsDocument says whether an entry's loc is another ResourceSync
  // document (followed inside the browser) rather than a resource.
  function entryIsDocument(doc, entry) {
    return doc.root === 'sitemapindex' || LISTS_OF_DOCUMENTS.has(doc.capability) || Boolean(entry.md.capability);
  }

  function linkIsDocument(ln) {
    if (!DOCUMENT_RELS.has(ln.rel)) return false;
    return ln.rel !== 'contents' || !ln.type || /xml/.test(ln.type);
  }

  // channelsOf returns the notification channels a Capability List
  // advertises: the kind, the topic and the hub of each.
  function channelsOf(doc) {
    if (doc.capability !== 'capabilitylist') return [];
    return doc.entries.filter((e) => NOTIFICATION_CAPABILITIES.has(e.md.capability)).map((e) => {
      const hub = e.links.find((l) => l.rel === 'hub');
      return { kind: KINDS[e.md.capability], capability: e.md.capability, topic: e.loc, hub: hub ? hub.href : '' };
    });
  }

  // statusOf says in plain words what a document is, whether it still
  // changes, and what a Destination should do with it; url is where it is.
  function statusOf(doc, url) {
    const md = doc.md;
    const n = doc.entries.length;
    const since = (t) => (t ? ' from ' + t : '');
    const isIndex = doc.root === 'sitemapindex';
    switch (doc.capability) {
      case 'description':
        return { state: 'entry point', text: 'The Source’s entry point, one Capability List per set (' + n + '). A Destination reads it to discover the sets, and re-reads it now and then to find new ones.' };
      case 'capabilitylist':
        return { state: 'set', text: 'What this set offers. A Destination takes a baseline from the Resource List (or Resource Dump), then follows the Change List (or Change Dump) for what changed since. The addresses listed here do not change; re-read it now and then.' +
          (channelsOf(doc).length ? ' Its notification channels push each change as it is published: a Destination subscribes to a channel’s topic at its hub (WebSub) instead of polling, and reads the Change Lists when it missed a notification.' : '') };
      case 'change-notification':
      case 'framework-notification':
        return { state: 'notification', text: 'The newest notification of this channel: the ' + (doc.capability === 'change-notification' ? 'changes of the set’s resources' : 'capability documents created, updated or deleted') + span(md) + '. The hub pushed it to the subscribed Destinations; the next one starts where it ends, and a Destination that finds a gap reads the Change Lists for it.' };
      case 'resourcelist':
        if (isIndex) {
          return { state: 'snapshot', text: 'A snapshot of the set' + at(md) + ', in ' + n + ' parts: a Destination reads every part; together they are one Resource List.' };
        }
        return {
          state: 'snapshot',
          text: 'A snapshot of the set' + at(md) + '. A Destination takes it as its baseline: fetch every resource listed, check its hash and length, then follow the Change List from ' + (md.at || 'that time') + ' on. ' +
            resourceListFate(doc, url),
        };
      case 'changelist':
        if (isIndex) return indexStatus(doc, 'Change List', 'events');
        return listStatus(md, 'This list never changes: a Destination that has processed it need not fetch it again.',
          'changes' + since(md.from) + ' on, and grows with every build that finds changes. A Destination polls it and processes only the events after the last one it has seen; once it carries until, it is closed and never changes again.');
      case 'resourcedump':
        return { state: 'snapshot', text: 'The set' + at(md) + ' as ' + n + ' ZIP package' + (n === 1 ? '' : 's') + '. A Destination downloads each package, checks its hash and length, and unpacks it following its manifest. A package’s name follows its content, so one already held need not be downloaded again.' };
      case 'changedump':
        if (isIndex) return indexStatus(doc, 'Change Dump', 'packages');
        return listStatus(md, 'This dump never changes: a Destination that has applied its packages need not fetch it again.',
          'one package per build with changes' + since(md.from) + ' on. A Destination polls it and applies the packages it has not applied yet.');
      case 'resourcedump-manifest':
        return { state: 'closed', text: 'The manifest of one Resource Dump package' + at(md) + ': every bitstream in the ZIP with its path in it. A Destination checks each unpacked file against the hash and length listed. The package and this copy of its manifest never change.' };
      case 'changedump-manifest':
        return { state: 'closed', text: 'The manifest of one Change Dump package: the changes' + span(md) + ' it carries, each bitstream with its path in the ZIP (deleted resources have none). The package and this copy of its manifest never change.' };
      case 'resourcelist-archive':
      case 'resourcedump-archive':
        return { state: 'archive', text: 'Earlier snapshots of the set (' + n + '), each with the time it was taken (at) and finished (completed); they never change. To rebuild the set as it was at an earlier time, start from the last snapshot before it and apply the archived Change Lists from its at. The archive grows; re-read it to find new snapshots.' };
      case 'changelist-archive':
      case 'changedump-archive':
        return { state: 'archive', text: 'Closed ' + (doc.capability === 'changelist-archive' ? 'Change Lists' : 'Change Dumps') + ' (' + n + '), each with its from and until; they never change. A Destination catching up from an earlier time reads those whose until is after its last synchronisation. The archive grows as lists close; re-read it to find new ones.' };
      default:
        return { state: '', text: doc.capability ? 'A document with capability “' + doc.capability + '”, shown as it is.' : 'A Sitemap without a ResourceSync capability, shown as it is.' };
    }
  }

  // resourceListFate says whether a Resource List changes: an archived
  // copy (rsgen keeps them in the set's resourcelists/ folder) never does;
  // the live list is rewritten whenever the set changes, and its earlier
  // snapshots go to its archive when it has one, else nowhere.
  function resourceListFate(doc, url) {
    if (ARCHIVED_LIST.test(url || '')) return 'This archived copy is never rewritten.';
    return 'The Source rewrites it whenever the set changes; ' +
      (hasRel(doc, 'archives') ? 'earlier snapshots go to its archive.' : 'earlier snapshots are not kept (the set has no Resource List archive).');
  }

  const ARCHIVED_LIST = /\/resourcesync\/[^/]+\/resourcelists\/[^/]+$/;

  function at(md) {
    return (md.at ? ' at ' + md.at : '') + (md.completed ? ' (completed ' + md.completed + ')' : '');
  }

  function span(md) {
    return (md.from ? ' from ' + md.from : '') + (md.until ? ' until ' + md.until : '');
  }

  function hasRel(doc, rel) {
    return doc.links.some((ln) => ln.rel === rel);
  }

  // listStatus words the status of a Change List or Change Dump; its
  // badge says open or closed.
  function listStatus(md, closedText, openText) {
    if (md.until) return { state: 'closed', text: 'Covers' + span(md) + '. ' + closedText };
    return { state: 'open', text: 'Covers ' + openText };
  }

  function indexStatus(doc, what, items) {
    const open = doc.entries.filter((e) => !e.md.until).length;
    const closed = doc.entries.length - open;
    return {
      state: open ? 'open' : 'closed',
      text: 'An index of ' + doc.entries.length + ' ' + what + 's' + (doc.md.from ? ' from ' + doc.md.from : '') + ': ' +
        closed + ' closed (they never change: fetch each once) and ' + open + ' open (poll ' + (open === 1 ? 'it' : 'them') + ' for new ' + items + ').',
    };
  }

  // ---------------------------------------------------------------- sync

  // syncCommands returns the commands a Destination runs to mirror the
  // Source from the document at url (its Source Description or a
  // Capability List): rsgen sync's, and those of resync 2.0.1, the
  // reference client, as the README's "With resync" gives them, with notes
  // where resync needs help. changeList is the document the Capability
  // List names for its Change List ({ url, doc }, or { url, error } when it
  // could not be read), undefined while it is read. Each command is a list
  // of words, each quoted for a POSIX shell.
  function syncCommands(url, doc, changeList) {
    if (doc.capability === 'description') return descriptionCommands(url, doc);
    if (doc.capability === 'capabilitylist') return capabilityListCommands(url, doc, changeList);
    return null;
  }

  const RESYNC_BASELINE = ['resync-sync', '--baseline', '--delete', '--hash', 'sha-256', '--capabilitylist'];
  const RESYNC_INCREMENTAL = ['resync-sync', '--incremental', '--delete', '--hash', 'sha-256', '--changelist-uri'];

  function descriptionCommands(url, doc) {
    const base = syncBaseOfDescription(url);
    const sets = doc.entries.filter((e) => e.md.capability === 'capabilitylist').map((e) => ({ name: syncSetName(e.loc), url: e.loc }));
    const out = { rsgen: [], resync: [], notes: [] };
    if (!sets.length) {
      out.notes.push('The Source Description lists no Capability List: there is no set to sync.');
      return out;
    }
    if (sets.length === 1) {
      out.rsgen.push(shellWords(['rsgen', 'sync', base, 'mirror/']));
      out.resync.push(shellWords(RESYNC_BASELINE.concat([sets[0].url, base, 'mirror/'])));
    } else {
      // A folder holds the mirror of one set (rsgen sync refuses another),
      // so each set gets its own; --set takes the list's URL where two
      // sets share a name.
      sets.forEach((s, i) => {
        const shared = sets.filter((o) => o.name === s.name).length > 1;
        const dir = 'mirror/' + (SAFE_FOLDER.test(s.name) && !shared ? s.name : 'set-' + (i + 1)) + '/';
        out.rsgen.push(shellWords(['rsgen', 'sync', base, dir, '--set', shared ? s.url : s.name]));
        out.resync.push(shellWords(RESYNC_BASELINE.concat([s.url, base, dir])));
      });
    }
    out.notes.push('resync-sync takes the changes since with --incremental given the set’s Change List: see the set’s Capability List.');
    return out;
  }

  // SAFE_FOLDER is a set name that is a plain folder name (rsgen's start
  // with a letter or digit); any other set gets a numbered folder.
  const SAFE_FOLDER = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

  function capabilityListCommands(url, doc, changeList) {
    const base = syncBaseOfCapabilityList(url, doc);
    const out = { rsgen: [shellWords(['rsgen', 'sync', url, 'mirror/'])], resync: [shellWords(RESYNC_BASELINE.concat([url, base, 'mirror/']))], notes: [] };
    const named = doc.entries.find((e) => e.md.capability === 'changelist');
    if (!named) {
      out.notes.push('This set publishes no Change List: resync can only take baselines, and rsgen sync takes a new baseline every time, fetching only what differs.');
    } else if (changeList === undefined) {
      out.notes.push('Reading the Change List for resync’s incremental command…');
    } else if (changeList.error) {
      out.notes.push('Could not read the Change List for resync’s incremental command: ' + changeList.error);
    } else if (changeList.doc.root === 'urlset') {
      out.resync.push(shellWords(RESYNC_INCREMENTAL.concat([named.loc, base, 'mirror/'])));
    } else {
      const open = openChangeList(changeList.doc);
      out.notes.push('resync cannot read a Change List Index, so --incremental is given the Change List to read: the open one, listed last in the index. It changes whenever the Source rotates its lists.');
      if (open) out.resync.push(shellWords(RESYNC_INCREMENTAL.concat([open, base, 'mirror/'])));
    }
    return out;
  }

  // openChangeList returns the open Change List of a Change List Index:
  // the last without until, else the last.
  function openChangeList(index) {
    const open = index.entries.filter((e) => !e.md.until);
    const last = (open.length ? open : index.entries).slice(-1)[0];
    return last ? last.loc : '';
  }

  // syncSetName names the set of the Capability List at url as rsgen sync
  // does (destination's setName): its folder when the list is a
  // capabilitylist.xml, else its file name without .xml.
  function syncSetName(url) {
    let p = url;
    try {
      p = new URL(url).pathname;
    } catch (err) { /* name it from the text */ }
    try {
      p = decodeURIComponent(p);
    } catch (err) { /* keep it encoded */ }
    const slash = p.lastIndexOf('/');
    const dir = p.slice(0, slash + 1);
    const file = p.slice(slash + 1);
    if (file === 'capabilitylist.xml' && dir.replace(/^\/+|\/+$/g, '') !== '') {
      const folder = dir.replace(/\/+$/, '');
      return folder.slice(folder.lastIndexOf('/') + 1);
    }
    return file.replace(/\.xml$/, '');
  }

  // syncBaseOfDescription is the base URL of the Source whose Source
  // Description is at url, as rsgen sync takes it: what precedes
  // .well-known/resourcesync, else the top of its host.
  function syncBaseOfDescription(url) {
    if (url.endsWith('/' + DESCRIPTION_PATH)) return url.slice(0, url.length - DESCRIPTION_PATH.length);
    return originOf(url);
  }

  // syncBaseOfCapabilityList is that of the Source Description its up
  // link names, else the top of its host.
  function syncBaseOfCapabilityList(url, doc) {
    const up = doc.links.find((l) => l.rel === 'up' && l.href && l.href.endsWith('/' + DESCRIPTION_PATH));
    return up ? syncBaseOfDescription(up.href) : originOf(url);
  }

  function originOf(url) {
    try {
      return new URL(url).origin + '/';
    } catch (err) {
      return url;
    }
  }

  // shellWords joins words into a command line a POSIX shell reads back
  // as the same words: a URI from a document may hold quotes, $ or ;.
  function shellWords(words) {
    return words.map((w) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : "'" + w.replace(/'/g, "'\\''") + "'")).join(' ');
  }

  // ---------------------------------------------------------------- tables

  // columnsOf returns the entry table's columns: position, loc, lastmod,
  // every rs:md attribute that occurs, and links.
  function columnsOf(doc) {
    const cols = [{ key: 'n', label: '#', kind: 'n' }, { key: 'loc', label: 'loc', kind: 'loc' }];
    if (doc.hasLastmod) cols.push({ key: 'lastmod', label: 'lastmod', kind: 'date' });
    for (const name of doc.mdNames) {
      let kind = 'text';
      if (DATE_ATTRS.has(name)) kind = 'date';
      else if (name === 'hash') kind = 'hash';
      else if (name === 'length') kind = 'number';
      else if (name === 'change') kind = 'change';
      cols.push({ key: 'md:' + name, label: name, kind: kind });
    }
    if (doc.rels.length) cols.push({ key: 'links', label: 'rs:ln', kind: 'links' });
    return cols;
  }

  function valueOf(entry, key) {
    if (key === 'n') return entry.n;
    if (key === 'loc') return entry.loc;
    if (key === 'lastmod') return entry.lastmod;
    if (key === 'links') return entry.links.length;
    return entry.md[key.slice(3)];
  }

  // searchText is an entry's loc as a person types it: decoded, lower case.
  function searchText(entry) {
    if (entry.search === undefined) {
      let s = entry.loc;
      try {
        s = decodeURIComponent(s);
      } catch (err) { /* keep it encoded */ }
      entry.search = s.toLowerCase();
    }
    return entry.search;
  }

  // NONE is the filter value of the entries without the attribute: the
  // empty value is no filter ("any").
  const NONE = '(none)';

  // filterEntries keeps the entries whose path contains q (decoded, any
  // case) and whose type and change match, when given (NONE: absent).
  function filterEntries(entries, f) {
    const q = (f.q || '').toLowerCase();
    if (!q && !f.type && !f.change) return entries;
    const is = (value, want) => !want || (value || '') === (want === NONE ? '' : want);
    return entries.filter((e) => is(e.md.type, f.type) && is(e.md.change, f.change) && (!q || searchText(e).includes(q)));
  }

  // sortEntries returns entries ordered by a column key; missing values go
  // last whichever the direction, ties keep document order.
  function sortEntries(entries, key, dir) {
    if (key === 'n' && dir !== 'desc') return entries;
    const numeric = key === 'n' || key === 'links' || NUMERIC_ATTRS.has(key.slice(3));
    const sign = dir === 'desc' ? -1 : 1;
    return entries.slice().sort((a, b) => {
      let x = valueOf(a, key);
      let y = valueOf(b, key);
      const missX = x === undefined || x === '';
      const missY = y === undefined || y === '';
      if (missX || missY) return missX === missY ? a.n - b.n : (missX ? 1 : -1);
      if (numeric) {
        x = Number(x);
        y = Number(y);
      }
      if (x < y) return -sign;
      if (x > y) return sign;
      return a.n - b.n;
    });
  }

  // countBy counts entries by an rs:md attribute, most frequent first.
  function countBy(entries, name) {
    const counts = new Map();
    for (const e of entries) {
      const v = e.md[name] || '';
      counts.set(v, (counts.get(v) || 0) + 1);
    }
    return Array.from(counts, ([value, count]) => ({ value, count }))
      .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : 1));
  }

  function pageOf(total, page, size) {
    const pages = Math.max(1, Math.ceil(total / size));
    const p = Math.min(Math.max(1, page), pages);
    return { page: p, pages: pages, start: (p - 1) * size, end: Math.min(total, p * size) };
  }

  // ---------------------------------------------------------------- aggregates

  // mediaTypeStats counts resources and bytes by media type.
  function mediaTypeStats(entries) {
    const by = new Map();
    for (const e of entries) {
      const type = e.md.type || '(no type)';
      let s = by.get(type);
      if (!s) by.set(type, s = { type: type, count: 0, bytes: 0 });
      s.count++;
      s.bytes += Number(e.md.length) || 0;
    }
    return Array.from(by.values()).sort((a, b) => b.count - a.count || b.bytes - a.bytes || (a.type < b.type ? -1 : 1));
  }

  // foldTail keeps the first max - 1 rows and folds the rest into one.
  function foldTail(stats, max) {
    if (stats.length <= max) return stats;
    const rest = stats.slice(max - 1);
    const other = { type: 'other (' + rest.length + ' types)', count: 0, bytes: 0 };
    for (const s of rest) {
      other.count += s.count;
      other.bytes += s.bytes;
    }
    return stats.slice(0, max - 1).concat([other]);
  }

  // eventDay returns the UTC day (YYYY-MM-DD) of a change event: its
  // datetime, or its lastmod for ResourceSync 1.0 lists.
  function eventDay(entry) {
    const t = entry.md.datetime || entry.lastmod;
    if (!t) return '';
    if (/^\d{4}-\d{2}-\d{2}T[^+]*Z$/.test(t)) return t.slice(0, 10);
    const d = new Date(t);
    return isNaN(d) ? '' : d.toISOString().slice(0, 10);
  }

  // changeActivity counts events by day and change over the entries of
  // any number of Change Lists (or Change Dump manifests).
  function changeActivity(entries) {
    const days = new Map();
    let undated = 0;
    for (const e of entries) {
      const change = e.md.change;
      if (!CHANGES.includes(change)) continue;
      const day = eventDay(e);
      if (!day) {
        undated++;
        continue;
      }
      let d = days.get(day);
      if (!d) days.set(day, d = { created: 0, updated: 0, deleted: 0 });
      d[change]++;
    }
    return { days: days, undated: undated };
  }

  // activityBuckets lays the days out on a time axis without gaps: one
  // bucket per day, or per month when the days span more than maxDays.
  function activityBuckets(days, maxDays) {
    const keys = Array.from(days.keys()).sort();
    if (!keys.length) return { unit: 'day', buckets: [] };
    const first = Date.parse(keys[0] + 'T00:00:00Z');
    const last = Date.parse(keys[keys.length - 1] + 'T00:00:00Z');
    const spanDays = Math.round((last - first) / 864e5) + 1;
    const unit = spanDays > (maxDays || 92) ? 'month' : 'day';
    const keyOf = (day) => (unit === 'day' ? day : day.slice(0, 7));
    const buckets = [];
    const index = new Map();
    for (let t = first; t <= last; t += 864e5) {
      const k = keyOf(new Date(t).toISOString().slice(0, 10));
      if (!index.has(k)) {
        index.set(k, buckets.length);
        buckets.push({ key: k, created: 0, updated: 0, deleted: 0 });
      }
    }
    for (const [day, d] of days) {
      const b = buckets[index.get(keyOf(day))];
      for (const c of CHANGES) b[c] += d[c];
    }
    return { unit: unit, buckets: buckets };
  }

  // ---------------------------------------------------------------- formats

  function formatCount(n) {
    return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  }

  function formatBytes(n) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let v = Number(n) || 0;
    let u = 0;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return (u === 0 ? String(v) : v.toFixed(v < 10 ? 1 : 0)) + ' ' + units[u];
  }

  // shortHash abbreviates each algorithm's digest; the full value stays in
  // the entry's details and the cell's title.
  function shortHash(hash) {
    return String(hash).split(/\s+/).filter(Boolean).map((h) => {
      const i = h.indexOf(':');
      const digest = h.slice(i + 1);
      return digest.length > 12 ? h.slice(0, i + 1) + digest.slice(0, 12) + '…' : h;
    });
  }

  function formatMs(ms) {
    return ms >= 1000 ? (ms / 1000).toFixed(2) + ' s' : Math.round(ms) + ' ms';
  }

  // ---------------------------------------------------------------- charts

  // niceMax rounds a maximum up to 1, 2 or 5 times a power of ten.
  function niceMax(v) {
    if (v <= 0) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }

  // activityChart computes the geometry of the stacked bars, one per
  // bucket, in a width × height box with room for axes.
  function activityChart(buckets, width, height) {
    const left = 40;
    const right = 8;
    const top = 8;
    const bottom = 24;
    const plotW = Math.max(10, width - left - right);
    const plotH = Math.max(10, height - top - bottom);
    const totals = buckets.map((b) => b.created + b.updated + b.deleted);
    const max = niceMax(Math.max(0, ...totals));
    const step = buckets.length ? plotW / buckets.length : plotW;
    const barW = Math.max(1, Math.min(48, step * 0.8));
    const scale = plotH / max;
    const bars = buckets.map((b, i) => {
      let y = top + plotH;
      const segments = [];
      for (const c of CHANGES) {
        if (!b[c]) continue;
        const h = b[c] * scale;
        y -= h;
        segments.push({ change: c, count: b[c], y: y, height: h });
      }
      return { key: b.key, x: left + i * step + (step - barW) / 2, width: barW, total: totals[i], segments: segments, counts: b };
    });
    const ticks = [0, max / 2, max].filter((v, i, a) => Number.isInteger(v) && a.indexOf(v) === i)
      .map((v) => ({ value: v, y: top + plotH - v * scale }));
    return { left: left, top: top, plotW: plotW, plotH: plotH, max: max, bars: bars, ticks: ticks, width: width, height: height };
  }

  // barRows computes horizontal bars for the media type charts: value
  // over the largest, in a width × rowHeight grid.
  function barRows(stats, metric, width, labelWidth, rowHeight) {
    const max = Math.max(1, ...stats.map((s) => s[metric]));
    const room = Math.max(10, width - labelWidth - 90);
    return stats.map((s, i) => ({
      label: s.type,
      value: s[metric],
      y: i * rowHeight,
      x: labelWidth,
      width: Math.max(s[metric] > 0 ? 1 : 0, (s[metric] / max) * room),
    }));
  }

  // ================================================================ browser

  // start runs the page in window w.
  function start(w) {
    const app = new App(w);
    w.addEventListener('hashchange', () => app.show(true));
    app.show(false);
  }

  // LoadError is a failed read of a document, said for a person.
  class LoadError extends Error {}

  function App(w) {
    this.w = w;
    this.d = w.document;
    this.main = this.d.getElementById('app');
    this.crumbs = this.d.getElementById('crumbs');
    this.footer = this.d.getElementById('timings');
    this.site = makeSite(w.location.href);
    this.cache = new Map(); // fetch URL → document, the last few
    this.seq = 0;
  }

  // h builds an HTML element: attributes (class, text and on* handlers
  // included) and children (nodes or strings, falsy ones left out).
  App.prototype.h = function (tag, attrs) {
    const el = this.d.createElement(tag);
    for (const name in attrs || {}) {
      const v = attrs[name];
      if (v === undefined || v === null || v === false) continue;
      if (name === 'text') el.textContent = v;
      else if (name.startsWith('on')) el.addEventListener(name.slice(2), v);
      else el.setAttribute(name, v === true ? '' : v);
    }
    for (let i = 2; i < arguments.length; i++) append(el, arguments[i]);
    return el;
  };

  function append(el, child) {
    if (child === undefined || child === null || child === false) return;
    if (Array.isArray(child)) child.forEach((c) => append(el, c));
    else el.append(child);
  }

  // s builds an SVG element.
  App.prototype.s = function (tag, attrs, text) {
    const el = this.d.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const name in attrs || {}) el.setAttribute(name, attrs[name]);
    if (text !== undefined) el.textContent = text;
    return el;
  };

  // show renders the route in the fragment; moved says it follows a
  // navigation, so focus goes to the new heading.
  App.prototype.show = async function (moved) {
    const seq = ++this.seq;
    const route = parseRoute(this.w.location.hash);
    this.d.body.dataset.state = 'loading';
    const t0 = this.w.performance.now();
    let timings = null;
    try {
      await this.ensureBase();
      const url = routeURL(this.site, route.doc);
      const loaded = await this.load(url);
      if (seq !== this.seq) return;
      this.d.body.dataset.charts = 'none';
      const t1 = this.w.performance.now();
      const view = route.entry ? this.entryView(url, loaded.doc, route) : this.documentView(url, loaded.doc, route);
      this.main.replaceChildren(...view);
      this.crumbsFor(url, loaded.doc, route);
      timings = { fetch: loaded.fetch, parse: loaded.parse, reader: loaded.reader, render: this.w.performance.now() - t1, total: this.w.performance.now() - t0, entries: loaded.doc.entries.length };
      this.d.title = this.titleOf(url, loaded.doc, route);
    } catch (err) {
      if (seq !== this.seq) return;
      this.main.replaceChildren(...this.errorView(err));
      this.crumbs.replaceChildren();
      this.d.title = 'Cannot show the document · ResourceSync Source';
    }
    this.showTimings(timings);
    this.d.body.dataset.state = 'ready';
    if (moved) {
      const h1 = this.main.querySelector('h1');
      if (h1) h1.focus();
    }
    this.d.dispatchEvent(new this.w.CustomEvent('rsviewer:rendered', { detail: { route: route, timings: timings } }));
  };

  App.prototype.showTimings = function (t) {
    this.main.dataset.timings = t ? JSON.stringify(t) : '';
    this.footer.textContent = t
      ? 'Read ' + formatCount(t.entries) + ' entries in ' + formatMs(t.total) + ' (fetch ' + formatMs(t.fetch) + ', ' + t.reader + ' ' + formatMs(t.parse) + ', render ' + formatMs(t.render) + ').'
      : '';
  };

  App.prototype.titleOf = function (url, doc, route) {
    const set = setName(url);
    const name = route.entry ? 'Entry ' + route.entry + ' of ' + kindOf(doc) : kindOf(doc);
    return name + (set ? ' · ' + set : '') + ' · ResourceSync Source';
  };

  // ensureBase reads the Source Description once to learn the base_url.
  App.prototype.ensureBase = async function () {
    if (this.baseKnown) return;
    const loaded = await this.load(this.site.description);
    this.site.base = baseFromDescription(loaded.doc);
    this.baseKnown = true;
  };

  // load fetches and reads a document, keeping the last few.
  App.prototype.load = async function (url) {
    if (!readable(this.site, url)) throw new LoadError(notReadable(this.site, url));
    const target = fetchURL(this.site, url);
    const hit = this.cache.get(target);
    if (hit) return { doc: hit, reader: 'cache', fetch: 0, parse: 0 };
    const t0 = this.w.performance.now();
    const text = await this.fetchText(target);
    const t1 = this.w.performance.now();
    let read;
    try {
      read = readText(text, this.w.DOMParser);
    } catch (err) {
      throw new LoadError(target + ' is ' + err.message);
    }
    this.cache.set(target, read.doc);
    if (this.cache.size > 6) this.cache.delete(this.cache.keys().next().value);
    return { doc: read.doc, reader: read.reader, fetch: t1 - t0, parse: this.w.performance.now() - t1 };
  };

  App.prototype.fetchText = async function (url) {
    if (this.site.protocol === 'file:') return this.readFile(url);
    let res;
    try {
      res = await this.w.fetch(url, { cache: 'no-cache' });
    } catch (err) {
      throw new LoadError('Could not fetch ' + url + ' (' + err.message + ').');
    }
    if (!res.ok) throw new LoadError('The server answered ' + res.status + ' ' + res.statusText + ' for ' + url + '.');
    return res.text();
  };

  // readFile reads a document next to a page opened from file://, where
  // the browser allows it at all (fetch never does; XMLHttpRequest does in
  // some browsers or with a flag).
  App.prototype.readFile = function (url) {
    const w = this.w;
    return new Promise((resolve, reject) => {
      const fail = () => reject(new LoadError('This page was opened from a file (file://), and this browser does not let such a page read the documents beside it. ' +
        'Serve the output folder over HTTP instead, for example with “rsgen serve”, and open /resourcesync/index.html there.'));
      const x = new w.XMLHttpRequest();
      x.onload = () => (x.status === 0 || x.status === 200) && x.responseText ? resolve(x.responseText) : fail();
      x.onerror = fail;
      try {
        x.open('GET', url);
        x.send();
      } catch (err) {
        fail();
      }
    });
  };

  // ------------------------------------------------------------ links

  // docLink is an in-browser link to the document at url.
  App.prototype.docHref = function (url, extra) {
    return routeHash(Object.assign({ doc: routeKey(this.site, url) }, extra || {}));
  };

  // outLink links to where url is served, or shows it as text when it is
  // not a URI a page may link to.
  App.prototype.outLink = function (url, text, attrs) {
    const href = safeHref(fetchURL(this.site, url), this.site.protocol);
    if (!href) return this.h('span', { class: 'uri' }, this.uri(text));
    return this.h('a', Object.assign({ href: href, class: 'uri' }, attrs || {}), this.uri(text));
  };

  // uri renders a URI's text with a line break opportunity after each
  // slash, so that it wraps between path segments, not inside them.
  App.prototype.uri = function (text) {
    const parts = String(text).split(/(?<=\/)/);
    const out = [];
    parts.forEach((p, i) => {
      out.push(this.h('span', { class: 'seg', text: p }));
      if (i < parts.length - 1) out.push(this.d.createElement('wbr'));
    });
    return out;
  };

  // prose renders a sentence with its timestamps kept on one line.
  App.prototype.prose = function (text) {
    return String(text).split(/(\d{4}-\d{2}-\d{2}T[\d:.]+(?:Z|[+-]\d{2}:\d{2}))/).map((part, i) =>
      i % 2 ? this.h('time', { datetime: part, class: 'nowrap', text: part }) : part);
  };

  // target renders a URI: inside the browser when it is a document.
  App.prototype.target = function (url, isDocument) {
    const text = displayPath(this.site, url);
    if (isDocument && readable(this.site, url)) return this.h('a', { href: this.docHref(url), class: 'uri' }, this.uri(text));
    return this.outLink(url, text);
  };

  App.prototype.rawLink = function (url) {
    return this.outLink(url, 'XML', { class: 'raw', 'aria-label': 'the XML of ' + displayPath(this.site, url) });
  };

  // ------------------------------------------------------------ views

  App.prototype.errorView = function (err) {
    const h = this.h.bind(this);
    return [
      h('h1', { tabindex: '-1', text: 'Cannot show the document' }),
      h('p', { class: 'status', 'data-state': 'error', role: 'alert' }, h('strong', { class: 'badge', text: 'Error' }), ' ', err instanceof LoadError ? err.message : String(err.message || err)),
      h('p', {}, h('a', { href: '#', text: 'Back to the Source Description' })),
    ];
  };

  App.prototype.crumbsFor = function (url, doc, route) {
    const h = this.h.bind(this);
    const items = [];
    const add = (href, text) => items.push(h('li', {}, h('a', { href: href, text: text })));
    const isDescription = doc.capability === 'description';
    if (!isDescription) add(this.docHref(this.site.description), 'Source');
    const up = doc.links.find((l) => l.rel === 'up');
    if (up && doc.capability !== 'capabilitylist' && readable(this.site, up.href)) {
      add(this.docHref(up.href), setName(up.href) || fileName(up.href));
    }
    const index = doc.links.find((l) => l.rel === 'index');
    if (index && readable(this.site, index.href)) add(this.docHref(index.href), fileName(index.href));
    const here = isDescription ? 'Source' : (doc.capability === 'capabilitylist' ? setName(url) || fileName(url) : fileName(url));
    if (route.entry) {
      add(this.docHref(url, { q: route.q, type: route.type, change: route.change, sort: route.sort, dir: route.dir, page: route.page, size: route.size }), here);
      items.push(h('li', {}, h('span', { 'aria-current': 'page', text: 'Entry ' + route.entry })));
    } else {
      items.push(h('li', {}, h('span', { 'aria-current': 'page', text: here })));
    }
    this.crumbs.replaceChildren(h('ol', {}, items));
  };

  App.prototype.heading = function (url, doc, title) {
    const h = this.h.bind(this);
    const set = setName(url);
    return [
      h('h1', { tabindex: '-1' }, title, set && doc.capability !== 'description' ? h('span', { class: 'set', text: 'set ' + set }) : null),
      h('p', { class: 'doc-url' }, h('code', { class: 'uri' }, this.uri(url)), ' ', this.rawLink(url)),
    ];
  };

  App.prototype.statusLine = function (doc, url) {
    const h = this.h.bind(this);
    const st = statusOf(doc, url);
    return h('p', { class: 'status', 'data-state': st.state || 'none' },
      st.state ? h('strong', { class: 'badge', text: st.state[0].toUpperCase() + st.state.slice(1) }) : null, ' ', this.prose(st.text));
  };

  // documentView shows a document: heading, status, its own rs:md and
  // rs:ln, pictures, and its entries.
  App.prototype.documentView = function (url, doc, route) {
    const h = this.h.bind(this);
    const out = this.heading(url, doc, kindOf(doc));
    out.push(this.statusLine(doc, url));
    out.push(this.aboutSection(doc));
    const channels = this.channelsSection(doc);
    if (channels) out.push(channels);
    if (doc.entries.length) out.push(new EntryTable(this, url, doc, route).section);
    else out.push(h('p', { class: 'empty', text: 'This ' + kindOf(doc) + ' has no entries yet.' }));
    const sync = this.syncSection(url, doc);
    if (sync) out.push(sync);
    // The pictures come last: drawn when their lists are read, they do
    // not move what is above them.
    const charts = this.chartsSection(url, doc);
    if (charts) out.push(charts);
    return out;
  };

  // channelsSection lists the notification channels of a Capability
  // List: kind, topic and hub; null when it has none.
  App.prototype.channelsSection = function (doc) {
    const h = this.h.bind(this);
    const channels = channelsOf(doc);
    if (!channels.length) return null;
    const row = (c) => h('tr', { 'data-capability': c.capability },
      h('th', { scope: 'row', text: c.kind }),
      h('td', {}, this.target(c.topic, true)),
      h('td', {}, c.hub ? this.outLink(c.hub, c.hub) : h('span', { class: 'text', text: '(no hub)' })));
    return h('section', { class: 'channels', 'aria-labelledby': 'channels-h' },
      h('h2', { id: 'channels-h', text: 'Notification channels' }),
      h('table', { class: 'channels' },
        h('caption', { text: channels.length + ' channel' + (channels.length === 1 ? '' : 's') + ': subscribe to a topic at its hub (WebSub)' }),
        h('thead', {}, h('tr', {}, ['Kind', 'Topic', 'Hub'].map((c) => h('th', { scope: 'col', text: c })))),
        h('tbody', {}, channels.map(row))));
  };

  // syncSection shows the commands that mirror the Source from a Source
  // Description or a Capability List; null for other documents. A
  // Capability List's Change List is read first for resync's incremental
  // command, which needs a Change List rather than an index.
  App.prototype.syncSection = function (url, doc) {
    const first = syncCommands(url, doc, undefined);
    if (!first) return null;
    const h = this.h.bind(this);
    const body = h('div', {});
    const section = h('section', { class: 'sync', 'aria-labelledby': 'sync-h' }, h('h2', { id: 'sync-h', text: 'Sync this Source' }), body);
    const draw = (cmds, state) => {
      section.dataset.state = state;
      body.replaceChildren();
      append(body, [
        h('p', { text: 'A Destination mirrors ' + (doc.capability === 'description' ? 'a set of this Source' : 'this set') + ' into a folder with these commands. rsgen sync takes a baseline on its first run and the changes on every later one; resync-sync (resync 2.0.1) takes a baseline with --baseline, then the changes with --incremental.' }),
        this.commandList('rsgen sync', cmds.rsgen),
        this.commandList('resync 2.0.1, the reference client', cmds.resync),
        cmds.notes.map((n) => h('p', { class: 'note', text: n }))]);
    };
    const named = doc.entries.find((e) => e.md.capability === 'changelist');
    if (doc.capability !== 'capabilitylist' || !named) {
      draw(first, 'ready');
      return section;
    }
    draw(first, 'loading');
    this.load(named.loc).then((loaded) => ({ url: named.loc, doc: loaded.doc }), (err) => ({ url: named.loc, error: err.message }))
      .then((changeList) => draw(syncCommands(url, doc, changeList), 'ready'));
    return section;
  };

  // commandList shows commands as selectable text, one per line.
  App.prototype.commandList = function (title, commands) {
    if (!commands.length) return null;
    const h = this.h.bind(this);
    return [h('h3', { text: title }), commands.map((c) => h('pre', { class: 'command' }, h('code', { text: c })))];
  };

  // aboutSection lists the document's own attributes and links.
  App.prototype.aboutSection = function (doc) {
    const h = this.h.bind(this);
    const section = h('section', { class: 'about', 'aria-labelledby': 'about-h' }, h('h2', { id: 'about-h', text: 'Document' }),
      h('dl', { class: 'attrs' }, h('dt', { text: 'root element' }), h('dd', {}, h('code', { text: '<' + doc.root + '>' })), this.attributeRows(doc.md, [])));
    if (doc.links.length) {
      section.append(h('ul', { class: 'links doc-links', 'aria-label': 'Links of this document' }, doc.links.map((ln) => this.linkItem(ln))));
    }
    return section;
  };

  // value renders one attribute value: dates unbroken, hashes per
  // algorithm (abbreviated unless full), lengths with their size.
  App.prototype.value = function (name, v, full) {
    const h = this.h.bind(this);
    if (DATE_ATTRS.has(name)) return h('time', { datetime: v, class: 'nowrap', text: v });
    if (name === 'hash') {
      const parts = full ? String(v).split(/\s+/).filter(Boolean) : shortHash(v);
      return h('span', { class: 'hash', title: full ? null : v }, parts.map((p) => h('code', { class: 'nowrap', text: p })));
    }
    if (name === 'length') {
      const size = formatBytes(v);
      if (full) return h('span', { class: 'nowrap', text: Number(v) >= 1024 ? v + ' (' + size + ')' : v });
      return h('span', { class: 'nowrap', title: size, text: formatCount(v) });
    }
    if (name === 'path') return h('span', { class: 'uri' }, this.uri(v));
    if (name === 'change') return h('span', { class: 'change change-' + (CHANGES.includes(v) ? v : 'other'), text: v });
    return h('span', { class: 'text', text: v });
  };

  // linkItem renders one rs:ln in full: its relation, its target (inside
  // the browser for documents), and every other attribute.
  App.prototype.linkItem = function (ln) {
    const h = this.h.bind(this);
    const attrs = this.attributeRows(ln, ['rel', 'href']);
    return h('li', { 'data-rel': ln.rel || '' }, this.relName(ln.rel), ' ',
      ln.href ? this.target(ln.href, linkIsDocument(ln)) : h('span', { class: 'uri', text: '(no href)' }),
      attrs.length ? h('dl', { class: 'ln-attrs' }, attrs) : null);
  };

  // linkChip renders one rs:ln of a table row: its relation, linked to its
  // target, which its title names; the entry's own view has the rest, so
  // that a row stays short.
  App.prototype.linkChip = function (ln) {
    const h = this.h.bind(this);
    const label = relLabel(ln.rel);
    const href = ln.href && (linkIsDocument(ln) && readable(this.site, ln.href) ? this.docHref(ln.href) : safeHref(fetchURL(this.site, ln.href), this.site.protocol));
    const title = (ln.rel !== label ? ln.rel + ' ' : '') + (ln.href ? displayPath(this.site, ln.href) : '(no href)');
    return h('li', { 'data-rel': ln.rel || '' },
      href ? h('a', { href: href, title: title, text: label }) : h('span', { title: title, text: label }));
  };

  App.prototype.relName = function (rel) {
    const label = relLabel(rel);
    return label === rel ? this.h('span', { class: 'rel', text: label }) : this.h('abbr', { class: 'rel', title: rel, text: label });
  };

  // entryView shows one entry in full, with every attribute and link.
  App.prototype.entryView = function (url, doc, route) {
    const h = this.h.bind(this);
    const entry = doc.entries[route.entry - 1];
    if (!entry) throw new LoadError(fileName(url) + ' has ' + doc.entries.length + ' entries; there is no entry ' + route.entry + '.');
    const listRoute = Object.assign({}, route, { entry: 0 });
    const listHref = this.docHref(url, listRoute);
    const out = [h('h1', { tabindex: '-1' }, (entryIsDocument(doc, entry) ? 'Document ' : 'Resource ') + fileName(entry.loc),
      h('span', { class: 'set', text: 'entry ' + entry.n + ' of ' + formatCount(doc.entries.length) }))];
    out.push(h('p', { class: 'doc-url' }, 'In ', h('a', { href: listHref, text: kindOf(doc) + ' ' + fileName(url) }), ' ', this.rawLink(url)));
    const rows = [h('dt', { text: 'loc' }), h('dd', {}, this.target(entry.loc, entryIsDocument(doc, entry)),
      entryIsDocument(doc, entry) ? [' ', this.rawLink(entry.loc)] : null,
      h('div', {}, h('code', { class: 'uri' }, this.uri(entry.loc))))];
    if (entry.lastmod) rows.push(h('dt', { text: 'lastmod' }), h('dd', {}, this.value('lastmod', entry.lastmod, true)));
    out.push(h('section', { 'aria-labelledby': 'entry-h' }, h('h2', { id: 'entry-h', text: 'Entry' }), h('dl', { class: 'attrs' }, rows, this.attributeRows(entry.md, []))));
    if (entry.links.length) out.push(this.linksTable(entry));
    const nav = [];
    if (entry.n > 1) nav.push(h('a', { href: this.docHref(url, Object.assign({}, listRoute, { entry: entry.n - 1 })), text: '← Entry ' + (entry.n - 1) }));
    nav.push(h('a', { href: listHref, text: 'Back to the list' }));
    if (entry.n < doc.entries.length) nav.push(h('a', { href: this.docHref(url, Object.assign({}, listRoute, { entry: entry.n + 1 })), text: 'Entry ' + (entry.n + 1) + ' →' }));
    out.push(h('nav', { class: 'pager', 'aria-label': 'Entries' }, nav));
    return out;
  };

  // linksTable shows an entry's links with every attribute in full.
  App.prototype.linksTable = function (entry) {
    const h = this.h.bind(this);
    return h('section', { 'aria-labelledby': 'links-h' },
      h('h2', { id: 'links-h', text: 'Links (rs:ln)' }),
      h('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-labelledby': 'links-cap' },
        h('table', { class: 'links-table' },
          h('caption', { id: 'links-cap', text: entry.links.length + ' link' + (entry.links.length === 1 ? '' : 's') + ' of this entry' }),
          h('thead', {}, h('tr', {}, ['rel', 'href', 'attributes'].map((c) => h('th', { scope: 'col', text: c })))),
          h('tbody', {}, entry.links.map((ln) => h('tr', { 'data-rel': ln.rel || '' },
            h('th', { scope: 'row' }, relLabel(ln.rel), REL_LABELS[ln.rel] ? h('div', {}, h('code', { class: 'uri' }, this.uri(ln.rel))) : null),
            h('td', { class: 'col-loc' }, ln.href ? this.target(ln.href, linkIsDocument(ln)) : ''),
            h('td', {}, h('dl', { class: 'attrs' }, this.attributeRows(ln, ['rel', 'href']))))))))); 
  };

  // attributeRows lists attributes in full, as the terms of a dl, but
  // those named in skip.
  App.prototype.attributeRows = function (attrs, skip) {
    const h = this.h.bind(this);
    const rows = [];
    for (const name of orderAttributes(new Set(Object.keys(attrs)))) {
      if (!skip.includes(name)) rows.push(h('dt', { text: name }), h('dd', {}, this.value(name, attrs[name], true)));
    }
    return rows;
  };

  // ------------------------------------------------------------ entry table

  // EntryTable is the paged, filtered, sortable table of a document's
  // entries. Filtering, sorting and paging redraw only its body, and keep
  // their state in the fragment without adding history entries.
  function EntryTable(app, url, doc, route) {
    this.app = app;
    this.url = url;
    this.doc = doc;
    this.route = route;
    this.cols = columnsOf(doc);
    this.isDocs = doc.entries.length > 0 && entryIsDocument(doc, doc.entries[0]);
    const h = app.h.bind(app);
    this.tbody = h('tbody', { role: 'rowgroup' });
    this.summary = h('p', { class: 'summary', 'aria-live': 'polite' });
    this.pager = h('nav', { class: 'pager', 'aria-label': 'Pages of entries' });
    this.caption = h('caption', { id: 'entries-cap' });
    this.heads = this.cols.map((c) => this.headCell(c));
    // The explicit roles keep the table a table for assistive technology
    // where a narrow screen lays its rows out as cards (display: block).
    this.table = h('table', { class: 'entries', role: 'table', 'data-count': doc.entries.length }, this.caption,
      h('thead', { role: 'rowgroup' }, h('tr', { role: 'row' }, this.heads)), this.tbody);
    this.section = h('section', { class: 'entries-section', 'aria-labelledby': 'entries-h' },
      h('h2', { id: 'entries-h', text: this.isDocs ? 'Documents' : 'Entries' }),
      this.controls(),
      this.summary,
      h('div', { class: 'scroll', tabindex: '0', role: 'region', 'aria-labelledby': 'entries-cap' }, this.table),
      this.pager);
    this.refresh(false);
  }

  EntryTable.prototype.headCell = function (col) {
    const h = this.app.h.bind(this.app);
    const button = h('button', { type: 'button', class: 'sort', 'data-sort': col.key, title: 'Sort by ' + col.label, onclick: () => this.sortBy(col.key) },
      col.label, h('span', { class: 'arrow', 'aria-hidden': 'true' }));
    return h('th', { scope: 'col', role: 'columnheader', class: 'col-' + col.kind }, button);
  };

  EntryTable.prototype.controls = function () {
    const h = this.app.h.bind(this.app);
    const doc = this.doc;
    const r = this.route;
    const fields = [];
    fields.push(h('label', {}, 'Path contains ', h('input', {
      type: 'search', id: 'filter-q', name: 'q', value: r.q, autocomplete: 'off', spellcheck: 'false',
      oninput: (e) => this.update({ q: e.target.value, page: 1 }),
    })));
    const select = (id, name, label, counts) => h('label', {}, label + ' ', h('select', { id: id, name: name, onchange: (e) => this.update({ [name]: e.target.value, page: 1 }) },
      h('option', { value: '', selected: !r[name], text: 'any' }),
      counts.map((c) => {
        const value = c.value || NONE;
        return h('option', { value: value, selected: value === r[name], text: value + ' (' + formatCount(c.count) + ')' });
      })));
    if (doc.mdNames.includes('type')) fields.push(select('filter-type', 'type', 'Media type', countBy(doc.entries, 'type')));
    if (doc.mdNames.includes('change')) fields.push(select('filter-change', 'change', 'Change', countBy(doc.entries, 'change')));
    fields.push(h('label', {}, 'Rows per page ', h('select', { id: 'page-size', name: 'size', onchange: (e) => this.update({ size: Number(e.target.value), page: 1 }) },
      PAGE_SIZES.map((n) => h('option', { value: n, selected: n === r.size, text: n })))));
    return h('form', { class: 'controls', role: 'search', 'aria-label': 'Filter the entries', onsubmit: (e) => e.preventDefault() }, fields);
  };

  EntryTable.prototype.update = function (change) {
    Object.assign(this.route, change);
    this.refresh(true);
  };

  EntryTable.prototype.sortBy = function (key) {
    const dir = this.route.sort === key && this.route.dir === 'asc' ? 'desc' : 'asc';
    this.update({ sort: key, dir: dir, page: 1 });
  };

  // refresh redraws the rows for the route; remember writes the route
  // into the fragment.
  EntryTable.prototype.refresh = function (remember) {
    const app = this.app;
    const h = app.h.bind(app);
    const r = this.route;
    const all = this.doc.entries;
    const rows = sortEntries(filterEntries(all, r), r.sort, r.dir);
    const pg = pageOf(rows.length, r.page, r.size);
    r.page = pg.page;
    this.tbody.replaceChildren(...rows.slice(pg.start, pg.end).map((e) => this.row(e)));
    const filtered = rows.length !== all.length;
    const what = this.isDocs ? 'documents' : 'entries';
    this.caption.textContent = kindOf(this.doc) + ': ' + formatCount(all.length) + ' ' + what + (filtered ? ', ' + formatCount(rows.length) + ' shown by the filter' : '');
    this.summary.textContent = rows.length
      ? 'Showing ' + formatCount(pg.start + 1) + '–' + formatCount(pg.end) + ' of ' + formatCount(rows.length) + (filtered ? ' (filtered from ' + formatCount(all.length) + ')' : '') + '.'
      : 'No entry matches the filter.';
    this.table.dataset.shown = String(rows.length);
    this.heads.forEach((th, i) => {
      const key = this.cols[i].key;
      const sorted = key === r.sort;
      if (sorted) th.setAttribute('aria-sort', r.dir === 'desc' ? 'descending' : 'ascending');
      else th.removeAttribute('aria-sort');
      th.querySelector('.arrow').textContent = sorted ? (r.dir === 'desc' ? ' ▼' : ' ▲') : '';
    });
    const button = (label, page, disabled) => h('button', { type: 'button', disabled: disabled, onclick: () => this.update({ page: page }) }, label);
    this.pager.replaceChildren(
      button('« First', 1, pg.page === 1), button('‹ Previous', pg.page - 1, pg.page === 1),
      h('span', { class: 'page-of', text: 'Page ' + formatCount(pg.page) + ' of ' + formatCount(pg.pages) }),
      button('Next ›', pg.page + 1, pg.page === pg.pages), button('Last »', pg.pages, pg.page === pg.pages));
    this.pager.hidden = pg.pages === 1;
    if (remember) {
      app.w.history.replaceState(null, '', routeHash(Object.assign({}, r, { doc: routeKey(app.site, this.url) })));
    }
  };

  // row renders one entry. Each cell names its column (data-label), which
  // a narrow screen shows beside the value.
  EntryTable.prototype.row = function (e) {
    const app = this.app;
    const h = app.h.bind(app);
    const isDoc = entryIsDocument(this.doc, e);
    const cells = this.cols.map((c) => {
      const cell = { role: 'cell', class: 'col-' + c.kind, 'data-label': c.label };
      switch (c.kind) {
        case 'n':
          return h('td', cell, h('a', { href: app.docHref(this.url, Object.assign({}, this.route, { entry: e.n })), title: 'All of entry ' + e.n, 'aria-label': 'Entry ' + e.n + ' in full', text: e.n }));
        case 'loc':
          return h('th', Object.assign(cell, { scope: 'row', role: 'rowheader' }), e.loc ? app.target(e.loc, isDoc) : h('span', { class: 'missing', text: '(no loc)' }), isDoc && e.loc ? [' ', app.rawLink(e.loc)] : null);
        case 'links':
          return h('td', cell, e.links.length ? h('ul', { class: 'chips' }, e.links.map((ln) => app.linkChip(ln))) : '');
        default: {
          const v = valueOf(e, c.key);
          return h('td', cell, v === undefined || v === '' ? '' : app.value(c.label, v, false));
        }
      }
    });
    return h('tr', { role: 'row', 'data-n': e.n }, cells);
  };

  // ------------------------------------------------------------ pictures

  // chartsSection returns the pictures a document gets, drawn once the
  // documents they need are read: media types for Resource Lists and their
  // kin, change activity for Change Lists, both for a Capability List.
  App.prototype.chartsSection = function (url, doc) {
    const plan = this.chartPlan(url, doc);
    if (!plan.types && !plan.changes) return null;
    const h = this.h.bind(this);
    const body = h('div', { class: 'charts' }, h('p', { class: 'loading', text: 'Reading the lists for the pictures…' }));
    const section = h('section', { class: 'pictures', 'aria-labelledby': 'pictures-h', 'aria-busy': 'true' }, h('h2', { id: 'pictures-h', text: 'Pictures' }), body);
    const seq = this.seq;
    this.drawCharts(plan, body).catch((err) => {
      body.replaceChildren(h('p', { class: 'status', 'data-state': 'error' }, 'Could not draw the pictures: ' + err.message));
    }).finally(() => {
      section.removeAttribute('aria-busy');
      if (seq === this.seq) {
        this.d.body.dataset.charts = 'ready';
        this.d.dispatchEvent(new this.w.CustomEvent('rsviewer:charts'));
      }
    });
    this.d.body.dataset.charts = 'loading';
    return section;
  };

  // chartPlan says which documents feed which picture: types from the
  // Resource List (or this list), changes from the Change List Index and
  // its archive (or this list).
  App.prototype.chartPlan = function (url, doc) {
    const plan = { types: null, changes: null };
    const find = (cap) => doc.entries.find((e) => e.md.capability === cap);
    const c = doc.capability;
    if (c === 'capabilitylist') {
      const rl = find('resourcelist');
      const cl = find('changelist');
      const archive = find('changelist-archive');
      if (rl) plan.types = [rl.loc];
      if (cl || archive) plan.changes = [cl && cl.loc, archive && archive.loc].filter(Boolean);
    } else if (c === 'resourcelist' || c === 'resourcedump-manifest') {
      plan.types = [url];
    } else if (c === 'changelist' || c === 'changedump-manifest') {
      const archive = doc.links.find((l) => l.rel === 'archives');
      plan.changes = [url].concat(archive ? [archive.href] : []);
    } else if (c === 'changelist-archive') {
      plan.changes = [url];
    }
    return plan;
  };

  // collect reads the documents at urls and, through indexes and
  // archives, the lists they point at, each once; it returns the entries
  // of the lists of resources.
  App.prototype.collect = async function (urls, progress) {
    const seen = new Set();
    const entries = [];
    let queue = urls.slice();
    let read = 0;
    let lists = 0;
    while (queue.length) {
      const batch = Array.from(new Set(queue)).filter((u) => !seen.has(u));
      queue = [];
      batch.forEach((u) => seen.add(u));
      const docs = await mapLimit(batch, 4, async (u) => {
        const loaded = await this.load(u);
        progress(++read, seen.size);
        return loaded.doc;
      });
      for (const d of docs) {
        if (d.root === 'sitemapindex' || LISTS_OF_DOCUMENTS.has(d.capability)) {
          queue.push(...d.entries.map((e) => e.loc).filter((u) => !seen.has(u)));
        } else {
          lists++;
          for (const e of d.entries) entries.push(e);
        }
      }
    }
    return { entries: entries, lists: lists };
  };

  App.prototype.drawCharts = async function (plan, body) {
    const h = this.h.bind(this);
    const figures = [];
    const note = h('p', { class: 'loading', text: 'Reading the lists for the pictures…' });
    body.replaceChildren(note);
    const progress = (done, all) => {
      note.textContent = 'Reading the lists for the pictures… ' + done + ' of ' + all;
    };
    if (plan.types) {
      const got = await this.collect(plan.types, progress);
      const stats = foldTail(mediaTypeStats(got.entries), 12);
      figures.push(this.typeFigure(stats, 'count', 'Resources by media type'), this.typeFigure(stats, 'bytes', 'Bytes by media type'));
    }
    if (plan.changes) {
      const got = await this.collect(plan.changes, progress);
      figures.push(this.activityFigure(changeActivity(got.entries), got.lists));
    }
    body.replaceChildren(...figures);
  };

  App.prototype.chartWidth = function () {
    return Math.max(280, Math.min(900, this.main.clientWidth || 600));
  };

  App.prototype.typeFigure = function (stats, metric, title) {
    const h = this.h.bind(this);
    const s = this.s.bind(this);
    const id = 'fig-' + metric;
    const rowH = 26;
    const width = this.chartWidth() > 620 ? Math.floor((this.chartWidth() - 24) / 2) : this.chartWidth();
    const labelW = Math.min(170, Math.floor(width * 0.42));
    const fmt = metric === 'bytes' ? formatBytes : formatCount;
    const rows = barRows(stats, metric, width, labelW, rowH);
    const svg = s('svg', { class: 'chart chart-types', width: width, height: Math.max(rowH, rows.length * rowH), viewBox: '0 0 ' + width + ' ' + Math.max(rowH, rows.length * rowH), role: 'img', 'aria-labelledby': id + '-cap' });
    for (const r of rows) {
      const g = s('g', { class: 'type-row', 'data-type': r.label, 'data-value': r.value });
      g.append(s('title', {}, r.label + ': ' + fmt(r.value)));
      g.append(s('text', { x: labelW - 6, y: r.y + rowH / 2, class: 'label', 'text-anchor': 'end', 'dominant-baseline': 'middle' }, ellipsis(r.label, Math.floor(labelW / 7))));
      g.append(s('rect', { x: r.x, y: r.y + 4, width: r.width, height: rowH - 8, class: 'bar bar-' + metric }));
      g.append(s('text', { x: r.x + r.width + 6, y: r.y + rowH / 2, class: 'value', 'dominant-baseline': 'middle' }, fmt(r.value)));
      svg.append(g);
    }
    const total = stats.reduce((a, x) => a + x[metric], 0);
    return h('figure', { class: 'figure', id: id },
      h('figcaption', { id: id + '-cap', text: title + ' (' + fmt(total) + ' in all)' }),
      svg,
      this.dataTable(title, ['media type', metric === 'bytes' ? 'bytes' : 'resources'], stats.map((x) => [x.type, metric === 'bytes' ? formatCount(x.bytes) + ' (' + formatBytes(x.bytes) + ')' : formatCount(x.count)])));
  };

  function ellipsis(s, max) {
    return s.length > max ? s.slice(0, Math.max(1, max - 1)) + '…' : s;
  }

  App.prototype.activityFigure = function (activity, lists) {
    const h = this.h.bind(this);
    const s = this.s.bind(this);
    const laid = activityBuckets(activity.days);
    const buckets = laid.buckets;
    const totals = { created: 0, updated: 0, deleted: 0 };
    buckets.forEach((b) => CHANGES.forEach((c) => { totals[c] += b[c]; }));
    const unit = laid.unit === 'day' ? 'day' : 'month';
    const title = 'Changes per ' + unit + ', from ' + lists + ' list' + (lists === 1 ? '' : 's');
    const legend = h('ul', { class: 'legend' }, CHANGES.map((c) => h('li', {}, h('span', { class: 'swatch swatch-' + c, 'aria-hidden': 'true' }), c + ' ' + formatCount(totals[c]))));
    if (!buckets.length) {
      return h('figure', { class: 'figure figure-wide', id: 'fig-changes' }, h('figcaption', { id: 'fig-changes-cap', text: title }),
        h('p', { class: 'empty', text: 'No changes published yet' + (activity.undated ? ' (' + activity.undated + ' without a time)' : '') + '.' }));
    }
    const geo = activityChart(buckets, this.chartWidth(), 200);
    const svg = s('svg', { class: 'chart chart-changes', width: geo.width, height: geo.height, viewBox: '0 0 ' + geo.width + ' ' + geo.height, role: 'img', 'aria-labelledby': 'fig-changes-cap' });
    for (const t of geo.ticks) {
      svg.append(s('line', { x1: geo.left, x2: geo.left + geo.plotW, y1: t.y, y2: t.y, class: 'grid' }));
      svg.append(s('text', { x: geo.left - 6, y: t.y, class: 'value', 'text-anchor': 'end', 'dominant-baseline': 'middle' }, formatCount(t.value)));
    }
    for (const b of geo.bars) {
      const g = s('g', { class: 'day', 'data-key': b.key, 'data-created': b.counts.created, 'data-updated': b.counts.updated, 'data-deleted': b.counts.deleted });
      g.append(s('title', {}, b.key + ': ' + CHANGES.map((c) => b.counts[c] + ' ' + c).join(', ')));
      for (const seg of b.segments) {
        g.append(s('rect', { x: b.x, y: seg.y, width: b.width, height: seg.height, class: 'bar bar-' + seg.change, 'data-change': seg.change, 'data-count': seg.count }));
      }
      svg.append(g);
    }
    // Every bar gets its date when there is room, else the axis its ends.
    if (geo.plotW / buckets.length >= 80) {
      for (const b of geo.bars) svg.append(s('text', { x: b.x + b.width / 2, y: geo.height - 6, class: 'label', 'text-anchor': 'middle' }, b.key));
    } else {
      const first = buckets[0].key;
      const last = buckets[buckets.length - 1].key;
      svg.append(s('text', { x: geo.left, y: geo.height - 6, class: 'label' }, first));
      if (last !== first) svg.append(s('text', { x: geo.left + geo.plotW, y: geo.height - 6, class: 'label', 'text-anchor': 'end' }, last));
    }
    return h('figure', { class: 'figure figure-wide', id: 'fig-changes' },
      h('figcaption', { id: 'fig-changes-cap', text: title }), legend, svg,
      this.dataTable(title, [unit, 'created', 'updated', 'deleted'], buckets.filter((b) => b.created + b.updated + b.deleted).map((b) => [b.key, formatCount(b.created), formatCount(b.updated), formatCount(b.deleted)])));
  };

  // dataTable gives a picture's numbers as a table, for reading them
  // exactly and for people who cannot see the picture.
  App.prototype.dataTable = function (title, heads, rows) {
    const h = this.h.bind(this);
    return h('details', { class: 'numbers' }, h('summary', { text: 'The numbers' }),
      h('div', { class: 'scroll' }, h('table', {},
        h('caption', { text: title }),
        h('thead', {}, h('tr', {}, heads.map((x) => h('th', { scope: 'col', text: x })))),
        h('tbody', {}, rows.map((r) => h('tr', {}, h('th', { scope: 'row', text: r[0] }), r.slice(1).map((v) => h('td', { text: v }))))))));
  };

  // mapLimit maps fn over items with at most limit calls at a time.
  async function mapLimit(items, limit, fn) {
    const out = new Array(items.length);
    let next = 0;
    const worker = async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]);
      }
    };
    await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
    return out;
  }

  return {
    SITEMAP_NS, RS_NS, DESCRIPTION_PATH,
    parseXML, readDocument, orderAttributes, scanDocument, readText, SCAN_ABOVE,
    makeSite, baseFromDescription, fetchURL, readable, routeKey, routeURL, safeHref, displayPath, setName, fileName,
    parseRoute, routeHash,
    kindOf, relLabel, entryIsDocument, linkIsDocument, statusOf, channelsOf,
    syncCommands, syncSetName, shellWords,
    columnsOf, NONE, filterEntries, sortEntries, countBy, pageOf,
    mediaTypeStats, foldTail, eventDay, changeActivity, activityBuckets,
    formatCount, formatBytes, shortHash, formatMs,
    niceMax, activityChart, barRows, mapLimit,
    start,
  };
}));
