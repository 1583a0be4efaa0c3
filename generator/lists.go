package generator

import (
	"errors"
	"fmt"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
)

// resourceEntryBound bounds the bytes of one Resource List entry beyond its
// URI (markup, lastmod, three digests, length, type).
const resourceEntryBound = 400

// writeResourceList writes the set's Resource List: one document while it
// fits the limits of one, otherwise parts of at most rs.MaxEntries entries (and rs.MaxBytes)
// grouped by a Resource List Index at the same URI (§10.2).
func (b *builder) writeResourceList(s *set) error {
	var members []int
	var size int64
	for i := range b.next.Files {
		if s.Contains(b.next.Files[i].Path) {
			members = append(members, i)
			size += int64(len(b.resBase)+3*len(b.next.Files[i].Path)) + resourceEntryBound
		}
	}
	at := unixTime(b.next.SetChanged[s.Name])
	md := rs.MD{Capability: rs.CapResourceList, At: at}
	if len(members) <= b.opts.limits.entries && size <= b.opts.limits.bytes-4096 {
		return b.writeDoc(layout.ResourceList(s.Name), rs.URLSet, md, []rs.Link{b.upLink(s)}, func(w *rs.Writer) error {
			return b.resourceEntries(w, members)
		})
	}
	parts, err := b.writeResourceListParts(s, md, members)
	if err != nil {
		return err
	}
	return b.writeDoc(layout.ResourceList(s.Name), rs.SitemapIndex, md, []rs.Link{b.upLink(s)}, func(w *rs.Writer) error {
		for _, p := range parts {
			if err := w.Entry(&rs.Entry{Loc: b.docURL(p), MD: rs.MD{At: at}}); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeResourceListParts writes members into as many parts as the limits
// need and returns their output paths.
func (b *builder) writeResourceListParts(s *set, md rs.MD, members []int) ([]string, error) {
	links := []rs.Link{b.upLink(s), {Rel: rs.RelIndex, Href: b.docURL(layout.ResourceList(s.Name))}}
	var parts []string
	for len(members) > 0 {
		rel := layout.ResourceListPart(s.Name, len(parts)+1)
		written := 0
		err := b.writeDoc(rel, rs.URLSet, md, links, func(w *rs.Writer) error {
			err := b.resourceEntries(w, members)
			written = w.Entries()
			if errors.Is(err, rs.ErrDocumentFull) {
				return nil // the rest goes into the next part
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if written == 0 {
			return nil, fmt.Errorf("resource list part %s: an entry does not fit in an empty document", rel)
		}
		members = members[written:]
		parts = append(parts, rel)
	}
	return parts, nil
}

// resourceEntries writes the Resource List entries of the files at the
// given indexes until done or the document is full.
func (b *builder) resourceEntries(w *rs.Writer, members []int) error {
	fromMtime := b.cfg.Lastmod == "mtime"
	var e rs.Entry
	for _, i := range members {
		r := &b.next.Files[i]
		e = rs.Entry{Loc: b.resURL(r.Path), Lastmod: r.Lastmod(fromMtime)}
		b.describe(&e.MD, r)
		if err := w.Entry(&e); err != nil {
			return err
		}
	}
	return nil
}

// writeCapabilityList writes the set's Capability List (§9).
func (b *builder) writeCapabilityList(s *set) error {
	links := []rs.Link{{Rel: rs.RelUp, Href: b.docURL(layout.SourceDescription)}}
	if s.DescribedBy != "" {
		links = append(links, rs.Link{Rel: rs.RelDescribedBy, Href: s.DescribedBy})
	}
	caps := []struct{ capability, rel string }{
		{rs.CapResourceList, layout.ResourceList(s.Name)},
		{rs.CapChangeList, layout.ChangeListIndex(s.Name)},
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
func (b *builder) writeSourceDescription() error {
	var links []rs.Link
	if b.cfg.DescribedBy != "" {
		links = append(links, rs.Link{Rel: rs.RelDescribedBy, Href: b.cfg.DescribedBy})
	}
	return b.writeDoc(layout.SourceDescription, rs.URLSet, rs.MD{Capability: rs.CapDescription}, links, func(w *rs.Writer) error {
		for _, s := range b.sets {
			e := rs.Entry{Loc: b.docURL(layout.CapabilityList(s.Name)), MD: rs.MD{Capability: rs.CapCapabilityList}}
			if s.DescribedBy != "" {
				e.Links = []rs.Link{{Rel: rs.RelDescribedBy, Href: s.DescribedBy}}
			}
			if err := w.Entry(&e); err != nil {
				return err
			}
		}
		return nil
	})
}
