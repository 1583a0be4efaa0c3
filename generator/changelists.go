package generator

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
)

// segmentKind is a kind of document written once per Change List segment:
// the Change List itself and, when enabled, the Change Dump.
type segmentKind struct {
	capability string
	index      func(set string) string
	path       func(set string, from time.Time, seq int) string
	write      func(r *run, path string, s *set, seg *snapshot.Segment) (bool, error)
	// holds reports whether the document of segment seg has entries: no
	// document but the open Change List is published empty.
	holds func(r *run, s *set, seg *snapshot.Segment) bool
}

var (
	changeLists = segmentKind{rs.CapChangeList, layout.ChangeListIndex, layout.ChangeList,
		func(r *run, path string, s *set, seg *snapshot.Segment) (bool, error) {
			return r.lister.writeChangeList(path, s, seg)
		},
		// The open Change List is published even empty, so that the
		// Change List Index always exists (see doc.go); a closed one
		// always holds events.
		func(*run, *set, *snapshot.Segment) bool { return true }}
	changeDumps = segmentKind{rs.CapChangeDump, layout.ChangeDumpIndex, layout.ChangeDump,
		func(r *run, path string, s *set, seg *snapshot.Segment) (bool, error) {
			return r.dumper.writeChangeDump(path, s, seg)
		},
		func(r *run, s *set, seg *snapshot.Segment) bool { return len(r.dumper.changePackagesOf(s, seg)) > 0 }}
)

// segmentKinds returns the kinds of segment documents set s publishes.
func (b *journals) segmentKinds(s *set) []segmentKind {
	if s.changeDump {
		return []segmentKind{changeLists, changeDumps}
	}
	return []segmentKind{changeLists}
}

// segmentPath returns the output path of a set's document of a kind for
// segment seg.
func segmentPath(kind segmentKind, set string, seg *snapshot.Segment) string {
	return kind.path(set, unixTime(seg.From), seg.Seq)
}

// writeJournalDocs writes set s's Change Lists and Change Dumps: the
// Change Dump packages of this build, the documents of the segments this
// build closed (into the state archive, from which they are published, see
// kept.go), every closed segment's documents, the open ones, and the
// indexes.
func (b *journals) writeJournalDocs(ctx context.Context, s *set, closed []snapshot.Segment) error {
	if s.changeDump {
		if err := b.dumper.listCarriedPackages(s); err != nil {
			return err
		}
		if err := b.dumper.writeChangePackages(ctx, s, b.setEvents[s.Name]); err != nil {
			return err
		}
	}
	for i := range closed {
		if err := b.archiveSegment(s, &closed[i]); err != nil {
			return err
		}
	}
	if err := b.publishJournal(s); err != nil {
		return err
	}
	for _, kind := range b.segmentKinds(s) {
		if err := b.writeSegmentIndex(s, kind); err != nil {
			return err
		}
	}
	return nil
}

// archiveSegment writes the documents of a segment that this build closed
// into the state folder's archive and records their checksums in the
// set's journal.
func (b *journals) archiveSegment(s *set, seg *snapshot.Segment) error {
	var kept []snapshot.Kept
	for _, kind := range b.segmentKinds(s) {
		if !kind.holds(b.run, s, seg) {
			continue // a Change Dump without packages (change_dump turned on late): not written
		}
		rel := segmentPath(kind, s.Name, seg)
		if _, err := kind.write(b.run, b.keeper.archivePath(rel), s, seg); err != nil {
			return err
		}
		sum, err := measure(b.keeper.archivePath(rel))
		if err != nil {
			return fmt.Errorf("closed document %s: %w", b.keeper.archivePath(rel), err)
		}
		kept = append(kept, snapshot.Kept{Path: rel, Size: sum.size, SHA256: sum.sha256})
	}
	journal := b.next.Journals[s.Name]
	for i := range journal {
		if journal[i].From == seg.From && journal[i].Seq == seg.Seq {
			journal[i].Kept = kept
		}
	}
	return nil
}

