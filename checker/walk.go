package checker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rsgen/rsgen/rs"
)

// walker follows the links of a Source from its Source Description down to
// every capability document, index part and package.
type walker struct {
	opts  Options
	start string // the URL the check started at, for findings about the whole check
	// source reads the URLs of the Source (those inside says belong to
	// it), remote the others (with FollowExternal), and resources the
	// resources under opts.ResourceBaseURL, when set (see places.go).
	source, resources Fetcher
	remote            *limiter
	inside            func(string) bool

	*tally
	seen     visited
	sets     []*resourceSet
	skipped  map[string]bool // hosts reported as external-skipped, guarded by tally's mu
	unzipped atomic.Int64    // bytes the packages read so far may decompress to
}

// newWalker returns a walker that reads the Source with what source
// returns for its HTTP fetcher, or with that fetcher when source is nil;
// inside tells the Source's URLs.
func newWalker(opts Options, start string, source func(remote Fetcher) Fetcher, inside func(string) bool) *walker {
	w := &walker{
		opts:    opts,
		start:   start,
		remote:  newLimiter(opts.remote(), opts),
		inside:  inside,
		seen:    visited{m: map[string]string{}},
		tally:   &tally{},
		skipped: map[string]bool{},
	}
	w.source = w.remote
	if source != nil {
		w.source = source(w.remote)
	}
	return w
}

// where is the place a link was found, for findings about its target.
type where struct {
	url, file string
	line      int
}

func at(d *Document, line int) where { return where{url: d.URL, file: d.File, line: line} }

// fetcherFor returns how to read the document at u, or nil when u is
// outside the Source and may not be followed.
func (w *walker) fetcherFor(u string) Fetcher {
	switch {
	case w.inside(u):
		return w.source
	case w.opts.FollowExternal:
		return w.remote
	}
	return nil
}

// resourceFetcher returns how to read the resource at u: from where the
// resources are when u is under the resource base URL, else as a
// document; nil when it may not be read.
func (w *walker) resourceFetcher(u string) Fetcher {
	if w.resources != nil && strings.HasPrefix(u, w.opts.ResourceBaseURL) {
		return w.resources
	}
	return w.fetcherFor(u)
}

// get fetches u, a link found at from. It returns nil, after reporting why,
// when u is skipped, missing or unreadable; the caller closes the body.
func (w *walker) get(ctx context.Context, u string, from where) *Resource {
	f := w.fetcherFor(u)
	if f == nil {
		w.skip(u, from)
		return nil
	}
	res, err := f.Fetch(ctx, u)
	if err != nil {
		w.documentFailed(u, from, err)
		return nil
	}
	if res.Status != http.StatusOK {
		res.Body.Close()
		if res.Status == http.StatusNotFound || res.Status == http.StatusGone {
			w.report(from, "document-missing", "%s does not exist (HTTP %d)", u, res.Status)
		} else {
			w.report(from, "http-status", "%s answered HTTP %d; want 200", u, res.Status)
		}
		return nil
	}
	return res
}

func (w *walker) skip(u string, from where) {
	host := u
	if i := strings.Index(u, "://"); i >= 0 {
		host, _, _ = strings.Cut(u[i+3:], "/")
	}
	w.mu.Lock()
	first := !w.skipped[host]
	w.skipped[host] = true
	w.mu.Unlock()
	if first {
		w.report(from, "external-skipped", "%s is outside the Source; not checked (use --follow-external)", u)
	}
}

// stopped reports whether err is the check being stopped, by an interrupt
// or by --max-time, rather than a fault of what was read.
func stopped(err error) bool {
	var tl *timeLimitError
	return errors.Is(err, context.Canceled) || errors.As(err, &tl)
}

// visit reads the document at u, reached from `from` as a document of
// capability want ("" when unknown), and applies the per-document rules. It
// returns nil when the document was already visited, could not be read, or
// is not what its parent says it is.
func (w *walker) visit(ctx context.Context, u, want string, from where) *Document {
	if ctx.Err() != nil {
		return nil
	}
	if got, ok := w.seen.mark(u, want); ok {
		if want != "" && got != "" && got != want {
			w.report(from, "capability-conflict", "%s is reached both as %s and as %s", u, got, want)
		}
		return nil
	}
	res := w.get(ctx, u, from)
	if res == nil {
		return nil
	}
	defer res.Body.Close()
	return w.read(res, u, want, false)
}

