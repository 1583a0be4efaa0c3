package checker

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rsgen/rsgen/rs"
)

// Limits bound what the reader accepts from one document, so that huge or
// hostile input is read with bounded memory. Zero fields take the defaults
// of DefaultLimits.
type Limits struct {
	// MaxBytes is the largest document read; more is a limit-bytes error.
	MaxBytes int64
	// MaxDepth is the deepest element nesting read. ResourceSync documents
	// need 3 levels.
	MaxDepth int
	// MaxToken is the longest run of bytes without a '<', which bounds the
	// size of one text or tag token.
	MaxToken int
	// MaxEntries is the number of entries kept in Document.Entries; more
	// are counted but not kept.
	MaxEntries int
}

// DefaultLimits returns the limits the checker uses: the specification's
// 50 MB and 50,000 entries, 16 levels and 1 MiB tokens.
func DefaultLimits() Limits {
	return Limits{MaxBytes: rs.MaxBytes, MaxDepth: 16, MaxToken: 1 << 20, MaxEntries: rs.MaxEntries}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxToken <= 0 {
		l.MaxToken = d.MaxToken
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = d.MaxEntries
	}
	return l
}

var (
	errTooLarge  = errors.New("document too large")
	errTokenSize = errors.New("token too long")
)

// sourceError marks an error of the reader the document comes from, which
// the XML decoder passes on unchanged, so that it is not taken for bad
// XML.
type sourceError struct{ err error }

func (e *sourceError) Error() string { return e.err.Error() }
func (e *sourceError) Unwrap() error { return e.err }

// guard is the byte source of the decoder. It counts bytes and stops the
// decoder once the document or one token grows past its limits.
type guard struct {
	r        io.Reader
	n        int64
	run      int
	maxBytes int64
	maxToken int
}

func (g *guard) Read(p []byte) (int, error) {
	if g.n >= g.maxBytes {
		return 0, errTooLarge
	}
	if rest := g.maxBytes - g.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := g.r.Read(p)
	if err != nil && err != io.EOF {
		err = &sourceError{err}
	}
	g.n += int64(n)
	for _, b := range p[:n] {
		if b == '<' {
			g.run = 0
		} else if g.run++; g.run > g.maxToken {
			return n, errTokenSize
		}
	}
	return n, err
}

// frameKind is what an open element is to the reader.
type frameKind int

const (
	frameRoot frameKind = iota
	frameEntry
	frameValue // loc, lastmod, changefreq, priority
	frameRS    // rs:md, rs:ln
	frameSkip  // an element already reported, with its subtree
)

type frame struct {
	kind  frameKind
	name  string
	line  int
	stage int // in an entry: the last child's position in the sequence
	text  strings.Builder
}

// Positions of an entry's children in the schema's sequence.
const (
	stageNone = iota
	stageLoc
	stageLastmod
	stageChangefreq
	stagePriority
	stageRS
)

var valueStages = map[string]int{"loc": stageLoc, "lastmod": stageLastmod, "changefreq": stageChangefreq, "priority": stagePriority}

var mdAttrs = setOf("at", "capability", "change", "completed", "datetime", "encoding", "from", "hash", "length", "modified", "path", "type", "until")
var lnAttrs = setOf("encoding", "hash", "href", "length", "modified", "path", "pri", "rel", "type")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

const xsiNS = "http://www.w3.org/2001/XMLSchema-instance"

// reader turns a token stream into a Document and structural findings.
type reader struct {
	d        *xml.Decoder
	g        *guard
	lim      Limits
	doc      *Document
	rep      *reporter
	stack    []*frame
	entry    *Entry
	started  bool // a token has been read
	rootSeen bool
	declared bool // an XML declaration came first
	entries  bool // an entry has started
	encoding string
}

// readDocument reads and checks the structure of one document.
func readDocument(r io.Reader, url string, lim Limits, rep *reporter) *Document {
	lim = lim.withDefaults()
	g := &guard{r: r, maxBytes: lim.MaxBytes + 1, maxToken: lim.MaxToken}
	rd := &reader{g: g, lim: lim, doc: &Document{URL: url}, rep: rep}
	rd.d = xml.NewDecoder(g)
	rd.d.CharsetReader = rd.charset
	rd.run()
	return rd.doc
}

