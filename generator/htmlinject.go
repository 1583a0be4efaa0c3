package generator

import (
	"bytes"
	"io"

	xhtml "golang.org/x/net/html"
)

// headSearchLimit bounds how far into a file the <head> start tag is
// looked for; a file without one that early is published unchanged.
const headSearchLimit = 64 << 10

// headInjector copies an HTML document to dst with tags inserted right
// after its own <head> start tag. It holds back bytes only until it knows
// where that tag is, or that the document has none (see headStart), or
// headSearchLimit bytes have passed; from then on bytes pass straight
// through. Close writes what is still held back.
type headInjector struct {
	dst      io.Writer
	tags     []byte
	held     []byte
	done     bool // decided: pass through
	inserted bool // the tags went in
	// tried is how many bytes were held when headStart last could not
	// decide. It reads from the first byte each time, so it runs again
	// only once the bytes held have doubled: writes of a few bytes each
	// would otherwise cost time quadratic in their number.
	tried int
}

func (h *headInjector) Write(p []byte) (int, error) {
	if h.done {
		return h.dst.Write(p)
	}
	h.held = append(h.held, p...)
	final := len(h.held) >= headSearchLimit
	if !final && len(h.held) < 2*h.tried {
		return len(p), nil
	}
	if err := h.decide(final); err != nil {
		return 0, err
	}
	h.tried = len(h.held)
	return len(p), nil
}

// decide inserts the tags once headStart knows where, or passes the held
// bytes on unchanged once it knows there is no place (or final says no
// more bytes will help).
func (h *headInjector) decide(final bool) error {
	at, known := headStart(h.held[:min(len(h.held), headSearchLimit)], final)
	switch {
	case known && at >= 0:
		h.inserted = true
		return h.flush(h.held[:at], h.tags, h.held[at:])
	case known || final:
		return h.flush(h.held)
	}
	return nil
}

func (h *headInjector) flush(parts ...[]byte) error {
	h.done = true
	for _, part := range parts {
		if _, err := h.dst.Write(part); err != nil {
			return err
		}
	}
	h.held = nil
	return nil
}

// Close writes the bytes still held back: a document without its own
// <head> start tag is published unchanged.
func (h *headInjector) Close() error {
	if h.done {
		return nil
	}
	return h.decide(true)
}

// headStart returns the offset just past the document's own <head> start
// tag in b, the first bytes of an HTML document, with known true; -1 and
// known true when the document has no such tag (HTML lets content start
// without one, and a <head> after it is not the head); and known false
// when b ends before that is decided, unless complete says b is all there
// is. It reads b as a browser does (golang.org/x/net/html's tokenizer), so
// "<head" inside a comment, a script or an attribute is not the tag: only
// a doctype, comments, whitespace and <html> may come before it.
func headStart(b []byte, complete bool) (at int, known bool) {
	z := xhtml.NewTokenizer(bytes.NewReader(b))
	off := 0
	for {
		tt := z.Next()
		raw := len(z.Raw())
		if tt != xhtml.ErrorToken && off+raw == len(b) && !complete {
			return -1, false // the token may go on in the bytes to come ("<" may start a tag)
		}
		switch tt {
		case xhtml.ErrorToken:
			return -1, complete // the end of b, possibly inside a token
		case xhtml.DoctypeToken, xhtml.CommentToken:
		case xhtml.TextToken:
			text := bytes.TrimPrefix(z.Raw(), []byte("\ufeff"))
			if len(bytes.Trim(text, " \t\n\f\r")) > 0 {
				return -1, true
			}
		case xhtml.StartTagToken, xhtml.SelfClosingTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "html":
			case "head":
				return off + raw, true
			default:
				return -1, true
			}
		default:
			return -1, true
		}
		off += raw
	}
}
