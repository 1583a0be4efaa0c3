package generator

import (
	"fmt"
	"slices"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
)

// journalWriter writes the documents of one set's journal (journal.go):
// its Change Lists and, when enabled, its Change Dumps, segment by
// segment, and their indexes.
type journalWriter struct {
	d     docWriter
	st    *set
	links *linkIndex
	// packages are the set's Change Dump packages this build lists, in
	// the order they were published.
	packages []snapshot.Package
}

// write writes the documents of sp's journal: those of the segments this
// build closes, once, into the state archive (see kept.go), every closed
// segment's published from there, the open ones, and the indexes. It
// returns the journal with the sums of the closed documents.
func (jw *journalWriter) write(sp *setPlan) ([]snapshot.Segment, error) {
	journal := slices.Clone(sp.journal)
	for i := range sp.closed {
		if err := jw.archiveSegment(journal, &sp.closed[i]); err != nil {
			return nil, err
		}
	}
	if err := jw.publishClosed(journal); err != nil {
		return nil, err
	}
	for _, kind := range segmentKinds(jw.st) {
		if err := jw.writeIndex(journal, kind); err != nil {
			return nil, err
		}
	}
	return journal, nil
}

// archiveSegment writes the documents of a segment that this build closed
// into the state folder's archive and records their sums in the journal.
func (jw *journalWriter) archiveSegment(journal []snapshot.Segment, seg *snapshot.Segment) error {
	var kept []snapshot.Kept
	for _, kind := range segmentKinds(jw.st) {
		if !jw.holds(kind, seg) {
			continue // a Change Dump without packages (change_dump turned on late): not written
		}
		k, err := jw.d.keepDoc("closed", segmentPath(kind, jw.st.Name, seg), func(path string) error {
			_, err := jw.writeSegment(kind, path, seg)
			return err
		})
		if err != nil {
			return err
		}
		kept = append(kept, k)
	}
	for i := range journal {
		if journal[i].From == seg.From && journal[i].Seq == seg.Seq {
			journal[i].Kept = kept
		}
	}
	return nil
}

// publishClosed publishes the documents of the journal's closed segments
// from the state archive, newest first. The plan left in the journal only
// segments whose documents are whole (see dropLost).
func (jw *journalWriter) publishClosed(journal []snapshot.Segment) error {
	for i := len(journal) - 1; i >= 0; i-- {
		seg := &journal[i]
		if seg.Until == 0 {
			continue
		}
		seg.Kept = slices.Clone(seg.Kept)
		for _, kind := range segmentKinds(jw.st) {
			rel := segmentPath(kind, jw.st.Name, seg)
			k := slices.IndexFunc(seg.Kept, func(k snapshot.Kept) bool { return k.Path == rel })
			if k < 0 {
				continue // the set did not publish this kind when the segment closed
			}
			got, ok, changed, err := jw.d.k.publishKept(rel, keptSums(seg.Kept[k]))
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("closed document %s: lost from the state folder and the output folder during the build", rel)
			}
			jw.d.w.Record(rel, changed)
			setKept(seg, snapshot.Kept{Path: rel, Size: got.size, SHA256: got.sha256})
		}
	}
	return nil
}

// writeIndex writes the open document of one kind, unless it would be
// empty (an open Change Dump before the segment's first change), and the
// index over it and the closed ones, unless that would be empty (a set's
// Change Dump Index before its first change).
func (jw *journalWriter) writeIndex(journal []snapshot.Segment, kind segmentKind) error {
	s, st := jw.d.s, jw.st
	open := &journal[len(journal)-1]
	closed := closedListed(journal, st, kind)
	segs := closed
	if jw.holds(kind, open) {
		rel := segmentPath(kind, st.Name, open)
		changed, err := jw.writeSegment(kind, jw.d.w.Path(rel), open)
		if err != nil {
			return err
		}
		jw.d.w.Record(rel, changed)
		segs = append(segs, open)
	}
	if len(segs) == 0 || !publishesIndex(s, kind) {
		return nil
	}
	md := rs.MD{Capability: kind.capability, From: unixTime(segs[0].From)}
	links := append([]rs.Link{s.upLink(st)}, s.archivesLink(st, kind.capability, len(closed) > 0)...)
	return jw.d.writeDoc(kind.index(st.Name), rs.SitemapIndex, md, links, func(w *rs.Writer) error {
		for _, seg := range segs {
			e := rs.Entry{Loc: s.docURL(segmentPath(kind, st.Name, seg)), MD: rs.MD{From: unixTime(seg.From), Until: unixTime(seg.Until)}}
			if err := w.Entry(&e); err != nil {
				return err
			}
		}
		return nil
	})
}

