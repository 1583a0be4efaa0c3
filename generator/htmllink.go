package generator

import (
	"bytes"
	"fmt"
	"io/fs"

	"io"

	"github.com/rsgen/rsgen/snapshot"
	xhtml "golang.org/x/net/html"
)

// HTML resources with a <link rel="resourcesync"> ([publish] html_link)
//
// A browser or crawler that lands on a page of a set finds the set's
// Capability List through a <link rel="resourcesync" href="..."> in the
// page's <head>. rsgen inserts it into the published copy, so the
// published bytes differ from the source file's, and everything that
// describes the resource must describe the published bytes: its length
// and hashes in the Resource List, the Change Lists and dump manifests,
// and the bytes a dump packages. The design:
//
//   - The inserted tag depends on the configuration, which the file's stat
//     cannot reveal: the state records what the tags depend on
//     (tagsConfig), and when that changed, or the output does not look
//     like the last build's, the scan reads every such file
//     (snapshot.ScanOptions Reread). Otherwise one whose source did not
//     change is trusted as any file is, by the stat of its source, which
//     its record keeps beside the published length.
//   - The scan's single read feeds, through the tee, a writer that inserts
//     the tag and streams the result into the output (compared with the
//     copy already there, replaced only when it differs) and into the
//     published digests. The file is never hard-linked.
//   - Before the diff, the file's record takes the published length and
//     digests; its fingerprint stays the source's. So change detection is
//     about the source content, while every document, and a state
//     recovered from the published documents, carries the published values.
//   - Dumps read the bitstreams of these files from the output, not the
//     source.
//
// A configuration change that alters the tag (base_url, the sets) changes
// the published bytes without a change event, like any base_url change.

// headSearchLimit bounds how far into a file the <head> start tag is
// looked for; a file without one that early is published unchanged.
const headSearchLimit = 64 << 10

// published is the length and digests of the published form of a
// rewritten resource.
type published struct {
	size    int64
	digests snapshot.Digests
}

// rereadRewritten reports whether the scan must read every rewritten
// page, whatever its stat: when the tags changed since the last build, or
// when the output does not look like the last build's (a page whose copy
// is missing can only be published again by the scan's read).
func (b *linker) rereadRewritten() bool {
	return b.prev.HTMLLink != b.tags || !b.intact
}

// rewriter returns a writer that writes the published form of r's bytes
// into dst, and a function that completes it after the last byte and
// records the published length and digests; nil when r is published as
// it is.
func (b *linker) rewriter(r *snapshot.Record, dst io.Writer) (io.Writer, func() error) {
	tags := b.linkTags(r.Path)
	if tags == nil {
		return nil, nil
	}
	digests := snapshot.NewDigester(b.algs)
	size := &countingWriter{}
	inj := &headInjector{dst: io.MultiWriter(dst, digests, size), tags: tags}
	finish := func() error {
		if err := inj.Close(); err != nil {
			return err
		}
		if !inj.inserted {
			b.headless.Store(r.Path, true)
		}
		b.published.Store(r.Path, published{size: size.n, digests: digests.Digests()})
		return nil
	}
	return inj, finish
}

// measuringTee is the scan's tee of a build that writes nothing (status):
// it gives the resources html_link rewrites the length and digests of
// their published bytes, as a build does, so that they are compared with
// their records as a build compares them.
func (b *linker) measuringTee() snapshot.Tee {
	return func(r *snapshot.Record, _ bool, _ fs.File) (io.Writer, func(bool) error, error) {
		w, finish := b.rewriter(r, io.Discard)
		if w == nil {
			return nil, func(bool) error { return nil }, nil
		}
		return w, func(ok bool) error {
			if !ok {
				return nil
			}
			return finish()
		}, nil
	}
}

// warnHeadless warns about an HTML resource created or updated by this
// build that has no <head> start tag to put the link in: once per
// version, not on every build that reads it. It is a visitor of the
// scan's records (see builder.scan).
func (b *linker) warnHeadless(_ int, r *snapshot.Record) error {
	if _, ok := b.headless.Load(r.Path); ok && r.Change != 0 {
		b.warn(WarnHTMLHead, r.Path, fmt.Sprintf("html_link: no <head> start tag before the content (within the first %d KiB): published without its <link rel=\"resourcesync\">", headSearchLimit>>10))
	}
	return nil
}

// applyRewrite gives the record of a rewritten resource, just read, the
// length and digests of its published bytes, as the scan's tee recorded
// them.
func (b *linker) applyRewrite(r *snapshot.Record) {
	if v, ok := b.published.Load(r.Path); ok {
		p := v.(published)
		r.SetPublished(p.size, p.digests)
	}
}

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
