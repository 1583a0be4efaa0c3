package checker

import (
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rsgen/rsgen/rs"
)

// docChecker applies the rules that need only one document.
type docChecker struct {
	d   *Document
	rep *reporter
	k   kind
	// known is set when the document's capability is one the checker knows.
	known bool
	// standalone is set for a document checked on its own, outside any
	// Source: rules about its place in a Source are then warnings.
	standalone bool
	from       *dateTime // the root's from, when valid
	until      *dateTime // the root's until, when valid
}

// checkDocument applies every per-document rule to d.
func checkDocument(d *Document, rep *reporter, standalone bool) {
	c := &docChecker{d: d, rep: rep, standalone: standalone}
	c.k, c.known = kindOf(d.Capability())
	c.root()
	c.entries()
	c.order()
	c.continuity()
	c.notification()
}

func (c *docChecker) root() {
	d := c.d
	if d.MD == nil {
		c.rep.add(d.Line, "md-missing", "<%s> has no rs:md child; it must give the document's capability", d.rootName())
	} else {
		c.rootMD(d.MD)
	}
	for i := range d.Links {
		c.lnValues(&d.Links[i])
	}
	if d.MD == nil || d.Capability() == "" || !c.known {
		return
	}
	c.rootLinks()
	c.empty()
}

// empty reports a document without entries. §7 lets a <urlset> or
// <sitemapindex> be empty, and an open Change List with no change yet is;
// but sitemap.xsd and siteindex.xsd need one entry, so that xmllint and
// validating Destinations reject any other empty document: a warning
// (empty-document). A closed document is never rewritten (§12.1), so an
// empty one stays invalid and useless for good: an error (empty-closed).
func (c *docChecker) empty() {
	if c.d.EntryCount > 0 {
		return
	}
	_, closed := c.d.MD.Attr("until")
	what := describe(c.d.Capability(), c.d.Index)
	switch {
	case closed:
		c.rep.add(c.d.MD.Line, "empty-closed", "a closed %s (with until) has no entries; only an open document may be empty", what)
	case c.d.Capability() != rs.CapChangeList || c.d.Index:
		c.rep.add(c.d.MD.Line, "empty-document", "the %s has no entries, which sitemap.xsd refuses (xmllint does); only an open Change List, with no change yet, has reason to be empty", what)
	}
}

func (c *docChecker) rootMD(m *MD) {
	capability, ok := m.Attr("capability")
	switch {
	case !ok || capability == "":
		c.rep.add(m.Line, "capability-missing", "the root rs:md has no capability attribute")
	case !c.known:
		c.rep.add(m.Line, "capability-unknown", "capability %q is not defined by ResourceSync 1.1 or its archives", capability)
	}
	c.mdValues(m)
	if !c.known {
		return
	}
	c.rootTimes(m)
	c.from = mdTime(m, "from")
	c.until = mdTime(m, "until")
}

// rootTimes applies Appendix A to the root rs:md.
func (c *docChecker) rootTimes(m *MD) {
	f := c.k.family
	want := "at"
	if f.usesFrom() {
		want = "from"
	}
	if _, ok := m.Attr(want); c.k.rootTime && !ok {
		c.rep.add(m.Line, "time-required", "the root rs:md of a %s has no %s attribute", describe(c.d.Capability(), c.d.Index), want)
	}
	c.forbiddenTimes(m)
	c.interval(m)
}

// forbiddenTimes reports time attributes of the other family.
func (c *docChecker) forbiddenTimes(m *MD) {
	f := c.k.family
	for _, name := range []string{"at", "completed", "from", "until"} {
		if _, ok := m.Attr(name); !ok {
			continue
		}
		atName := name == "at" || name == "completed"
		if (atName && f.usesFrom()) || (!atName && f.usesAt()) {
			c.rep.add(m.Line, "time-forbidden", "%s is not used in a %s", name, describe(c.d.Capability(), c.d.Index))
		}
	}
}