// read reads a fetched document and checks it; inPackage says it is the
// manifest inside a dump package.
func (w *walker) read(res *Resource, u, want string, inPackage bool) *Document {
	rep := &reporter{url: u, file: res.File}
	if res.File == "" && res.Status != 0 {
		w.served(rep, res, u)
	}
	doc := readDocument(res.Body, u, w.opts.Limits, rep)
	doc.File = res.File
	if doc.readErr != nil {
		w.fetchFailed(u, where{url: u, file: res.File}, doc.readErr)
		return nil
	}
	if inPackage {
		w.count(&w.packages, strings.TrimSuffix(u, "!/"+manifestName))
	} else {
		w.count(&w.docs, u)
	}
	if !doc.Fatal {
		checkDocument(doc, rep, false)
	}
	w.add(rep.findings...)
	got := doc.Capability()
	if doc.Fatal || got == "" {
		return nil
	}
	w.seen.set(u, got)
	if want != "" && got != want {
		w.report(at(doc, doc.MD.Line), "capability-mismatch", "document has capability %q; its parent lists it as %q", got, want)
		return nil
	}
	return doc
}

// served checks how a document was served over HTTP.
func (w *walker) served(rep *reporter, res *Resource, u string) {
	if !isXMLType(res.ContentType) {
		rep.add(0, "http-content-type", "served as %q; want application/xml", res.ContentType)
	}
	if res.URL != u && !strings.HasSuffix(u, "/"+wellKnown) {
		rep.add(0, "http-redirect", "redirected to %s", res.URL)
	}
}

// walkSite walks the Source from the Source Description at u. It returns
// false when there is no document at u.
func (w *walker) walkSite(ctx context.Context, u string) bool {
	if w.seen.reached(u) {
		return true
	}
	f := w.fetcherFor(u)
	if f == nil {
		return false
	}
	res, err := f.Fetch(ctx, u)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return false
		}
		// Something is there, or may be: a limit, a timeout or a
		// refusal is reported, not taken for a missing document.
		w.documentFailed(u, where{url: u}, err)
		return true
	}
	if res.Status != http.StatusOK {
		res.Body.Close()
		if res.Status != http.StatusNotFound && res.Status != http.StatusGone {
			w.rootReport("http-status", u, "answered HTTP %d; want 200", res.Status)
			return true
		}
		return false
	}
	w.seen.set(u, rs.CapDescription)
	doc := w.read(res, u, rs.CapDescription, false)
	res.Body.Close()
	if doc != nil {
		w.walkDescription(ctx, doc)
	}
	return true
}

func (w *walker) walkDescription(ctx context.Context, d *Document) {
	if d.Index {
		w.walkParts(ctx, d, "", func(p *Document) { w.walkDescription(ctx, p) })
		return
	}
	for _, e := range d.Entries {
		cl := w.visit(ctx, e.Loc, rs.CapCapabilityList, at(d, e.LocLine))
		if cl == nil {
			continue
		}
		w.checkUp(cl, d.URL)
		w.walkCapabilityList(ctx, cl)
	}
}

func (w *walker) walkCapabilityList(ctx context.Context, cl *Document) {
	set := newResourceSet(cl.URL, w.opts.VerifyContent)
	w.sets = append(w.sets, set)
	for _, e := range cl.Entries {
		capability, _ := e.MD.Attr("capability")
		k, ok := kindOf(capability)
		switch {
		case !ok || k.family == familyNone || k.manifest:
			continue
		case k.notification:
			w.walkChannel(ctx, cl, &e, capability)
			continue
		}
		d := w.visit(ctx, e.Loc, capability, at(cl, e.LocLine))
		if d == nil {
			continue
		}
		w.checkUp(d, cl.URL)
		w.walkCapability(ctx, d, cl.URL, set)
		w.followArchives(ctx, d, cl.URL, set)
	}
}

// walkCapability hands a capability document, or each part when it is an
// index, to leaf.
func (w *walker) walkCapability(ctx context.Context, d *Document, capList string, set *resourceSet) {
	leaf := func(p *Document) { w.leaf(ctx, p, capList, set) }
	if d.Index {
		w.walkParts(ctx, d, capList, leaf)
	} else {
		leaf(d)
	}
}

// followArchives follows the rel="archives" link of a capability
// document: it must lead to the archive of the document's capability
// under the same Capability List.
func (w *walker) followArchives(ctx context.Context, d *Document, capList string, set *resourceSet) {
	l := d.link(rs.RelArchives)
	if l == nil || l.Href() == "" {
		return
	}
	a := w.visit(ctx, resolve(d.URL, l.Href()), d.Capability()+"-archive", at(d, l.Line))
	if a == nil {
		return
	}
	w.checkUp(a, capList)
	w.walkCapability(ctx, a, capList, set)
}