// charset accepts any declared encoding so that reading goes on: the bytes
// are read as UTF-8 and xml-encoding reports the declaration.
func (rd *reader) charset(label string, input io.Reader) (io.Reader, error) {
	rd.encoding = label
	return input, nil
}

func (rd *reader) run() {
	for {
		line, _ := rd.d.InputPos()
		tok, err := rd.d.Token()
		if err == io.EOF {
			rd.finish()
			return
		}
		if err != nil {
			rd.fail(line, err)
			return
		}
		if !rd.token(line, tok) {
			return
		}
	}
}

// fail reports the error that stopped reading.
func (rd *reader) fail(line int, err error) {
	rd.doc.Fatal = true
	var se *sourceError
	switch {
	case errors.As(err, &se):
		rd.doc.readErr = se.err
	case errors.Is(err, errTooLarge):
		rd.rep.add(0, "limit-bytes", "document is larger than %d bytes; reading stopped", rd.lim.MaxBytes)
	case errors.Is(err, errTokenSize):
		rd.rep.add(line, "xml-limit", "more than %d bytes without markup; reading stopped", rd.lim.MaxToken)
	default:
		var se *xml.SyntaxError
		if errors.As(err, &se) {
			line = se.Line
		}
		rd.rep.add(line, "xml-syntax", "%s", strings.TrimPrefix(err.Error(), "XML syntax error on line "+fmt.Sprint(line)+": "))
	}
}

// token handles one token; it returns false when reading must stop.
func (rd *reader) token(line int, tok xml.Token) bool {
	first := !rd.started
	rd.started = true
	switch t := tok.(type) {
	case xml.ProcInst:
		if t.Target == "xml" {
			return rd.declaration(line, first)
		}
	case xml.StartElement:
		if !rd.rootSeen && !rd.declared {
			rd.rep.add(line, "xml-declaration", "no XML declaration with encoding=\"UTF-8\"")
		}
		return rd.start(line, t)
	case xml.EndElement:
		rd.end(line)
	case xml.CharData:
		rd.chars(line, t)
	}
	return true
}

// declaration checks the XML declaration, which must come first.
func (rd *reader) declaration(line int, first bool) bool {
	if !first {
		rd.doc.Fatal = true
		rd.rep.add(line, "xml-syntax", "the XML declaration is allowed only at the very start")
		return false
	}
	rd.declared = true
	if enc := rd.encoding; enc != "" && !strings.EqualFold(enc, "utf-8") {
		rd.rep.add(line, "xml-encoding", "document is declared as %q; ResourceSync documents are UTF-8", enc)
	}
	return true
}

func (rd *reader) top() *frame {
	if len(rd.stack) == 0 {
		return nil
	}
	return rd.stack[len(rd.stack)-1]
}

func (rd *reader) push(k frameKind, name string, line int) {
	rd.stack = append(rd.stack, &frame{kind: k, name: name, line: line})
}

func (rd *reader) start(line int, t xml.StartElement) bool {
	if len(rd.stack) >= rd.lim.MaxDepth {
		rd.doc.Fatal = true
		rd.rep.add(line, "xml-limit", "elements nested deeper than %d levels; reading stopped", rd.lim.MaxDepth)
		return false
	}
	if dupAttr(t.Attr) {
		rd.doc.Fatal = true
		rd.rep.add(line, "xml-syntax", "element <%s> has an attribute twice", t.Name.Local)
		return false
	}
	parent := rd.top()
	if parent == nil {
		return rd.root(line, t)
	}
	switch parent.kind {
	case frameRoot:
		rd.rootChild(line, t)
	case frameEntry:
		rd.entryChild(line, parent, t)
	case frameValue, frameRS:
		rd.rep.add(line, "content-not-allowed", "element <%s> inside <%s>", t.Name.Local, parent.name)
		rd.push(frameSkip, t.Name.Local, line)
	default:
		rd.push(frameSkip, t.Name.Local, line)
	}
	return true
}

func dupAttr(attrs []xml.Attr) bool {
	for i := range attrs {
		for j := i + 1; j < len(attrs); j++ {
			if attrs[i].Name == attrs[j].Name {
				return true
			}
		}
	}
	return false
}