// interval reports until before from and completed before at.
func (c *docChecker) interval(m *MD) {
	for _, p := range [][2]string{{"from", "until"}, {"at", "completed"}} {
		a, b := mdTime(m, p[0]), mdTime(m, p[1])
		if a != nil && b != nil && b.t.Before(a.t) {
			c.rep.add(m.Line, "time-interval", "%s %s is before %s %s", p[1], m.Attrs[p[1]], p[0], m.Attrs[p[0]])
		}
	}
}

// mdTime returns the datetime attribute name of m, or nil when m is nil
// or the attribute is absent or bad.
func mdTime(m *MD, name string) *dateTime {
	v, ok := m.Attr(name)
	if !ok {
		return nil
	}
	dt, err := parseDateTime(v, false)
	if err != nil {
		return nil
	}
	return &dt
}

func (c *docChecker) rootLinks() {
	d := c.d
	capability := d.Capability()
	if capability != rs.CapDescription && d.link(rs.RelUp) == nil {
		sev := Error
		if c.standalone {
			sev = Warning
		}
		c.rep.addSeverity(sev, d.MD.Line, "up-missing", "a %s has no rs:ln rel=\"up\" to its parent", describe(capability, d.Index))
	}
	if (capability == rs.CapDescription || capability == rs.CapCapabilityList) && d.link(rs.RelDescribedBy) == nil {
		c.rep.addSection(c.k.section, d.MD.Line, "describedby-missing", "a %s should link to a description with rel=\"describedby\"", describe(capability, d.Index))
	}
	if capability == rs.CapCapabilityList && d.Index {
		c.rep.add(d.Line, "capabilitylist-index", "a Capability List is a <urlset>; Sources should not publish it as a <sitemapindex>")
	}
}

// mdValues checks the syntax of the attributes of any rs:md.
func (c *docChecker) mdValues(m *MD) {
	for _, name := range []string{"at", "completed", "from", "until", "datetime", "modified"} {
		if v, ok := m.Attr(name); ok {
			c.dateTime(m.Line, name, v, false)
		}
	}
	c.commonValues(m.Line, m.Attrs)
	if v, ok := m.Attr("change"); ok && v != rs.ChangeCreated && v != rs.ChangeUpdated && v != rs.ChangeDeleted {
		c.rep.add(m.Line, "change-value", "change %q is not created, updated or deleted", v)
	}
}

// commonValues checks length, type, hash and path, shared by rs:md and
// rs:ln.
func (c *docChecker) commonValues(line int, attrs map[string]string) {
	if v, ok := attrs["length"]; ok {
		if n, err := strconv.ParseInt(strings.TrimPrefix(v, "+"), 10, 64); err != nil || n < 0 {
			c.rep.add(line, "length-value", "length %q is not a non-negative integer", v)
		}
	}
	if v, ok := attrs["type"]; ok && !isSchemaMediaType(v) {
		c.rep.add(line, "type-syntax", "type %q does not match the schema's pattern [\\w-]+/[\\w-]+ (no parameters, no '.')", v)
	}
	if v, ok := attrs["hash"]; ok {
		_, problems := parseHash(v)
		for _, p := range problems {
			c.rep.add(line, p.rule, "%s", p.msg)
		}
	}
	if v, ok := attrs["path"]; ok && !validPath(v) {
		c.rep.add(line, "path-syntax", "path %q must start with / and not end with /", v)
	}
}

// validPath matches the schema's pathType "/.*[^/]".
func validPath(p string) bool {
	return len(p) >= 2 && p[0] == '/' && p[len(p)-1] != '/' && !strings.ContainsAny(p, "\n\r")
}

// isSchemaMediaType matches the schema's contentType pattern [\w-]+/[\w-]+,
// where \w is XML Schema's: every character but punctuation, separators and
// "other" characters.
func isSchemaMediaType(s string) bool {
	typ, sub, ok := strings.Cut(s, "/")
	return ok && isXSDWordOrDash(typ) && isXSDWordOrDash(sub)
}