// publishesIndex reports whether the site publishes the index of a kind
// of segment document: always, but for the Change List Index with
// [changelist] index = false.
func publishesIndex(s *site, kind segmentKind) bool {
	return kind.capability != rs.CapChangeList || s.cfg.ChangeList.Index
}

// capabilityEntry returns the output path of the document that set st's
// Capability List gives for a kind of segment document: its index, or,
// without one, the open document of journal, so that a client that reads
// the changelist entry as a Change List finds one there. The closed lists
// are then listed by the Change List Archive, which config.Validate
// requires.
func capabilityEntry(s *site, kind segmentKind, st *set, journal []snapshot.Segment) string {
	if publishesIndex(s, kind) {
		return kind.index(st.Name)
	}
	return segmentPath(kind, st.Name, &journal[len(journal)-1])
}

// holds reports whether the document of a kind of segment seg has
// entries: no document but the open Change List is published empty. The
// open Change List is, so that the Change List Index always exists (see
// doc.go); a closed one always holds events; a Change Dump holds the
// packages written while its segment was open.
func (jw *journalWriter) holds(kind segmentKind, seg *snapshot.Segment) bool {
	return kind.capability != rs.CapChangeDump || slices.ContainsFunc(jw.packages, func(p snapshot.Package) bool { return inSegment(&p, seg) })
}

// inSegment reports whether the Change Dump package p was written while
// segment seg was open.
func inSegment(p *snapshot.Package, seg *snapshot.Segment) bool {
	return p.Until >= seg.From && (seg.Until == 0 || p.Until < seg.Until)
}

// writeSegment writes the document of a kind of segment seg at path.
func (jw *journalWriter) writeSegment(kind segmentKind, path string, seg *snapshot.Segment) (bool, error) {
	if kind.capability == rs.CapChangeDump {
		return jw.writeChangeDump(path, seg)
	}
	return jw.writeChangeList(path, seg)
}

// writeChangeList writes the Change List of segment seg at path.
func (jw *journalWriter) writeChangeList(path string, seg *snapshot.Segment) (bool, error) {
	s, st := jw.d.s, jw.st
	md := rs.MD{Capability: rs.CapChangeList, From: unixTime(seg.From), Until: unixTime(seg.Until)}
	links := []rs.Link{s.upLink(st)}
	if publishesIndex(s, changeLists) {
		links = append(links, rs.Link{Rel: rs.RelIndex, Href: s.docURL(layout.ChangeListIndex(st.Name))})
	}
	return jw.d.writeXML(path, rs.URLSet, md, links, func(w *rs.Writer) error {
		for i := range seg.Events {
			ev := &seg.Events[i]
			e := changeEntry(s, ev)
			var err error
			if e.Links, err = jw.links.links(st, ev.Record, ev); err != nil {
				return err
			}
			if err := w.Entry(e); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeChangeDump writes the Change Dump of segment seg at path: the
// packages written while the segment was open.
func (jw *journalWriter) writeChangeDump(path string, seg *snapshot.Segment) (bool, error) {
	s, st := jw.d.s, jw.st
	md := rs.MD{Capability: rs.CapChangeDump, From: unixTime(seg.From), Until: unixTime(seg.Until)}
	links := []rs.Link{s.upLink(st), {Rel: rs.RelIndex, Href: s.docURL(layout.ChangeDumpIndex(st.Name))}}
	return jw.d.writeXML(path, rs.URLSet, md, links, func(w *rs.Writer) error {
		for i := range jw.packages {
			if p := &jw.packages[i]; inSegment(p, seg) {
				e := packageEntry(s, p)
				if err := w.Entry(&e); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
