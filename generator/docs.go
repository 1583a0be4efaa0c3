package generator

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
	"golang.org/x/sync/errgroup"
)

// docWriter writes the ResourceSync documents of site s through the sink w:
// into the output, or into the state archive, which the keeper k publishes
// them from. The writers of every family of documents share it.
type docWriter struct {
	s *site
	w *sink.Sink
	k *keeper
}

// putDoc writes a document at output path rel: into the output
// (writeDoc), or into the state's archive and from there into the output
// (see archiveSnapshot).
type putDoc func(rel string, root rs.Root, md rs.MD, links []rs.Link, fill func(*rs.Writer) error) error

// writeXML streams one document into path, atomically and only if its
// bytes change; fill writes the entries. It reports whether the file
// changed.
func (d docWriter) writeXML(path string, root rs.Root, md rs.MD, links []rs.Link, fill func(*rs.Writer) error) (bool, error) {
	return d.w.WriteFile(path, func(f io.Writer) error { return d.render(f, path, root, md, links, fill) })
}

// render writes the document that will be at path into f; fill writes the
// entries.
func (d docWriter) render(f io.Writer, path string, root rs.Root, md rs.MD, links []rs.Link, fill func(*rs.Writer) error) error {
	w := rs.NewWriter(f, root)
	w.SetLimits(d.s.opts.limits.entries, d.s.opts.limits.bytes)
	w.SetStylesheet(stylesheetHref(d.s.cfg, path))
	if err := w.Start(md, links...); err != nil {
		return err
	}
	if fill != nil {
		if err := fill(w); err != nil {
			return err
		}
	}
	return w.Close()
}

// putParts writes the documents at output paths rels, the parts of one
// list, the k-th filled by fill(k, w), and records them, in order.
type putParts func(rels []string, root rs.Root, md rs.MD, links []rs.Link, fill func(k int, w *rs.Writer) error) error

