package rs

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// ErrTooLarge is returned by a Reader whose document holds more bytes or
// entries than its limits allow (MaxBytes plus ReadSlack, and MaxEntries).
var ErrTooLarge = errors.New("document too large")

// ReadSlack is what a Reader accepts beyond MaxBytes by default: rsgen
// writes no document larger than MaxBytes, and the slack keeps a document
// that another tool reformatted (more indentation, say) readable.
const ReadSlack = 1 << 20

// maxReadDepth bounds the nesting of elements a Reader follows, extension
// elements it skips included: rsgen's documents nest three deep.
const maxReadDepth = 32

// Head is what a document says of itself before its entries: its root
// element and the root's <rs:md> and <rs:ln> elements.
type Head struct {
	Root  Root
	MD    MD
	Links []Link
}

// Reader streams one ResourceSync document in the canonical form Writer
// produces, and any equivalent one (other prefixes, attribute orders and
// whitespace; unknown attributes and extension elements are skipped). Call
// Head, then Entries, which calls back once per entry: a Reader never holds
// more than one entry in memory, and a caller that wants only the head
// reads no further than the first entry.
//
// Times are read as RFC 3339 (rsgen writes TimeLayout), in UTC. What rsgen never
// writes is an error naming the line: a <url> in a <sitemapindex>, an
// entry without a <loc>, a repeated element, an attribute that does not
// parse, a root <rs:md> after the entries, more than one root, a document
// past the limits.
type Reader struct {
	dec        *xml.Decoder
	in         *limitedReader
	maxEntries int

	root    Root // of the document, once Head has read it
	head    *Head
	first   *xml.StartElement // the first entry, read by Head
	entries int
	err     error // sticky: a Reader that failed stays failed
}

// NewReader returns a Reader of the document r holds, limited to
// MaxBytes+ReadSlack bytes and MaxEntries entries.
func NewReader(r io.Reader) *Reader {
	in := &limitedReader{r: r, limit: MaxBytes + ReadSlack}
	return &Reader{dec: xml.NewDecoder(in), in: in, maxEntries: MaxEntries}
}

// Head reads the document up to its first entry and returns its root,
// <rs:md> and <rs:ln>. It may be called again; it reads only once.
func (r *Reader) Head() (*Head, error) {
	if r.head != nil || r.err != nil {
		return r.head, r.err
	}
	h, err := r.readHead()
	if err != nil {
		r.err = r.fail(err)
		return nil, r.err
	}
	r.head = h
	return h, nil
}

// Entries calls fn with each entry of the document, in document order,
// then reads to the end of the document. An error of fn stops the reading
// and is returned as it is. Each call gets an Entry of its own.
func (r *Reader) Entries(fn func(*Entry) error) error {
	if _, err := r.Head(); err != nil {
		return err
	}
	for start := r.first; start != nil; {
		e, err := r.readEntry(start)
		if err == nil {
			err = r.countEntry()
		}
		if err != nil {
			r.err = r.fail(err)
			return r.err
		}
		if err := fn(e); err != nil {
			r.err = err
			return err
		}
		if start, err = r.nextEntry(); err != nil {
			r.err = r.fail(err)
			return r.err
		}
	}
	r.first = nil
	if err := r.readEnd(); err != nil {
		r.err = r.fail(err)
		return r.err
	}
	return nil
}

// fail locates err in the document, unless encoding/xml did already.
func (r *Reader) fail(err error) error {
	var syn *xml.SyntaxError
	if errors.As(err, &syn) {
		return err
	}
	line, _ := r.dec.InputPos()
	return fmt.Errorf("line %d: %w", line, err)
}

// readHead reads the root element and its children up to the first entry
// (r.first) or the end of the root.
func (r *Reader) readHead() (*Head, error) {
	root, err := r.nextStart()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("no root element")
		}
		return nil, err
	}
	h := &Head{}
	switch root.Name {
	case xml.Name{Space: SitemapNS, Local: "urlset"}:
		h.Root = URLSet
	case xml.Name{Space: SitemapNS, Local: "sitemapindex"}:
		h.Root = SitemapIndex
	default:
		return nil, fmt.Errorf("root element %s is not a ResourceSync <urlset> or <sitemapindex>", nameOf(root.Name))
	}
	r.root = h.Root
	seenMD := false
	for {
		tok, err := r.token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return h, nil // no entries
		case xml.StartElement:
			switch {
			case r.isEntry(t.Name):
				r.first = &t
				return h, nil
			case t.Name == xml.Name{Space: RSNS, Local: "md"}:
				if seenMD {
					return nil, errors.New("the root has more than one <rs:md>")
				}
				seenMD = true
				if h.MD, err = readMD(t.Attr); err != nil {
					return nil, fmt.Errorf("root <rs:md>: %w", err)
				}
				err = r.skip(2)
			case t.Name == xml.Name{Space: RSNS, Local: "ln"}:
				var ln Link
				if ln, err = readLink(t.Attr); err != nil {
					return nil, fmt.Errorf("root <rs:ln>: %w", err)
				}
				h.Links = append(h.Links, ln)
				err = r.skip(2)
			case t.Name.Space == SitemapNS:
				return nil, fmt.Errorf("%s in a <%s>", nameOf(t.Name), rootName(h.Root))
			default:
				err = r.skip(2) // an extension element
			}
			if err != nil {
				return nil, err
			}
		}
	}
}