func (rd *reader) root(line int, t xml.StartElement) bool {
	if t.Name.Space != rs.SitemapNS || (t.Name.Local != "urlset" && t.Name.Local != "sitemapindex") {
		rd.doc.Fatal = true
		rd.rep.add(line, "root-element", "root element is %s; want urlset or sitemapindex in namespace %s", qname(t.Name), rs.SitemapNS)
		return false
	}
	rd.rootSeen = true
	rd.doc.Line = line
	rd.doc.Index = t.Name.Local == "sitemapindex"
	rd.sitemapAttrs(line, t)
	rd.push(frameRoot, t.Name.Local, line)
	return true
}

func (rd *reader) entryName() string {
	if rd.doc.Index {
		return "sitemap"
	}
	return "url"
}

func (rd *reader) rootChild(line int, t xml.StartElement) {
	n := t.Name
	switch {
	case n.Space == rs.SitemapNS && n.Local == rd.entryName():
		rd.startEntry(line, t)
		return
	case n.Space == rs.RSNS && (n.Local == "md" || n.Local == "ln"):
		if rd.entries {
			rd.rep.add(line, "element-order", "rs:%s after the first <%s>; root rs: elements come first", n.Local, rd.entryName())
		}
		if n.Local == "md" {
			md := rd.md(line, t)
			if rd.doc.MD != nil {
				rd.rep.add(line, "md-duplicate", "a second root rs:md (the first is on line %d)", rd.doc.MD.Line)
			} else {
				rd.doc.MD = md
			}
		} else {
			rd.doc.Links = append(rd.doc.Links, rd.ln(line, t))
		}
		rd.push(frameRS, "rs:"+n.Local, line)
		return
	}
	rd.unknown(line, t, rd.doc.rootName())
}

func (d *Document) rootName() string {
	if d.Index {
		return "sitemapindex"
	}
	return "urlset"
}

// unknown reports an element that has no place where it is.
func (rd *reader) unknown(line int, t xml.StartElement, parent string) {
	n := t.Name
	if (n.Local == "md" || n.Local == "ln") && n.Space != rs.RSNS {
		rd.rep.add(line, "rs-namespace", "element %s is in namespace %q; ResourceSync elements are in %s", qname(n), n.Space, rs.RSNS)
	} else {
		rd.rep.add(line, "element-unknown", "element %s is not allowed in <%s>", qname(n), parent)
	}
	rd.push(frameSkip, n.Local, line)
}

func qname(n xml.Name) string {
	if n.Space == "" {
		return "<" + n.Local + ">"
	}
	return "<" + n.Local + "> (" + n.Space + ")"
}

func (rd *reader) startEntry(line int, t xml.StartElement) {
	rd.entries = true
	rd.doc.EntryCount++
	if rd.doc.EntryCount == rs.MaxEntries+1 {
		rd.rep.add(line, "limit-entries", "more than %d entries in one document", rs.MaxEntries)
	}
	rd.sitemapAttrs(line, t)
	rd.entry = &Entry{Line: line}
	rd.push(frameEntry, t.Name.Local, line)
}

func (rd *reader) entryChild(line int, parent *frame, t xml.StartElement) {
	n := t.Name
	if n.Space == rs.RSNS && (n.Local == "md" || n.Local == "ln") {
		parent.stage = stageRS
		if n.Local == "md" {
			md := rd.md(line, t)
			if rd.entry.MD != nil {
				rd.rep.add(line, "md-repeated", "a second rs:md in one <%s> (the first is on line %d)", parent.name, rd.entry.MD.Line)
			} else {
				rd.entry.MD = md
			}
		} else {
			rd.entry.Links = append(rd.entry.Links, rd.ln(line, t))
		}
		rd.push(frameRS, "rs:"+n.Local, line)
		return
	}
	stage, ok := valueStages[n.Local]
	if n.Space != rs.SitemapNS || !ok || (rd.doc.Index && stage > stageLastmod) {
		rd.unknown(line, t, parent.name)
		return
	}
	if stage <= parent.stage {
		rd.rep.add(line, "element-order", "<%s> out of order; want loc, lastmod, changefreq, priority, then rs: elements, each once", n.Local)
		rd.push(frameSkip, n.Local, line)
		return
	}
	if stage != stageLoc && parent.stage == stageNone {
		rd.rep.add(line, "element-order", "<%s> before <loc>; <loc> comes first", n.Local)
	}
	parent.stage = stage
	rd.sitemapAttrs(line, t)
	rd.push(frameValue, n.Local, line)
}

