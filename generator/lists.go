package generator

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
)

// lister writes the lists of each set (here and in documents.go).
type lister struct {
	*run
	// memberOf holds, per set, the indexes of its files in next.Files, and
	// pathBytes the sum of their paths' lengths (collectMembers).
	memberOf  map[*set]*memberList
	pathBytes map[*set]int64
}

// memberList is the members of a set: indexes in next.Files, in walk
// order, held as runs of consecutive indexes. A set is mostly all the
// files, or a folder, whose files are consecutive in walk order: a run or
// a few, where a list of indexes took 8 bytes per resource.
type memberList struct {
	runs []memberRun
	n    int
}

// memberRun is a run of consecutive indexes: its first member's position
// in the list and index in next.Files (32 bits each: a run per member,
// the worst case, costs what an index did).
type memberRun struct{ pos, index int32 }

func (m *memberList) add(i int) {
	if k := len(m.runs); k > 0 && int(m.runs[k-1].index)+m.n-int(m.runs[k-1].pos) == i {
		m.n++
		return
	}
	m.runs = append(m.runs, memberRun{pos: int32(m.n), index: int32(i)})
	m.n++
}

// Len returns the number of members.
func (m *memberList) Len() int {
	if m == nil {
		return 0
	}
	return m.n
}

// At returns the index in next.Files of the k-th member.
func (m *memberList) At(k int) int {
	j := sort.Search(len(m.runs), func(j int) bool { return int(m.runs[j].pos) > k }) - 1
	return int(m.runs[j].index) + k - int(m.runs[j].pos)
}

// resourceEntryBound bounds the bytes of one Resource List entry beyond its
// URI (markup, lastmod, three digests, length, type).
const resourceEntryBound = 400

// writeResourceList writes the set's Resource List (§10), unless the set
// has no files: no document but the open Change List is published empty,
// and the Capability List of a set without files lists its Change List
// Index only, whose Change Lists say when files come (see
// writeCapabilityList).
func (b *lister) writeResourceList(s *set) error {
	members := b.members(s)
	if members.Len() == 0 {
		return nil
	}
	fromMtime := b.cfg.Lastmod == config.LastmodMtime
	size := int64(members.Len())*int64(len(b.resBase)+resourceEntryBound) + 3*b.pathBytes[s]
	md := rs.MD{Capability: rs.CapResourceList, At: unixTime(b.next.SetChanged[s.Name])}
	// The URI and hash of each entry are rendered into buffers reused from
	// entry to entry: the writer copies them at once, and a million-entry
	// list then costs no allocation per entry beyond its links.
	var loc, hash []byte
	entry := func(i int, e *rs.Entry) {
		r := b.next.Files.At(members.At(i))
		loc = layout.AppendURL(loc[:0], b.resBase, r.Path)
		hash = r.Digests.AppendHash(hash[:0], b.algs)
		*e = rs.Entry{LocBytes: loc, Lastmod: r.Lastmod(fromMtime), Links: b.linker.links(s, r, nil)}
		b.describeContent(&e.MD, r)
		e.MD.HashBytes = hash
	}
	archives, err := b.archiver.archivesLink(s, rs.CapResourceList)
	if err != nil {
		return err
	}
	if err := b.writeSplit(s, layout.ResourceList(s.Name), md, archives, members.Len(), size, entry, b.writeDoc); err != nil {
		return err
	}
	return b.archiver.archiveSnapshot(s, false, md, members.Len(), size, entry)
}

// members returns the indexes in b.next.Files of the files of set s,
// matched once per build by collectMembers: the Resource List, the
// Resource Dump and their archives all need them.
func (b *lister) members(s *set) *memberList { return b.memberOf[s] }

// collectMembers adds record i to the members of each set it is in: a
// visitor of the scan's records (see builder.scan).
func (b *lister) collectMembers(i int, r *snapshot.Record) error {
	if b.memberOf == nil {
		b.memberOf, b.pathBytes = map[*set]*memberList{}, map[*set]int64{}
		for _, s := range b.sets {
			b.memberOf[s] = &memberList{}
		}
	}
	for _, s := range b.sets {
		if s.Contains(r.Path) {
			b.memberOf[s].add(i)
			b.pathBytes[s] += int64(len(r.Path))
		}
	}
	return nil
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
func (b *lister) writeSplit(s *set, doc string, md rs.MD, extra []rs.Link, n int, size int64, entry func(i int, e *rs.Entry), put docWriter) error {
	entries := func(w *rs.Writer, from int) (int, error) {
		var e rs.Entry
		for i := from; i < n; i++ {
			entry(i, &e)
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

// writeCapabilityList writes the set's Capability List (§9), listing the
// set's documents this build published: those that would be empty are
// not (a set without files has no Resource List, a set without changes
// yet no Change Dump Index, an archive nothing yet), and are listed once
// they are. The Change List Index always is, so the Capability List never
// changes the URI it points at for Change Lists.
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
	for _, c := range b.archiver.archives(s) {
		caps = append(caps, struct{ capability, rel string }{c + "-archive", layout.Archive(s.Name, c)})
	}
	caps = slices.DeleteFunc(caps, func(c struct{ capability, rel string }) bool { return !b.sink.Recorded(c.rel) })
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

// describedBy returns the URL of the description of set s, or of the
// Source when s is nil (§8, §9): the set's describedby, else the Source's,
// else, when the document browser is published, its page, which describes
// the Source from its own documents. "" when there is none.
func (b *lister) describedBy(s *set) string {
	switch {
	case s != nil && s.DescribedBy != "":
		return s.DescribedBy
	case b.cfg.DescribedBy != "":
		return b.cfg.DescribedBy
	case b.cfg.Publish.Viewer:
		return b.docURL(layout.ViewerPage)
	}
	return ""
}