// nextEntry returns the start of the next entry, or nil at the end of the
// root. Root <rs:md> and <rs:ln> belong before the entries.
func (r *Reader) nextEntry() (*xml.StartElement, error) {
	for {
		tok, err := r.token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return nil, nil
		case xml.StartElement:
			switch {
			case r.isEntry(t.Name):
				return &t, nil
			case t.Name.Space == RSNS || t.Name.Space == SitemapNS:
				return nil, fmt.Errorf("%s after the entries", nameOf(t.Name))
			}
			if err := r.skip(2); err != nil {
				return nil, err
			}
		}
	}
}

// readEnd reads what follows the root: nothing but comments, processing
// instructions and white space.
func (r *Reader) readEnd() error {
	for {
		tok, err := r.dec.Token()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return fmt.Errorf("%s after the root element", nameOf(t.Name))
		case xml.CharData:
			if len(strings.TrimSpace(string(t))) > 0 {
				return errors.New("text after the root element")
			}
		}
	}
}

func (r *Reader) countEntry() error {
	if r.entries++; r.entries > r.maxEntries {
		return fmt.Errorf("%w: more than %d entries", ErrTooLarge, r.maxEntries)
	}
	return nil
}

// isEntry reports whether name is the entry element of the document's root.
func (r *Reader) isEntry(name xml.Name) bool {
	return name.Space == SitemapNS && name.Local == entryName(r.root)
}

// readEntry reads the entry that start opens, up to its end.
func (r *Reader) readEntry(start *xml.StartElement) (*Entry, error) {
	e := &Entry{}
	var seenLoc, seenLastmod, seenMD bool
	for {
		tok, err := r.token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			if e.Loc == "" {
				return nil, fmt.Errorf("<%s> without <loc>", start.Name.Local)
			}
			return e, nil
		case xml.StartElement:
			switch t.Name {
			case xml.Name{Space: SitemapNS, Local: "loc"}:
				if seenLoc {
					return nil, errors.New("more than one <loc>")
				}
				seenLoc = true
				e.Loc, err = r.text()
			case xml.Name{Space: SitemapNS, Local: "lastmod"}:
				if seenLastmod {
					return nil, fmt.Errorf("%s: more than one <lastmod>", e.Loc)
				}
				seenLastmod = true
				var s string
				if s, err = r.text(); err == nil {
					e.Lastmod, err = parseTime("lastmod", s)
				}
			case xml.Name{Space: RSNS, Local: "md"}:
				if seenMD {
					return nil, fmt.Errorf("%s: more than one <rs:md>", e.Loc)
				}
				seenMD = true
				if e.MD, err = readMD(t.Attr); err == nil {
					err = r.skip(3)
				}
			case xml.Name{Space: RSNS, Local: "ln"}:
				var ln Link
				if ln, err = readLink(t.Attr); err == nil {
					e.Links = append(e.Links, ln)
					err = r.skip(3)
				}
			default:
				err = r.skip(3) // changefreq, priority, extensions
			}
			if err != nil {
				if e.Loc != "" {
					return nil, fmt.Errorf("entry %s: %w", e.Loc, err)
				}
				return nil, err
			}
		}
	}
}

// text returns the text of the element just opened, up to its end, with
// surrounding white space removed. Child elements are an error.
func (r *Reader) text() (string, error) {
	var sb strings.Builder
	for {
		tok, err := r.token()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.CharData:
			sb.Write(t)
		case xml.StartElement:
			return "", fmt.Errorf("%s inside a text element", nameOf(t.Name))
		case xml.EndElement:
			return strings.TrimSpace(sb.String()), nil
		}
	}
}

// skip reads up to the end of the element just opened at depth, following
// at most maxReadDepth levels.
func (r *Reader) skip(depth int) error {
	for open := 1; open > 0; {
		tok, err := r.token()
		if err != nil {
			return err
		}
		switch tok.(type) {
		case xml.StartElement:
			if open++; depth+open-1 > maxReadDepth {
				return fmt.Errorf("elements nested deeper than %d", maxReadDepth)
			}
		case xml.EndElement:
			open--
		}
	}
	return nil
}

