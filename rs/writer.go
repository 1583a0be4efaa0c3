package rs

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"
)

// ErrInvalidXMLChar is returned when a value holds a character that XML 1.0
// cannot carry.
var ErrInvalidXMLChar = errors.New("character not allowed in XML")

// ErrDocumentFull is returned by Writer.Entry when the entry would take the
// document past MaxEntries or the writer's byte limit. Nothing is written;
// the caller closes the document and starts another.
var ErrDocumentFull = errors.New("document is full")

// Root selects the root element of a document.
type Root int

// The two roots of ResourceSync documents.
const (
	URLSet       Root = iota // <urlset> with <url> entries
	SitemapIndex             // <sitemapindex> with <sitemap> entries
)

func (r Root) names() (root, entry string) {
	if r == SitemapIndex {
		return "sitemapindex", "sitemap"
	}
	return "urlset", "url"
}

// MD is an <rs:md> element. Zero fields are left out; Length is written only
// when HasLength is set, because 0 is a valid length.
type MD struct {
	Capability string
	Change     string
	Datetime   time.Time
	At         time.Time
	Completed  time.Time
	From       time.Time
	Until      time.Time
	Hash       string // space-separated "alg:hex" values
	// HashBytes, when not nil, is written instead of Hash: a caller that
	// renders hashes into a reused buffer allocates nothing per entry.
	HashBytes []byte
	Length    int64
	HasLength bool
	Type      string
	Path      string
}

// IsZero reports whether md has no attribute to write.
func (md *MD) IsZero() bool {
	return md.Capability == "" && md.Change == "" && md.Datetime.IsZero() &&
		md.At.IsZero() && md.Completed.IsZero() && md.From.IsZero() &&
		md.Until.IsZero() && md.Hash == "" && md.HashBytes == nil && !md.HasLength && md.Type == "" &&
		md.Path == ""
}

// Link is an <rs:ln> element.
type Link struct {
	Rel       string
	Href      string
	Type      string
	Hash      string
	Length    int64
	HasLength bool
	Modified  time.Time
	Pri       int // 0: left out
}

// Entry is one <url> or <sitemap> element.
type Entry struct {
	Loc string
	// LocBytes, when not nil, is written instead of Loc, as HashBytes is
	// instead of MD.Hash.
	LocBytes []byte
	Lastmod  time.Time // zero: left out
	MD       MD
	Links    []Link
}

// loc returns the entry's URI, for error messages.
func (e *Entry) loc() string {
	if e.LocBytes != nil {
		return string(e.LocBytes)
	}
	return e.Loc
}

// Writer streams one ResourceSync document. Call Start once, Entry for each
// entry, then Close, which finishes the document and flushes it. A Writer
// never holds more than one entry in memory.
type Writer struct {
	bw         *bufio.Writer
	root       Root
	maxEntries int
	maxBytes   int64
	entries    int
	bytes      int64
	buf        []byte // the rendering of one element, reused
	stylesheet string // href of the xml-stylesheet instruction, if any
	started    bool
	closed     bool
}

// NewWriter returns a Writer of a document with the given root onto w,
// limited to MaxEntries entries and MaxBytes bytes.
func NewWriter(w io.Writer, root Root) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, 64<<10), root: root, maxEntries: MaxEntries, maxBytes: MaxBytes}
}

// SetLimits changes the entry and byte limits of the document; tests use
// it to exercise rollover without writing 50,000 entries or 50 MB.
func (w *Writer) SetLimits(entries int, bytes int64) { w.maxEntries, w.maxBytes = entries, bytes }

// SetStylesheet makes Start write an <?xml-stylesheet?> processing
// instruction referencing the XSL stylesheet at href, so that browsers
// render the document; XML clients skip processing instructions. Call it
// before Start.
func (w *Writer) SetStylesheet(href string) { w.stylesheet = href }

// Entries returns the number of entries written so far.
func (w *Writer) Entries() int { return w.entries }