// isXSDWord reports whether r is in XML Schema's \w.
func isXSDWord(r rune) bool {
	return !unicode.In(r, unicode.P, unicode.Z, unicode.C)
}

func isXSDWordOrDash(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r != '-' && !isXSDWord(r) {
			return false
		}
	}
	return true
}

// dateTime checks one datetime value.
func (c *docChecker) dateTime(line int, name, v string, dateOK bool) {
	dt, err := parseDateTime(v, dateOK)
	switch {
	case err != nil:
		c.rep.add(line, "datetime-syntax", "%s %q is not a W3C Datetime such as 2013-01-03T09:00:00Z", name, v)
	case dt.hasTim && !dt.hasTZ:
		c.rep.add(line, "datetime-timezone", "%s %q has a time but no time zone; add Z", name, v)
	case dt.hasTim && !dt.utcZ:
		c.rep.add(line, "datetime-utc", "%s %q is not in UTC; write %s", name, v, dt.t.UTC().Format(rs.TimeLayout))
	}
}

// lnValues checks any rs:ln.
func (c *docChecker) lnValues(l *Link) {
	rel, hasRel := l.Attrs["rel"]
	href, hasHref := l.Attrs["href"]
	if !hasRel || !hasHref || rel == "" || href == "" {
		c.rep.add(l.Line, "ln-attrs", "rs:ln needs both rel and href")
	}
	if rel != "" && !isRelName(rel) && !isAbsoluteURI(rel) {
		c.rep.add(l.Line, "ln-rel-syntax", "relation %q is neither a lowercase registered name nor an absolute URI", rel)
	}
	if href != "" {
		c.uri(l.Line, "href", href)
		if uriProblem(href) == "" && !isAbsoluteURI(href) {
			c.rep.add(l.Line, "href-relative", "href %q is not an absolute URI", href)
		}
	}
	if v, ok := l.Attrs["pri"]; ok {
		if n, err := strconv.Atoi(strings.TrimPrefix(v, "+")); err != nil || n < 1 || n > 999999 {
			c.rep.add(l.Line, "ln-pri", "pri %q is not an integer from 1 to 999999", v)
		}
	}
	if v, ok := l.Attrs["modified"]; ok {
		c.dateTime(l.Line, "modified", v, false)
	}
	c.commonValues(l.Line, l.Attrs)
	if _, ok := l.Attrs["type"]; rel == rs.RSNS+"patch" && !ok {
		c.rep.add(l.Line, "ln-patch-type", "a patch link must give the type of the patch")
	}
}

// uri reports percent-encoding problems of a URI.
func (c *docChecker) uri(line int, what, s string) {
	if p := uriProblem(s); p != "" {
		c.rep.add(line, "uri-encoding", "%s %q: %s", what, s, p)
	}
}

func (c *docChecker) entries() {
	caps := map[string]int{}
	paths := map[string]int{}
	var locs map[string]int
	if listsOnce(c.d) {
		locs = make(map[string]int, len(c.d.Entries))
	}
	for i := range c.d.Entries {
		e := &c.d.Entries[i]
		c.entryValues(e)
		if !c.known {
			continue
		}
		c.entryKind(e, caps)
		c.entryTimes(e)
		c.entryPath(e, paths)
		c.packageRange(e)
		if locs != nil {
			c.entryOnce(e, locs)
		}
	}
}

// listsOnce reports whether d lists each resource at most once: a
// Resource List and a Resource Dump Manifest describe one snapshot, in
// which a resource has one state (§10.1, §11.2). The reference client
// rejects a Resource List that repeats a loc.
func listsOnce(d *Document) bool {
	capability := d.Capability()
	return !d.Index && (capability == rs.CapResourceList || capability == rs.CapResourceDumpManifest)
}

// entryOnce reports an entry whose loc an earlier entry has.
func (c *docChecker) entryOnce(e *Entry, locs map[string]int) {
	if e.Loc == "" {
		return
	}
	if first, dup := locs[e.Loc]; dup {
		c.rep.add(e.LocLine, "loc-duplicate", "%s is listed twice in this %s (first on line %d)", e.Loc, describe(c.d.Capability(), false), first)
		return
	}
	locs[e.Loc] = e.LocLine
}