// nextStart returns the next start element, skipping the prolog.
func (r *Reader) nextStart() (xml.StartElement, error) {
	for {
		tok, err := r.dec.Token()
		if err != nil {
			return xml.StartElement{}, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return t, nil
		case xml.CharData:
			if len(strings.TrimSpace(string(t))) > 0 {
				return xml.StartElement{}, errors.New("text before the root element")
			}
		}
	}
}

// token returns the next token inside the root; the end of the input
// there is an error.
func (r *Reader) token() (xml.Token, error) {
	tok, err := r.dec.Token()
	if errors.Is(err, io.EOF) {
		return nil, io.ErrUnexpectedEOF
	}
	return tok, err
}

// readMD reads the attributes of an <rs:md>.
func readMD(attrs []xml.Attr) (MD, error) {
	var md MD
	var err error
	for _, a := range attrs {
		if a.Name.Space != "" {
			continue // xmlns and foreign attributes
		}
		switch a.Name.Local {
		case "capability":
			md.Capability = a.Value
		case "change":
			md.Change = a.Value
		case "hash":
			md.Hash = a.Value
		case "type":
			md.Type = a.Value
		case "path":
			md.Path = a.Value
		case "length":
			md.Length, err = parseLength(a.Value)
			md.HasLength = true
		case "datetime":
			md.Datetime, err = parseTime(a.Name.Local, a.Value)
		case "at":
			md.At, err = parseTime(a.Name.Local, a.Value)
		case "completed":
			md.Completed, err = parseTime(a.Name.Local, a.Value)
		case "from":
			md.From, err = parseTime(a.Name.Local, a.Value)
		case "until":
			md.Until, err = parseTime(a.Name.Local, a.Value)
		}
		if err != nil {
			return md, err
		}
	}
	return md, nil
}

// readLink reads the attributes of an <rs:ln>; rel and href are required.
func readLink(attrs []xml.Attr) (Link, error) {
	var ln Link
	var err error
	for _, a := range attrs {
		if a.Name.Space != "" {
			continue
		}
		switch a.Name.Local {
		case "rel":
			ln.Rel = a.Value
		case "href":
			ln.Href = a.Value
		case "type":
			ln.Type = a.Value
		case "hash":
			ln.Hash = a.Value
		case "length":
			ln.Length, err = parseLength(a.Value)
			ln.HasLength = true
		case "modified":
			ln.Modified, err = parseTime(a.Name.Local, a.Value)
		case "pri":
			if ln.Pri, err = strconv.Atoi(a.Value); err != nil || ln.Pri < 1 {
				err = fmt.Errorf("pri %q is not a positive integer", a.Value)
			}
		}
		if err != nil {
			return ln, err
		}
	}
	if ln.Rel == "" || ln.Href == "" {
		return ln, errors.New("rel and href are required")
	}
	return ln, nil
}

// parseTime parses an RFC 3339 time into UTC. A time whose UTC year has
// not four digits is refused: TimeLayout could not write it back.
func parseTime(name, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q is not an RFC 3339 time", name, s)
	}
	if t = t.UTC(); t.Year() < 0 || t.Year() > 9999 {
		return time.Time{}, fmt.Errorf("%s %q is outside the years 0000 to 9999 in UTC", name, s)
	}
	return t, nil
}

func parseLength(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("length %q is not a number of bytes", s)
	}
	return n, nil
}

func rootName(r Root) string  { root, _ := r.names(); return root }
func entryName(r Root) string { _, entry := r.names(); return entry }

// nameOf names an element for an error message.
func nameOf(n xml.Name) string {
	switch n.Space {
	case SitemapNS:
		return "<" + n.Local + ">"
	case RSNS:
		return "<rs:" + n.Local + ">"
	}
	return "<" + n.Local + "> (namespace " + strconv.Quote(n.Space) + ")"
}

// limitedReader reads at most limit bytes of r; past them, it fails with
// ErrTooLarge rather than ending the input, which the XML decoder would
// report as a truncated document.
type limitedReader struct {
	r           io.Reader
	read, limit int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.read >= l.limit {
		// One byte more tells a document of exactly limit bytes from a
		// larger one.
		var one [1]byte
		k, err := l.r.Read(one[:])
		if k > 0 {
			return 0, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, l.limit)
		}
		return 0, err
	}
	if int64(len(p)) > l.limit-l.read {
		p = p[:l.limit-l.read]
	}
	k, err := l.r.Read(p)
	l.read += int64(k)
	return k, err
}
