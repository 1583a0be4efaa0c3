package generator

import (
	"errors"
	"fmt"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
)

// lister writes the lists of each set (here and in documents.go).
type lister struct {
	*run
}

// resourceEntryBound bounds the bytes of one Resource List entry beyond its
// URI (markup, lastmod, three digests, length, type).
const resourceEntryBound = 400

// writeResourceList writes the set's Resource List (§10).
func (b *lister) writeResourceList(s *set) error {
	members := b.scanned.members[s]
	fromMtime := b.cfg.Lastmod == config.LastmodMtime
	size := int64(members.Len())*int64(len(b.resBase)+resourceEntryBound) + 3*b.scanned.pathBytes[s]
	md := rs.MD{Capability: rs.CapResourceList, At: unixTime(b.next.SetChanged[s.Name])}
	// The URI and hash of each entry are rendered into buffers reused from
	// entry to entry: the writer copies them at once, and a million-entry
	// list then costs no allocation per entry beyond its links.
	var loc, hash []byte
	entry := func(i int, e *rs.Entry) error {
		r, err := b.next.Files.At(members.At(i))
		if err != nil {
			return err
		}
		links, err := b.linker.links(s, r, nil)
		if err != nil {
			return err
		}
		loc = layout.AppendURL(loc[:0], b.resBase, r.Path)
		hash = r.Digests.AppendHash(hash[:0], b.algs)
		*e = rs.Entry{LocBytes: loc, Lastmod: r.Lastmod(fromMtime), Links: links}
		b.describeContent(&e.MD, r)
		e.MD.HashBytes = hash
		return nil
	}
	err := b.writeSplit(s, layout.ResourceList(s.Name), md, b.archivesLink(s, rs.CapResourceList), members.Len(), size, entry, b.writeDoc)
	if err != nil {
		return err
	}
	return b.archiver.archiveSnapshot(s, false, md, members.Len(), size, entry)
}

// docWriter writes a document at output path rel: into the output
// (writeDoc), or into the state's archive and from there into the output
// (writeArchivedDoc).
type docWriter func(rel string, root rs.Root, md rs.MD, links []rs.Link, fill func(*rs.Writer) error) error

// writeSplit writes a list document of n entries at doc, filled by entry,
// with put: one document while it fits the limits of one (size bounds its
// bytes), otherwise parts of at most rs.MaxEntries entries and rs.MaxBytes
// bytes, grouped by an index at doc with the same capability (§10.2,
// §11.1). Every document links up, and to extra.
func (b *lister) writeSplit(s *set, doc string, md rs.MD, extra []rs.Link, n int, size int64, entry func(i int, e *rs.Entry) error, put docWriter) error {
	entries := func(w *rs.Writer, from int) (int, error) {
		var e rs.Entry
		for i := from; i < n; i++ {
			if err := entry(i, &e); err != nil {
				return i, err
			}
			if err := w.Entry(&e); err != nil {
				return i, err
			}
		}
		return n, nil
	}
	up := append([]rs.Link{b.upLink(s)}, extra...)
	if n <= b.opts.limits.entries && size <= b.opts.limits.bytes-4096 {
		return put(doc, rs.URLSet, md, up, func(w *rs.Writer) error {
			_, err := entries(w, 0)
			return err
		})
	}
	links := append([]rs.Link{b.upLink(s), {Rel: rs.RelIndex, Href: b.docURL(doc)}}, extra...)
	var parts []string
	for next := 0; next < n; {
		rel := layout.Part(doc, len(parts)+1)
		start := next
		err := put(rel, rs.URLSet, md, links, func(w *rs.Writer) error {
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
	return put(doc, rs.SitemapIndex, md, up, func(w *rs.Writer) error {
		for _, p := range parts {
			e := rs.Entry{Loc: b.docURL(p), MD: rs.MD{At: md.At, From: md.From}}
			if err := w.Entry(&e); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeCapabilityList writes the set's Capability List (§9).
func (b *lister) writeCapabilityList(s *set) error {
	links := []rs.Link{{Rel: rs.RelUp, Href: b.docURL(layout.SourceDescription)}}
	if d := b.describedBy(s); d != "" {
		links = append(links, rs.Link{Rel: rs.RelDescribedBy, Href: d})
	}
	caps := []struct{ capability, rel string }{{rs.CapResourceList, layout.ResourceList(s.Name)}}
	if s.resourceDump {
		caps = append(caps, struct{ capability, rel string }{rs.CapResourceDump, layout.ResourceDump(s.Name)})
	}
	for _, kind := range b.journals.segmentKinds(s) {
		caps = append(caps, struct{ capability, rel string }{kind.capability, kind.index(s.Name)})
	}
	// The archives come last, so that a reader that stops at the first
	// way to reach a document meets the live ones first.
	for _, c := range s.archives {
		caps = append(caps, struct{ capability, rel string }{c + "-archive", layout.Archive(s.Name, c)})
	}
	return b.writeDoc(layout.CapabilityList(s.Name), rs.URLSet, rs.MD{Capability: rs.CapCapabilityList}, links, func(w *rs.Writer) error {
		for _, c := range caps {
			if err := w.Entry(&rs.Entry{Loc: b.docURL(c.rel), MD: rs.MD{Capability: c.capability}}); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeSourceDescription writes the Source Description (§8) at
// /.well-known/resourcesync, listing every set's Capability List. It has
// no lastmod, so it changes only when the sets do.
func (b *lister) writeSourceDescription() error {
	var links []rs.Link
	if d := b.describedBy(nil); d != "" {
		links = append(links, rs.Link{Rel: rs.RelDescribedBy, Href: d})
	}
	return b.writeDoc(layout.SourceDescription, rs.URLSet, rs.MD{Capability: rs.CapDescription}, links, func(w *rs.Writer) error {
		for _, s := range b.sets {
			e := rs.Entry{Loc: b.docURL(layout.CapabilityList(s.Name)), MD: rs.MD{Capability: rs.CapCapabilityList}}
			if d := b.describedBy(s); d != "" {
				e.Links = []rs.Link{{Rel: rs.RelDescribedBy, Href: d}}
			}
			if err := w.Entry(&e); err != nil {
				return err
			}
		}
		return nil
	})
}