// sitemapAttrs checks the attributes of a Sitemap element: the schema
// declares none, so only namespace declarations and xsi: attributes pass.
func (rd *reader) sitemapAttrs(line int, t xml.StartElement) {
	for _, a := range t.Attr {
		if isNSDecl(a.Name) || a.Name.Space == xsiNS {
			continue
		}
		rd.rep.add(line, "attr-unknown", "attribute %s is not allowed on <%s>", attrName(a.Name), t.Name.Local)
	}
}

func isNSDecl(n xml.Name) bool {
	return n.Space == "xmlns" || (n.Space == "" && n.Local == "xmlns")
}

func attrName(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

func (rd *reader) md(line int, t xml.StartElement) *MD {
	return &MD{Line: line, Attrs: rd.rsAttrs(line, t, mdAttrs)}
}

func (rd *reader) ln(line int, t xml.StartElement) Link {
	return Link{Line: line, Attrs: rd.rsAttrs(line, t, lnAttrs)}
}

// rsAttrs collects the unprefixed attributes of rs:md or rs:ln and reports
// unknown and prefixed ones. Attributes in other namespaces are allowed.
func (rd *reader) rsAttrs(line int, t xml.StartElement, known map[string]bool) map[string]string {
	attrs := make(map[string]string, len(t.Attr))
	for _, a := range t.Attr {
		switch {
		case isNSDecl(a.Name):
		case a.Name.Space == "":
			switch {
			case a.Name.Local == "path" && known["path"]:
				// xsd:string keeps its white space: a file name may
				// end in a space, and so does its path.
				attrs[a.Name.Local] = a.Value
			case known[a.Name.Local]:
				attrs[a.Name.Local] = strings.TrimSpace(a.Value)
			default:
				rd.rep.add(line, "attr-unknown", "attribute %s is not defined for rs:%s; extensions need a namespace of their own", a.Name.Local, t.Name.Local)
			}
		case a.Name.Space == rs.RSNS || a.Name.Space == "rs":
			rd.rep.add(line, "attr-prefixed", "attribute %s has a namespace prefix; write %s=", "rs:"+a.Name.Local, a.Name.Local)
		}
	}
	return attrs
}

func (rd *reader) chars(line int, c xml.CharData) {
	f := rd.top()
	if f == nil {
		return
	}
	switch f.kind {
	case frameValue:
		f.text.Write(c)
	case frameRS:
		rd.rep.add(line, "content-not-allowed", "%s must be empty, even of white space", f.name)
		f.kind = frameSkip
	case frameRoot, frameEntry:
		if strings.TrimSpace(string(c)) != "" {
			rd.rep.add(line, "content-not-allowed", "text inside <%s>", f.name)
		}
	}
}

func (rd *reader) end(line int) {
	f := rd.top()
	rd.stack = rd.stack[:len(rd.stack)-1]
	switch f.kind {
	case frameValue:
		rd.value(f)
	case frameEntry:
		rd.endEntry(f)
	}
}

func (rd *reader) value(f *frame) {
	v := strings.TrimSpace(f.text.String())
	switch f.name {
	case "loc":
		rd.entry.Loc, rd.entry.LocLine = v, f.line
	case "lastmod":
		rd.entry.Lastmod, rd.entry.LastmodLn = v, f.line
	case "changefreq":
		rd.entry.Changefreq = v
	case "priority":
		rd.entry.Priority = v
	}
}

func (rd *reader) endEntry(f *frame) {
	if rd.entry.Loc == "" {
		rd.rep.add(f.line, "loc-missing", "<%s> without a <loc>", f.name)
	}
	if len(rd.doc.Entries) < rd.lim.MaxEntries {
		rd.doc.Entries = append(rd.doc.Entries, *rd.entry)
	}
	rd.entry = nil
}

func (rd *reader) finish() {
	if !rd.rootSeen {
		rd.doc.Fatal = true
		rd.rep.add(0, "xml-syntax", "no root element")
	}
}