func (c *docChecker) entryValues(e *Entry) {
	if e.Loc != "" {
		c.uri(e.LocLine, "loc", e.Loc)
		if uriProblem(e.Loc) == "" && !isAbsoluteURI(e.Loc) {
			c.rep.add(e.LocLine, "loc-absolute", "loc %q is not an absolute URI", e.Loc)
		}
		if n := utf8.RuneCountInString(e.Loc); n < 12 || n > 2048 {
			c.rep.add(e.LocLine, "loc-length", "loc has %d characters; the Sitemap schema allows 12 to 2048", n)
		}
	}
	if e.Lastmod != "" || e.LastmodLn > 0 {
		c.dateTime(e.LastmodLn, "lastmod", e.Lastmod, true)
	}
	c.sitemapValues(e)
	if e.MD != nil {
		c.mdValues(e.MD)
	}
	for i := range e.Links {
		c.lnValues(&e.Links[i])
	}
}

var changefreqs = setOf("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")

func (c *docChecker) sitemapValues(e *Entry) {
	if e.Changefreq != "" && !changefreqs[e.Changefreq] {
		c.rep.add(e.Line, "changefreq-value", "changefreq %q is not always, hourly, daily, weekly, monthly, yearly or never", e.Changefreq)
	}
	if e.Priority != "" && !validPriority(e.Priority) {
		c.rep.add(e.Line, "priority-value", "priority %q is not a decimal from 0.0 to 1.0", e.Priority)
	}
}

// validPriority checks an xsd:decimal between 0.0 and 1.0.
func validPriority(s string) bool {
	digits := strings.TrimLeft(s, "+-")
	if digits == "" || digits == "." || strings.Count(digits, ".") > 1 || strings.Trim(digits, "0123456789.") != "" || len(s)-len(digits) > 1 {
		return false
	}
	r, ok := new(big.Rat).SetString(s)
	return ok && r.Sign() >= 0 && r.Cmp(big.NewRat(1, 1)) <= 0
}

// entryKind applies the rules of the document kind to one entry.
func (c *docChecker) entryKind(e *Entry, caps map[string]int) {
	capability := c.d.Capability()
	switch {
	case c.d.Index:
		// The entries of an index are parts, checked when they are read.
	case capability == rs.CapDescription:
		if v, ok := e.MD.Attr("capability"); e.MD != nil && (!ok || v != rs.CapCapabilityList) {
			c.rep.add(e.MD.Line, "description-entry", "a Source Description entry's rs:md has capability %q; want capabilitylist", v)
		}
	case capability == rs.CapCapabilityList:
		c.capabilityEntry(e, caps)
	}
	if c.k.change && !c.d.Index {
		c.changeEntry(e)
	} else if v, ok := e.MD.Attr("change"); ok {
		c.rep.add(e.MD.Line, "change-unexpected", "change=%q in a %s; change is for Change Lists and Change Dump Manifests", v, describe(capability, c.d.Index))
	}
	if c.k.dump && !c.d.Index {
		_, hasType := e.MD.Attr("type")
		_, hasLength := e.MD.Attr("length")
		if !hasType || !hasLength {
			c.rep.addSection(c.k.section, e.Line, "package-md", "a %s entry should give the package's type and length in rs:md", c.k.name)
		}
	}
}

func (c *docChecker) capabilityEntry(e *Entry, caps map[string]int) {
	v, ok := e.MD.Attr("capability")
	if !ok || v == "" {
		c.rep.add(e.Line, "capability-entry-missing", "a Capability List entry needs rs:md with a capability")
		return
	}
	if first, dup := caps[v]; dup {
		c.rep.add(e.MD.Line, "capability-duplicate", "capability %q is listed twice (first on line %d); use an index for several documents", v, first)
	}
	caps[v] = e.MD.Line
	k, known := kindOf(v)
	switch {
	case !known:
		c.rep.add(e.MD.Line, "capability-entry-unknown", "capability %q is not defined by ResourceSync 1.1 or its archives", v)
	case k.family == familyNone || k.manifest:
		c.rep.add(e.MD.Line, "capability-entry", "a Capability List does not list a %s", k.name)
	}
}