// walkParts visits the documents an index lists and hands each to leaf,
// in the order listed. It reads partsAtOnce of them at once (the limiter
// bounds the requests to each host): 40 parts that each take 5 s to
// arrive took 3 minutes one at a time.
func (w *walker) walkParts(ctx context.Context, idx *Document, up string, leaf func(*Document)) {
	for start := 0; start < len(idx.Entries); start += partsAtOnce {
		batch := idx.Entries[start:min(start+partsAtOnce, len(idx.Entries))]
		parts := make([]*Document, len(batch))
		var wg sync.WaitGroup
		for i, e := range batch {
			wg.Go(func() { parts[i] = w.visit(ctx, e.Loc, idx.Capability(), at(idx, e.LocLine)) })
		}
		wg.Wait()
		for i, p := range parts {
			w.walkPart(idx, batch[i], p, up, leaf)
		}
	}
}

// partsAtOnce is the number of parts of an index walkParts reads at once,
// and so the most it holds in memory (up to 50 MB each).
const partsAtOnce = 4

// walkPart checks the part p (nil when it could not be read) of an index,
// listed by entry e, and hands it to leaf.
func (w *walker) walkPart(idx *Document, e Entry, p *Document, up string, leaf func(*Document)) {
	switch {
	case p == nil:
		return
	case p.Index:
		w.report(at(idx, e.LocLine), "index-nested", "%s is itself an index; an index lists <urlset> documents", e.Loc)
		return
	case up != "":
		w.checkUp(p, up)
	}
	w.checkIndexLink(p, idx.URL)
	w.checkChildTimes(idx, e, p)
	w.checkPartTime(idx, p)
	leaf(p)
}

// visited is the documents a walk reached, each with the capability it
// was reached as ("" when unknown), safe for the parts read at once.
type visited struct {
	mu sync.Mutex
	m  map[string]string
}

// mark records u as reached as want, unless it was reached before: then
// it returns the capability it was reached as, and true.
func (v *visited) mark(u, want string) (string, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if got, ok := v.m[u]; ok {
		return got, true
	}
	v.m[u] = want
	return "", false
}

// set records the capability u turned out to have.
func (v *visited) set(u, capability string) {
	v.mu.Lock()
	v.m[u] = capability
	v.mu.Unlock()
}

// reached reports whether u was reached.
func (v *visited) reached(u string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	_, ok := v.m[u]
	return ok
}

// checkUp checks that d's up link leads to parent.
func (w *walker) checkUp(d *Document, parent string) {
	up := d.link(rs.RelUp)
	if up == nil || up.Href() == "" {
		return // up-missing is reported by the document rules
	}
	if target := resolve(d.URL, up.Href()); target != parent {
		w.report(at(d, up.Line), "up-mismatch", "up leads to %s; the document is listed by %s", target, parent)
	}
}

// checkIndexLink checks the index link of a document listed by index.
func (w *walker) checkIndexLink(d *Document, index string) {
	l := d.link(rs.RelIndex)
	switch {
	case l == nil:
		w.report(at(d, d.MD.Line), "index-link-missing", "the document is listed by the index %s but has no rs:ln rel=\"index\"", index)
	case resolve(d.URL, l.Href()) != index:
		w.report(at(d, l.Line), "index-link-mismatch", "index leads to %s; the document is listed by %s", resolve(d.URL, l.Href()), index)
	}
}

// checkChildTimes compares an index entry's times with the listed document.
func (w *walker) checkChildTimes(idx *Document, e Entry, p *Document) {
	if e.MD == nil {
		return
	}
	for _, name := range []string{"at", "completed", "from", "until"} {
		iv, iok := e.MD.Attr(name)
		pv, pok := p.MD.Attr(name)
		switch {
		case iok && pok && !sameTime(iv, pv):
			w.report(at(idx, e.MD.Line), "index-child-time", "%s=%s but %s has %s=%s", name, iv, e.Loc, name, pv)
		case name == "until" && idx.Capability() != "" && kinds[idx.Capability()].family.usesFrom() && iok != pok:
			w.report(at(idx, e.MD.Line), "index-child-time", "until is given %s here and %s in %s; it marks a closed document in both or neither", presence(iok), presence(pok), e.Loc)
		}
	}
}

