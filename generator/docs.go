package generator

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
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
	return d.w.WriteFile(path, func(f io.Writer) error {
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
	})
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
type listing struct {
	md    rs.MD
	n     int
	size  int64
	entry func(i int, e *rs.Entry) error
}

// writeSplit writes the list document of set st at doc, with put: one
// document while it fits the limits of one, otherwise parts of at most
// rs.MaxEntries entries and rs.MaxBytes bytes, grouped by an index at doc
// with the same capability (§10.2, §11.1). Every document links up, and
// to extra.
func writeSplit(s *site, st *set, doc string, l listing, extra []rs.Link, put putDoc) error {
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
	var parts []string
	for next := 0; next < l.n; {
		rel := layout.Part(doc, len(parts)+1)
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
		parts = append(parts, rel)
	}
	return put(doc, rs.SitemapIndex, l.md, up, func(w *rs.Writer) error {
		for _, p := range parts {
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