// publishJournal publishes the documents of set s's closed segments from
// the state archive. A segment whose documents, or whose Change Dump's
// packages, can no longer be published whole (the state's copy and the
// output's both lost or damaged) leaves the journal with every older
// segment, with a warning: the set's indexes then start later, as after
// retention, without a gap, and never list a broken document.
func (b *journals) publishJournal(s *set) error {
	journal := b.next.Journals[s.Name]
	lost := -1
	for i := len(journal) - 1; i >= 0 && lost < 0; i-- {
		seg := &journal[i]
		if seg.Until == 0 {
			continue
		}
		if seg.Until > b.dumper.lostPackages[s.Name] && b.dumper.lostPackages[s.Name] >= seg.From {
			lost = i
			break
		}
		for _, kind := range b.segmentKinds(s) {
			rel := segmentPath(kind, s.Name, seg)
			k, written := b.keptEntry(seg, rel)
			if !written {
				continue // the set did not publish this kind when the segment closed
			}
			got, ok, changed, err := b.keeper.publishKept(rel, keptSums(k))
			if err != nil {
				return err
			}
			if !ok {
				lost = i
				break
			}
			b.sink.Record(rel, changed)
			setKept(seg, snapshot.Kept{Path: rel, Size: got.size, SHA256: got.sha256})
		}
	}
	if lost < 0 {
		return nil
	}
	var names []string
	for i := 0; i <= lost; i++ {
		for _, kind := range []segmentKind{changeLists, changeDumps} {
			rel := segmentPath(kind, s.Name, &journal[i])
			b.archiver.arch.prune = append(b.archiver.arch.prune, rel)
			if i == lost {
				names = append(names, rel)
			}
		}
	}
	b.warn(WarnLost, "", fmt.Sprintf("set %s: the closed documents %s, or a package of theirs, are lost or damaged in both the state folder and the output folder; they leave the Change List and Change Dump indexes with the %d segments before them, so that no broken document is published (Destinations that had not read them start again from the Resource List)",
		s.Name, strings.Join(names[:1], ", "), lost))
	b.next.Journals[s.Name] = journal[lost+1:]
	return nil
}

// keptEntry returns the record of a segment's kept document at rel, and
// whether the document was written at all. A segment of a state written
// before format 3 has no records: its documents were written if either
// folder holds them, and their sums are unknown.
func (b *journals) keptEntry(seg *snapshot.Segment, rel string) (snapshot.Kept, bool) {
	for _, k := range seg.Kept {
		if k.Path == rel {
			return k, true
		}
	}
	if len(seg.Kept) > 0 {
		return snapshot.Kept{}, false
	}
	_, inState := os.Stat(b.keeper.archivePath(rel))
	_, inOutput := os.Stat(b.sink.Path(rel))
	return snapshot.Kept{Path: rel}, inState == nil || inOutput == nil
}

// setKept records the sums of a segment's kept document; a digest learnt
// earlier is not forgotten when this build trusted the file by its stat.
func setKept(seg *snapshot.Segment, k snapshot.Kept) {
	for i := range seg.Kept {
		if seg.Kept[i].Path == k.Path {
			if k.SHA256 == ([32]byte{}) {
				k.SHA256 = seg.Kept[i].SHA256
			}
			seg.Kept[i] = k
			return
		}
	}
	seg.Kept = append(seg.Kept, k)
}

// listed reports whether the journal's segment seg lists a document at
// rel: the open segment always does, a closed one when it was written.
func listed(seg *snapshot.Segment, rel string) bool {
	if seg.Until == 0 {
		return true
	}
	for _, k := range seg.Kept {
		if k.Path == rel {
			return true
		}
	}
	return false
}

// closedSegments returns the closed segments of set s whose document of
// a kind is published, oldest first.
func (b *journals) closedSegments(s *set, kind segmentKind) []*snapshot.Segment {
	var segs []*snapshot.Segment
	journal := b.next.Journals[s.Name]
	for i := range journal {
		if seg := &journal[i]; seg.Until != 0 && listed(seg, segmentPath(kind, s.Name, seg)) {
			segs = append(segs, seg)
		}
	}
	return segs
}

// writeSegmentIndex writes the open document of one kind of set s, unless
// it would be empty (an open Change Dump before the segment's first
// change), and the index over it and the closed ones, unless that would be
// empty (a set's Change Dump Index before its first change).
func (b *journals) writeSegmentIndex(s *set, kind segmentKind) error {
	journal := b.next.Journals[s.Name]
	open := &journal[len(journal)-1]
	segs := b.closedSegments(s, kind)
	if kind.holds(b.run, s, open) {
		rel := segmentPath(kind, s.Name, open)
		changed, err := kind.write(b.run, b.sink.Path(rel), s, open)
		if err != nil {
			return err
		}
		b.sink.Record(rel, changed)
		segs = append(segs, open)
	}
	if len(segs) == 0 {
		return nil
	}
	md := rs.MD{Capability: kind.capability, From: unixTime(segs[0].From)}
	archives, err := b.archiver.archivesLink(s, kind.capability)
	if err != nil {
		return err
	}
	return b.writeDoc(kind.index(s.Name), rs.SitemapIndex, md, append([]rs.Link{b.upLink(s)}, archives...), func(w *rs.Writer) error {
		for _, seg := range segs {
			e := rs.Entry{Loc: b.docURL(segmentPath(kind, s.Name, seg)), MD: rs.MD{From: unixTime(seg.From), Until: unixTime(seg.Until)}}
			if err := w.Entry(&e); err != nil {
				return err
			}
		}
		return nil
	})
}