// checkPartTime checks that a part was made within its index's snapshot
// or period. An index's at is when the snapshot of all its parts began
// (§10.2), so no part's at is before it; an index's from and until bound
// the changes of all its parts (§12.2).
func (w *walker) checkPartTime(idx, p *Document) {
	k, ok := kindOf(idx.Capability())
	if !ok || idx.MD == nil || p.MD == nil {
		return
	}
	switch {
	case k.family.usesAt():
		ia, pa := mdTime(idx.MD, "at"), mdTime(p.MD, "at")
		if ia != nil && pa != nil && pa.t.Before(ia.t) {
			w.report(at(p, p.MD.Line), "index-part-time", "at %s is before the at %s of the index %s; a part is taken during its index's snapshot", formatTime(pa), formatTime(ia), idx.URL)
		}
	case k.family.usesFrom():
		index := period{from: mdTime(idx.MD, "from"), until: mdTime(idx.MD, "until")}
		part := period{from: mdTime(p.MD, "from"), until: mdTime(p.MD, "until")}
		if msg := index.excess(part, "index"); msg != "" {
			w.reportSection(at(p, p.MD.Line), "§12.2", "index-part-time", "%s (%s)", msg, idx.URL)
		}
	}
}

func presence(ok bool) string {
	if ok {
		return "present"
	}
	return "absent"
}

func sameTime(a, b string) bool {
	ta, errA := parseDateTime(a, false)
	tb, errB := parseDateTime(b, false)
	if errA != nil || errB != nil {
		return a == b
	}
	return ta.t.Equal(tb.t)
}

// leaf handles a capability document of set that is not an index.
func (w *walker) leaf(ctx context.Context, d *Document, capList string, set *resourceSet) {
	switch d.Capability() {
	case rs.CapResourceList:
		set.noteList(d)
		w.addSnapshot(&set.listed, "Resource List", d, set.fixityOf)
	case rs.CapChangeList:
		set.addChangeList(d)
	case rs.CapResourceDump:
		set.hasDump = true
		if !w.walkPackages(ctx, d, capList, &set.dumped) {
			set.dumpBroken = true
		}
	case rs.CapChangeDump:
		w.walkPackages(ctx, d, capList, nil)
	case rs.CapResourceListArchive, rs.CapResourceDumpArchive, rs.CapChangeListArchive, rs.CapChangeDumpArchive:
		w.walkArchived(ctx, d, capList)
	}
}

// walkPackages checks the packages of the dump d, and adds the entries of
// the manifests to dumped unless it is nil (a Change Dump's). It reports
// whether every package could be read.
func (w *walker) walkPackages(ctx context.Context, d *Document, capList string, dumped *locTable) bool {
	whole := true
	for i := range d.Entries {
		m := (&packageChecker{w}).checkPackage(ctx, d, &d.Entries[i], capList)
		switch {
		case m == nil:
			whole = false
		case dumped != nil:
			w.addSnapshot(dumped, "Resource Dump", m, noFixity)
		}
	}
	return whole
}

// walkArchived visits the documents an archive lists. Archived documents
// describe the past: they are checked on their own, against the archive's
// entry and for resources listed twice, but not compared with the set's
// current resources. The packages of archived dumps are read with
// --verify-content, which reads everything the Source holds.
func (w *walker) walkArchived(ctx context.Context, arch *Document, capList string) {
	archived := strings.TrimSuffix(arch.Capability(), "-archive")
	for _, e := range arch.Entries {
		a := w.visit(ctx, e.Loc, archived, at(arch, e.LocLine))
		if a == nil {
			continue
		}
		if capList != "" {
			w.checkUp(a, capList)
		}
		w.checkChildTimes(arch, e, a)
		var snapshot *locTable // a's resources, to find one listed twice
		if archived == rs.CapResourceList || archived == rs.CapResourceDump {
			snapshot = &locTable{}
		}
		leaf := func(p *Document) {
			switch {
			case archived == rs.CapResourceList:
				w.addSnapshot(snapshot, "Resource List", p, noFixity)
			case kinds[archived].dump && w.opts.VerifyContent:
				w.walkPackages(ctx, p, capList, snapshot)
			}
		}
		if a.Index {
			w.walkParts(ctx, a, capList, leaf)
		} else {
			leaf(a)
		}
	}
}

// discover finds the Source Description of a site: at the well-known URI,
// else through the Sitemaps robots.txt lists.
func (w *walker) discover(ctx context.Context, origin string) {
	desc := origin + "/" + wellKnown
	if w.walkSite(ctx, desc) {
		return
	}
	w.rootReport("well-known-missing", desc, "no Source Description at /%s", wellKnown)
	sitemaps := w.robots(ctx, origin)
	for _, s := range sitemaps {
		w.climb(ctx, s)
	}
	if len(sitemaps) == 0 {
		w.rootReport("description-missing", origin+"/", "no Source Description at /%s and no Sitemap in robots.txt", wellKnown)
	}
}