// writeParts writes the parts of a list into the output on every core,
// each compared with the file there as it streams, and stages and records
// them in order, so that the order of publication does not depend on which
// finished first. Nothing is staged when one fails.
func (d docWriter) writeParts(rels []string, root rs.Root, md rs.MD, links []rs.Link, fill func(k int, w *rs.Writer) error) error {
	tmps := make([]string, len(rels))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for k, rel := range rels {
		g.Go(func() error {
			var err error
			tmps[k], err = d.w.WriteLazy(rel, func(f io.Writer) error {
				return d.render(f, d.w.Path(rel), root, md, links, func(w *rs.Writer) error { return fill(k, w) })
			})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		for _, tmp := range tmps {
			if tmp != "" {
				os.Remove(tmp)
			}
		}
		return err
	}
	for k, rel := range rels {
		d.w.StageLazy(rel, tmps[k])
	}
	return nil
}

// writeDoc writes a document at output path rel and records it as written
// by this build.
func (d docWriter) writeDoc(rel string, root rs.Root, md rs.MD, links []rs.Link, fill func(*rs.Writer) error) error {
	changed, err := d.writeXML(d.w.Path(rel), root, md, links, fill)
	if err != nil {
		return err
	}
	d.w.Record(rel, changed)
	return nil
}

// archivePath returns the file, in the state archive, of output path rel.
func (d docWriter) archivePath(rel string) string { return snapshot.ArchivePath(d.s.cfg.State, rel) }

// keepDoc writes the document at output path rel that no later build
// could make again (what it is: "closed", "archived") into the state
// archive, with write, and returns its record with its sums; publishKept
// publishes it from there.
func (d docWriter) keepDoc(what, rel string, write func(path string) error) (snapshot.Kept, error) {
	if err := write(d.archivePath(rel)); err != nil {
		return snapshot.Kept{}, err
	}
	sum, err := measure(d.archivePath(rel))
	if err != nil {
		return snapshot.Kept{}, fmt.Errorf("%s document %s: %w", what, d.archivePath(rel), err)
	}
	return snapshot.Kept{Path: rel, Size: sum.size, SHA256: sum.sha256}, nil
}

// listing is what a list document lists: its metadata, its n entries,
// filled by entry, and a bound of their bytes (see writeSplit). The live
// Resource List and Resource Dump and their archived copies share one.
// When entryBound bounds the bytes of any one entry, newEntry makes an
// entry function of its own for each goroutine that renders a part of a
// split list (see writeSplit).
type listing struct {
	md         rs.MD
	n          int
	size       int64
	entry      func(i int, e *rs.Entry) error
	newEntry   func() func(i int, e *rs.Entry) error
	entryBound int64
}

// writeSplit writes the list document of set st at doc, with put: one
// document while it fits the limits of one, otherwise parts of at most
// rs.MaxEntries entries and rs.MaxBytes bytes, grouped by an index at doc
// with the same capability (§10.2, §11.1). Every document links up, and
// to extra. When the parts' boundaries are known before they are written
// (knownParts), and parts can write them (not nil), they are written in
// parallel; otherwise one after the other, each until it is full.
func writeSplit(s *site, st *set, doc string, l listing, extra []rs.Link, put putDoc, parts putParts) error {
	entries := func(w *rs.Writer, from int) (int, error) {
		var e rs.Entry
		for i := from; i < l.n; i++ {
			if err := l.entry(i, &e); err != nil {
				return i, err
			}
			if err := w.Entry(&e); err != nil {
				return i, err
			}
		}
		return l.n, nil
	}
	up := append([]rs.Link{s.upLink(st)}, extra...)
	if l.n <= s.opts.limits.entries && l.size <= s.opts.limits.bytes-4096 {
		return put(doc, rs.URLSet, l.md, up, func(w *rs.Writer) error {
			_, err := entries(w, 0)
			return err
		})
	}
	links := append([]rs.Link{s.upLink(st), {Rel: rs.RelIndex, Href: s.docURL(doc)}}, extra...)
	if rels, ok := knownParts(s, doc, l); ok && parts != nil {
		err := parts(rels, rs.URLSet, l.md, links, func(k int, w *rs.Writer) error {
			entry := l.newEntry()
			var e rs.Entry
			for i := k * s.opts.limits.entries; i < min(l.n, (k+1)*s.opts.limits.entries); i++ {
				if err := entry(i, &e); err != nil {
					return err
				}
				if err := w.Entry(&e); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			return writeIndex(s, doc, l, up, rels, put)
		}
		if !errors.Is(err, rs.ErrDocumentFull) {
			return err
		}
		// The bound was wrong: a part filled before its last entry. The
		// parts are written again, each until it is full.
	}
	var rels []string
	for next := 0; next < l.n; {
		rel := layout.Part(doc, len(rels)+1)
		start := next
		err := put(rel, rs.URLSet, l.md, links, func(w *rs.Writer) error {
			var err error
			next, err = entries(w, start)
			if errors.Is(err, rs.ErrDocumentFull) {
				return nil // the rest goes into the next part
			}
			return err
		})
		if err != nil {
			return err
		}
		if next == start {
			return fmt.Errorf("%s: an entry does not fit in an empty document", rel)
		}
		rels = append(rels, rel)
	}
	return writeIndex(s, doc, l, up, rels, put)
}

// knownParts returns the parts of the split list l at doc when each holds
// as many entries as a document may, every entry's bytes being bounded so
// that so many fit: a part then ends where the one before it would have
// filled, known before either is written.
func knownParts(s *site, doc string, l listing) ([]string, bool) {
	per := s.opts.limits.entries
	if l.newEntry == nil || l.entryBound <= 0 || int64(per)*l.entryBound > s.opts.limits.bytes-4096 {
		return nil, false
	}
	rels := make([]string, (l.n+per-1)/per)
	for k := range rels {
		rels[k] = layout.Part(doc, k+1)
	}
	return rels, true
}

// writeIndex writes, with put, the index at doc of the list l's parts,
// rels.
func writeIndex(s *site, doc string, l listing, up []rs.Link, rels []string, put putDoc) error {
	return put(doc, rs.SitemapIndex, l.md, up, func(w *rs.Writer) error {
		for _, p := range rels {
			e := rs.Entry{Loc: s.docURL(p), MD: rs.MD{At: l.md.At, From: l.md.From}}
			if err := w.Entry(&e); err != nil {
				return err
			}
		}
		return nil
	})
}

// changeEntry returns the Change List entry of one event. Its lastmod is
// the lastmod the Resource List publishes for the same version, so that a
// Destination comparing the two finds them equal; a deletion has the
// deletion's time. In ResourceSync 1.0 mode the change time goes into
// lastmod only, since 1.0 schemas reject the datetime attribute (and
// config refuses 1.0 with lastmod from mtime, where the two would differ).
func changeEntry(s *site, ev *snapshot.Event) *rs.Entry {
	e := &rs.Entry{Loc: s.resURL(ev.Record.Path), Lastmod: eventLastmod(s, ev), MD: rs.MD{Change: ev.Change.String()}}
	if s.cfg.SpecVersion != config.Spec10 {
		e.MD.Datetime = unixTime(ev.Time)
	}
	if ev.Change != snapshot.Deleted {
		describe(s, &e.MD, ev.Record)
	}
	return e
}

// eventLastmod returns the lastmod of an event's entry: the version's own,
// as the Resource List has it, or the time of a deletion.
func eventLastmod(s *site, ev *snapshot.Event) time.Time {
	if ev.Change == snapshot.Deleted {
		return unixTime(ev.Time)
	}
	return ev.Record.Lastmod(s.cfg.Lastmod == config.LastmodMtime)
}

// describe fills in the hash, length and type of a resource.
func describe(s *site, md *rs.MD, r *snapshot.Record) {
	md.Hash = r.Digests.Hash(s.algs)
	describeContent(md, r)
}

// describeContent fills in the length and type of a resource.
func describeContent(md *rs.MD, r *snapshot.Record) {
	md.Length, md.HasLength = r.Size, true
	if schemaSafeType(r.Type()) {
		md.Type = r.Type()
	}
}

// describedLink returns a link to the published resource r with its
// hash, length, type and lastmod.
func describedLink(s *site, relation, href string, r *snapshot.Record) rs.Link {
	var md rs.MD
	describe(s, &md, r)
	return rs.Link{Rel: relation, Href: href, Type: md.Type, Hash: md.Hash, Length: md.Length, HasLength: true,
		Modified: r.Lastmod(s.cfg.Lastmod == config.LastmodMtime)}
}

// packageEntry returns the dump document entry of a package.
func packageEntry(s *site, p *snapshot.Package) rs.Entry {
	md := rs.MD{Type: layout.TypeZIP, Length: p.Length, HasLength: true, Hash: "sha-256:" + hex.EncodeToString(p.SHA256[:])}
	if p.Change {
		md.From, md.Until = unixTime(p.From), unixTime(p.Until)
	} else {
		md.At = unixTime(p.At)
	}
	return rs.Entry{Loc: s.docURL(p.Path), MD: md,
		Links: []rs.Link{{Rel: rs.RelContents, Href: s.docURL(layout.ManifestCopy(p.Path)), Type: "application/xml"}}}
}

// schemaSafeType reports whether t passes the ResourceSync schema's pattern
// for media types, [\w-]+/[\w-]+, in which \w excludes punctuation such as
// "." and "_".
func schemaSafeType(t string) bool {
	slash := 0
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c == '/':
			if i == 0 || i == len(t)-1 {
				return false
			}
			slash++
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '+':
		default:
			return false
		}
	}
	return slash == 1
}