func (c *docChecker) changeEntry(e *Entry) {
	change, ok := e.MD.Attr("change")
	if !ok {
		c.rep.addSection(c.k.section, e.Line, "change-missing", "a %s entry needs rs:md with change=created|updated|deleted", c.k.name)
		return
	}
	if change == rs.ChangeDeleted {
		for _, a := range []string{"hash", "length", "type"} {
			if _, has := e.MD.Attr(a); has {
				c.rep.add(e.MD.Line, "deleted-content", "a deletion has %s; a deleted resource has no content", a)
			}
		}
	}
	c.datetimeRange(e)
}

// datetimeRange checks that the change's datetime is in [from, until].
func (c *docChecker) datetimeRange(e *Entry) {
	dt := mdTime(e.MD, "datetime")
	if dt == nil {
		return
	}
	if c.from != nil && dt.t.Before(c.from.t) {
		c.rep.add(e.MD.Line, "datetime-range", "datetime %s is before the document's from %s", e.MD.Attrs["datetime"], c.d.MD.Attrs["from"])
	}
	if c.until != nil && dt.t.After(c.until.t) {
		c.rep.add(e.MD.Line, "datetime-range", "datetime %s is after the document's until %s", e.MD.Attrs["datetime"], c.d.MD.Attrs["until"])
	}
}

// entryTimes applies Appendix A to an entry's rs:md.
func (c *docChecker) entryTimes(e *Entry) {
	allowed := c.k.childTime
	if c.d.Index {
		allowed = c.k.indexChildren
	}
	m := e.MD
	if m == nil {
		if allowed == "recommended" {
			c.rep.add(e.Line, "child-from-missing", "entries of a %s should have rs:md from", describe(c.d.Capability(), c.d.Index))
		}
		return
	}
	c.forbiddenTimes(m)
	c.interval(m)
	has := func(n string) bool { _, ok := m.Attr(n); return ok }
	anyTime := has("at") || has("completed") || has("from") || has("until")
	switch {
	case allowed == "" && anyTime:
		c.rep.add(m.Line, "time-unexpected", "entries of a %s carry no at, completed, from or until", describe(c.d.Capability(), c.d.Index))
	case allowed == "recommended" && !has("from"):
		c.rep.add(m.Line, "child-from-missing", "entries of a %s should have rs:md from", describe(c.d.Capability(), c.d.Index))
	}
}

// entryPath applies the manifest rules about path.
func (c *docChecker) entryPath(e *Entry, paths map[string]int) {
	path, has := e.MD.Attr("path")
	if !c.k.manifest {
		if has {
			c.rep.add(e.MD.Line, "path-unexpected", "path in a %s; path is for manifests", describe(c.d.Capability(), c.d.Index))
		}
		return
	}
	if change, _ := e.MD.Attr("change"); change == rs.ChangeDeleted {
		return
	}
	if !has {
		c.rep.addSection(c.k.section, e.Line, "path-missing", "a %s entry needs rs:md path, the bitstream's place in the package", c.k.name)
		return
	}
	if first, dup := paths[path]; dup {
		c.rep.add(e.MD.Line, "path-duplicate", "path %q is used twice (first on line %d)", path, first)
	}
	paths[path] = e.MD.Line
	if _, ok := e.MD.Attr("type"); !ok {
		c.rep.addSection(c.k.section, e.MD.Line, "type-missing", "a %s entry should give the bitstream's type", c.k.name)
	}
}