// robots returns the Sitemap URLs of origin/robots.txt.
func (w *walker) robots(ctx context.Context, origin string) []string {
	res, _ := w.lookup(ctx, origin+"/robots.txt")
	if res == nil {
		return nil
	}
	defer res.Body.Close()
	var out []string
	sc := bufio.NewScanner(io.LimitReader(res.Body, 1<<20))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), "sitemap") {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return out
}

// climb follows up links from the document at start to the Source
// Description and walks the Source from there. When no Source Description
// is found, it walks from start itself.
func (w *walker) climb(ctx context.Context, start string) {
	var chain []upStep
	u := start
	for hops := 0; hops < 4 && u != ""; hops++ {
		d, failed := w.peek(ctx, u)
		if failed && u == start {
			return // reported; fetching it again to walk from it fails again, after as long
		}
		if d == nil {
			break
		}
		if d.Capability() == rs.CapDescription {
			w.walkSite(ctx, u)
			w.reachChain(ctx, chain)
			return
		}
		step := upStep{url: u}
		if up := d.link(rs.RelUp); up != nil && up.Href() != "" {
			step.up, step.line = resolve(u, up.Href()), up.Line
		}
		chain = append(chain, step)
		u = step.up
	}
	w.rootReport("description-missing", start, "following up links from %s does not lead to a Source Description", start)
	w.walkFrom(ctx, start)
}

// upStep is a document of an up chain and where its up link leads.
type upStep struct {
	url, up string
	line    int // of the up link
}

// reachChain checks the documents of an up chain, given from the start
// up, that the walk from the Source Description did not reach: the
// document they lead up to does not list them, so a Destination never
// finds them. Each break is reported, and the documents are walked from
// the highest one not reached, so that each is still checked.
func (w *walker) reachChain(ctx context.Context, chain []upStep) {
	for i := len(chain) - 1; i >= 0; i-- {
		s := chain[i]
		if w.seen.reached(s.url) || ctx.Err() != nil {
			continue
		}
		w.report(where{url: s.url, line: s.line}, "up-unlisted", "up leads to %s, which does not list this document; a walk from the Source Description does not reach it", s.up)
		w.walkFrom(ctx, s.url)
	}
}

// peek reads a document without checking it, to find its way up; failed
// says that fetching it failed, which was reported.
func (w *walker) peek(ctx context.Context, u string) (doc *Document, failed bool) {
	res, failed := w.lookup(ctx, u)
	if res == nil {
		return nil, failed
	}
	defer res.Body.Close()
	return readDocument(res.Body, u, w.opts.Limits, &reporter{}), false
}

// lookup fetches u during discovery, where a missing or refused resource
// is an answer rather than a finding: it returns nil for anything but 200
// OK, and reports only fetches that failed, which failed says. The caller
// closes the body.
func (w *walker) lookup(ctx context.Context, u string) (res *Resource, failed bool) {
	f := w.fetcherFor(u)
	if f == nil {
		return nil, false
	}
	res, err := f.Fetch(ctx, u)
	if err != nil {
		w.documentFailed(u, where{url: u}, err)
		return nil, true
	}
	if res.Status != http.StatusOK {
		res.Body.Close()
		return nil, false
	}
	return res, false
}

// walkFrom walks downwards from a document that is not under a Source
// Description.
func (w *walker) walkFrom(ctx context.Context, u string) {
	d := w.visit(ctx, u, "", where{url: u})
	if d == nil {
		return
	}
	switch d.Capability() {
	case rs.CapDescription:
		w.walkDescription(ctx, d)
	case rs.CapCapabilityList:
		w.walkCapabilityList(ctx, d)
	default:
		set := newResourceSet(u, w.opts.VerifyContent)
		w.sets = append(w.sets, set)
		w.walkCapability(ctx, d, "", set)
	}
}

// finish runs the checks that need the whole walk and builds the report.
// A check stopped by --max-time reports so and returns what it found; an
// interrupted one returns the context's error.
func (w *walker) finish(ctx context.Context) (Report, error) {
	if ctx.Err() == nil {
		for _, s := range w.sets {
			w.add(s.compare()...)
		}
		if w.opts.VerifyContent {
			w.verifyContent(ctx)
		}
	}
	if err := ctx.Err(); err != nil {
		var tl *timeLimitError
		if !errors.As(context.Cause(ctx), &tl) {
			return Report{}, err
		}
		w.rootReport("max-time", w.start, "stopped after %s (--max-time); the check is incomplete", tl.after)
	} else if w.docs == 0 && w.firstErr != nil {
		return Report{}, fmt.Errorf("nothing could be read: %w", w.firstErr)
	}
	sortFindings(w.findings)
	return Report{Documents: w.docs, Packages: w.packages, Findings: w.findings}, nil
}