// Start writes the XML declaration, the root element, its links and its
// <rs:md>.
func (w *Writer) Start(md MD, links ...Link) error {
	if w.started {
		return errors.New("rs: Start called twice")
	}
	w.started = true
	root, _ := w.root.names()
	b := w.buf[:0]
	b = append(b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"...)
	if w.stylesheet != "" {
		b = append(b, `<?xml-stylesheet type="text/xsl" href="`...)
		var err error
		if b, err = appendEscaped(b, w.stylesheet); err != nil {
			return fmt.Errorf("stylesheet href: %w", err)
		}
		b = append(b, "\"?>\n"...)
	}
	b = append(b, '<')
	b = append(b, root...)
	b = append(b, ` xmlns="`+SitemapNS+`" xmlns:rs="`+RSNS+`">`+"\n"...)
	var err error
	for i := range links {
		if b, err = appendLink(b, "  ", &links[i]); err != nil {
			return err
		}
	}
	if b, err = appendMD(b, "  ", &md); err != nil {
		return err
	}
	return w.flush(b)
}

// Entry writes one entry. It returns ErrDocumentFull, writing nothing, when
// the entry would take the document past its limits.
func (w *Writer) Entry(e *Entry) error {
	if !w.started || w.closed {
		return errors.New("rs: Entry outside Start and Close")
	}
	_, name := w.root.names()
	b := w.buf[:0]
	b = append(b, "  <"...)
	b = append(b, name...)
	b = append(b, ">\n    <loc>"...)
	var err error
	if e.LocBytes != nil {
		b, err = appendEscaped(b, e.LocBytes)
	} else {
		b, err = appendEscaped(b, e.Loc)
	}
	if err != nil {
		return fmt.Errorf("loc %q: %w", e.loc(), err)
	}
	b = append(b, "</loc>\n"...)
	if !e.Lastmod.IsZero() {
		b = append(b, "    <lastmod>"...)
		b = appendTime(b, e.Lastmod)
		b = append(b, "</lastmod>\n"...)
	}
	if !e.MD.IsZero() {
		if b, err = appendMD(b, "    ", &e.MD); err != nil {
			return fmt.Errorf("entry %s: %w", e.loc(), err)
		}
	}
	for i := range e.Links {
		if b, err = appendLink(b, "    ", &e.Links[i]); err != nil {
			return fmt.Errorf("entry %s: %w", e.loc(), err)
		}
	}
	b = append(b, "  </"...)
	b = append(b, name...)
	b = append(b, ">\n"...)
	if w.entries >= w.maxEntries || w.bytes+int64(len(b))+w.closingLen() > w.maxBytes {
		w.buf = b
		return ErrDocumentFull
	}
	w.entries++
	return w.flush(b)
}

func (w *Writer) closingLen() int64 {
	root, _ := w.root.names()
	return int64(len(root) + 4)
}

// Close writes the closing root tag and flushes. It does not close the
// underlying writer.
func (w *Writer) Close() error {
	if !w.started {
		return errors.New("rs: Close before Start")
	}
	if w.closed {
		return nil
	}
	w.closed = true
	root, _ := w.root.names()
	b := append(w.buf[:0], "</"...)
	b = append(b, root...)
	b = append(b, ">\n"...)
	if err := w.flush(b); err != nil {
		return err
	}
	return w.bw.Flush()
}

func (w *Writer) flush(b []byte) error {
	w.buf = b
	n, err := w.bw.Write(b)
	w.bytes += int64(n)
	return err
}

func appendMD(b []byte, indent string, md *MD) ([]byte, error) {
	b = append(b, indent...)
	b = append(b, "<rs:md"...)
	var err error
	attrs := [...]struct{ name, value string }{
		{"capability", md.Capability},
		{"change", md.Change},
	}
	for _, a := range attrs {
		if b, err = appendAttr(b, a.name, a.value); err != nil {
			return b, err
		}
	}
	times := [...]struct {
		name string
		t    time.Time
	}{
		{"datetime", md.Datetime}, {"at", md.At}, {"completed", md.Completed},
		{"from", md.From}, {"until", md.Until},
	}
	for _, tm := range times {
		if !tm.t.IsZero() {
			b = append(b, ' ')
			b = append(b, tm.name...)
			b = append(b, `="`...)
			b = appendTime(b, tm.t)
			b = append(b, '"')
		}
	}
	if md.HashBytes != nil {
		b, err = appendAttr(b, "hash", md.HashBytes)
	} else {
		b, err = appendAttr(b, "hash", md.Hash)
	}
	if err != nil {
		return b, err
	}
	if md.HasLength {
		b = append(b, ` length="`...)
		b = strconv.AppendInt(b, md.Length, 10)
		b = append(b, '"')
	}
	if b, err = appendAttr(b, "type", md.Type); err != nil {
		return b, err
	}
	if b, err = appendAttr(b, "path", md.Path); err != nil {
		return b, err
	}
	return append(b, "/>\n"...), nil
}

func appendLink(b []byte, indent string, ln *Link) ([]byte, error) {
	if ln.Rel == "" || ln.Href == "" {
		return b, errors.New("rs:ln needs rel and href")
	}
	b = append(b, indent...)
	b = append(b, "<rs:ln"...)
	var err error
	for _, a := range [...]struct{ name, value string }{
		{"rel", ln.Rel}, {"href", ln.Href}, {"type", ln.Type}, {"hash", ln.Hash},
	} {
		if b, err = appendAttr(b, a.name, a.value); err != nil {
			return b, fmt.Errorf("rs:ln %s: %w", a.name, err)
		}
	}
	if ln.HasLength {
		b = append(b, ` length="`...)
		b = strconv.AppendInt(b, ln.Length, 10)
		b = append(b, '"')
	}
	if !ln.Modified.IsZero() {
		b = append(b, ` modified="`...)
		b = appendTime(b, ln.Modified)
		b = append(b, '"')
	}
	if ln.Pri != 0 {
		b = append(b, ` pri="`...)
		b = strconv.AppendInt(b, int64(ln.Pri), 10)
		b = append(b, '"')
	}
	return append(b, "/>\n"...), nil
}

func appendAttr[S ~string | ~[]byte](b []byte, name string, value S) ([]byte, error) {
	if len(value) == 0 {
		return b, nil
	}
	b = append(b, ' ')
	b = append(b, name...)
	b = append(b, `="`...)
	b, err := appendEscaped(b, value)
	if err != nil {
		return b, fmt.Errorf("attribute %s: %w", name, err)
	}
	return append(b, '"'), nil
}

// appendTime appends t in UTC as TimeLayout. Every entry has a time, and
// formatting by layout took a fifth of a Resource List entry's time; years
// the fixed form cannot hold go through the layout.
func appendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, TimeLayout)
	}
	hour, minute, second := t.Clock()
	var s [len(TimeLayout)]byte
	copy(s[:], TimeLayout)
	putDigits(s[0:4], year)
	putDigits(s[5:7], int(month))
	putDigits(s[8:10], day)
	putDigits(s[11:13], hour)
	putDigits(s[14:16], minute)
	putDigits(s[17:19], second)
	return append(b, s[:]...)
}