// order checks forward chronological order where the specification asks
// for it.
func (c *docChecker) order() {
	if !c.known {
		return
	}
	capability := c.d.Capability()
	switch {
	case c.k.change && !c.d.Index:
		c.orderBy("order", c.k.section, func(e *Entry) *dateTime { return mdTime(e.MD, "datetime") })
	case c.k.family.usesFrom() && c.d.Index:
		c.orderBy("order", "§12.2", c.entryFrom)
	case capability == rs.CapChangeListArchive || capability == rs.CapChangeDumpArchive:
		c.orderBy("order", c.k.section, c.entryFrom)
	case capability == rs.CapChangeDump:
		c.orderBy("dump-order", "§13.1", c.entryFrom)
	}
}

// entryFrom is the time of an entry that stands for a period: its rs:md
// from, else its lastmod.
func (c *docChecker) entryFrom(e *Entry) *dateTime {
	if dt := mdTime(e.MD, "from"); dt != nil {
		return dt
	}
	if dt, err := parseDateTime(e.Lastmod, true); err == nil {
		return &dt
	}
	return nil
}

// orderBy reports the first entry whose time is before the previous one's.
// Entries without a time are skipped.
func (c *docChecker) orderBy(rule, section string, at func(*Entry) *dateTime) {
	var prev time.Time
	prevLine := 0
	for i := range c.d.Entries {
		e := &c.d.Entries[i]
		dt := at(e)
		if dt == nil {
			continue
		}
		if prevLine > 0 && dt.t.Before(prev) {
			c.rep.addSection(section, e.Line, rule, "entries not in forward chronological order: %s is before the time of the entry on line %d", dt.t.UTC().Format(time.RFC3339Nano), prevLine)
			return
		}
		prev, prevLine = dt.t, e.Line
	}
}

// packageRange reports a Change Dump package whose from or until lies
// outside the dump's own (§13.1): the dump covers the period of each of
// its packages.
func (c *docChecker) packageRange(e *Entry) {
	if c.d.Capability() != rs.CapChangeDump || c.d.Index || e.MD == nil {
		return
	}
	dump := period{from: c.from, until: c.until}
	pkg := period{from: mdTime(e.MD, "from"), until: mdTime(e.MD, "until")}
	if msg := dump.excess(pkg, "Change Dump"); msg != "" {
		c.rep.add(e.MD.Line, "package-range", "the package's %s", msg)
	}
}

// continuity checks that the periods an index or an archive of change
// documents lists meet. A Destination that has processed a closed Change
// List continues with the one whose from is its until (§12.1): a gap
// loses the changes in between, an overlap replays them, and an open
// document followed by another is never left.
func (c *docChecker) continuity() {
	capability := c.d.Capability()
	if !c.known || !(c.k.family.usesFrom() && c.d.Index) && capability != rs.CapChangeListArchive && capability != rs.CapChangeDumpArchive {
		return
	}
	var prev *Entry
	for i := range c.d.Entries {
		e := &c.d.Entries[i]
		from := mdTime(e.MD, "from")
		if prev != nil && from != nil {
			c.meets(prev, e, from)
		}
		prev = nil
		if from != nil {
			prev = e
		}
	}
}

// meets reports when e, which starts at from, does not start where prev
// ends.
func (c *docChecker) meets(prev, e *Entry, from *dateTime) {
	until := mdTime(prev.MD, "until")
	_, closed := prev.MD.Attr("until")
	switch {
	case !closed:
		c.rep.add(e.MD.Line, "interval-gap", "the entry on line %d is open (no until) but another follows it; only the last may be open", prev.Line)
	case until == nil:
	case from.t.After(until.t):
		c.rep.add(e.MD.Line, "interval-gap", "gap: from %s is after the until %s of the entry on line %d; changes in between are in no document", e.MD.Attrs["from"], prev.MD.Attrs["until"], prev.Line)
	case from.t.Before(until.t):
		c.rep.add(e.MD.Line, "interval-gap", "overlap: from %s is before the until %s of the entry on line %d", e.MD.Attrs["from"], prev.MD.Attrs["until"], prev.Line)
	}
}