// putDigits writes v into d in decimal, zero-padded to len(d) digits.
func putDigits(d []byte, v int) {
	for i := len(d) - 1; i >= 0; i-- {
		d[i] = byte('0' + v%10)
		v /= 10
	}
}

// appendEscaped appends s with the five XML special characters escaped, so
// that it is safe both as text and inside a double-quoted attribute.
func appendEscaped[S ~string | ~[]byte](b []byte, s S) ([]byte, error) {
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			esc := xmlEscapes[c]
			switch {
			case esc != "":
				b = append(b, s[last:i]...)
				b = append(b, esc...)
				last = i + 1
			case c < 0x20:
				return b, fmt.Errorf("%w: %q", ErrInvalidXMLChar, c)
			}
			i++
			continue
		}
		r, size := decodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			return b, fmt.Errorf("%w: invalid UTF-8 in %q", ErrInvalidXMLChar, s)
		}
		if !IsXMLChar(r) {
			return b, fmt.Errorf("%w: %U", ErrInvalidXMLChar, r)
		}
		i += size
	}
	return append(b, s[last:]...), nil
}

// xmlEscapes holds what appendEscaped writes for the ASCII bytes it does
// not copy as they are: the five special characters, and the three
// control characters XML allows, as character references so that an
// attribute keeps them. The other control characters, which XML 1.0 does
// not allow, hold "" too: appendEscaped refuses them (ErrInvalidXMLChar).
var xmlEscapes = [utf8.RuneSelf]string{
	'&': "&amp;", '<': "&lt;", '>': "&gt;", '"': "&quot;", '\'': "&apos;",
	'\t': "&#x9;", '\n': "&#xA;", '\r': "&#xD;",
}

// decodeRune decodes the first rune of s, a string or a byte slice.
func decodeRune[S ~string | ~[]byte](s S) (rune, int) {
	switch v := any(s).(type) {
	case string:
		return utf8.DecodeRuneInString(v)
	case []byte:
		return utf8.DecodeRune(v)
	}
	return utf8.DecodeRuneInString(string(s))
}

// IsXMLChar reports whether r is in the XML 1.0 Char production.
func IsXMLChar(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}
