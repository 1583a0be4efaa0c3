package generator

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/rsgen/rsgen/snapshot"
)

// Journals
//
// Each set keeps its own journal: the Change List segments of its changes,
// oldest first. A set's open segment takes the events of its resources;
// it is closed (given "until") when it is older than the rotation period
// and holds events, or when the next event would take its lists past
// 50,000 entries or the byte limit, and a new one opens at the same
// instant. A segment without events is never closed: a closed document is
// immutable and cached for a year, and an empty one is of no use to a
// Destination (and fails the 2008 Sitemap schema). So an open Change List
// may be empty, from the set's first build, or since its last rotation,
// until the set's next change.
//
// The Change Dump packages of earlier builds are carried over first: a
// lost one closes the open segment, which then leaves the journal with
// every older one (see dropLost).

// eventBytesBound bounds the bytes one event adds to a Change List beyond
// its URI: the element markup, lastmod, datetime, three digests, length and
// type. It keeps a segment's lists under rs.MaxBytes without rendering them.
const eventBytesBound = 420

// journalPlan is what becomes of one set's journal.
type journalPlan struct {
	// events are this build's events of the set that its journal takes:
	// none when the set is published for the first time.
	events  []snapshot.Event
	journal []snapshot.Segment // the journal this build publishes, oldest first
	closed  []snapshot.Segment // the segments this build closes, with their events
	// carried are the Change Dump packages of earlier builds that the
	// journal still covers and that are whole; lostPackages is the until
	// of the newest one lost, or 0.
	carried      []snapshot.Package
	lostPackages int64
}

// planJournal brings set st's journal of the previous state prev up to
// this build, now: it takes the set's events (none for a set published
// for the first time, whose Resource List is its baseline), carries over
// the Change Dump packages the survey found whole (warning of those lost
// in n), and closes and opens segments.
func planJournal(s *site, prev *loaded, st *set, events []snapshot.Event, now int64, n *notes) journalPlan {
	var jp journalPlan
	journal, known := prev.state.Journals[st.Name]
	journal = slices.Clone(journal)
	if known {
		jp.events = setEvents(st, events)
	}
	force := false
	if known && st.changeDump {
		jp.carryChangePackages(prev, st, journal, n)
		open := snapshot.Open(journal)
		force = jp.lostPackages > 0 && open != nil && jp.lostPackages >= open.From
	}
	jp.journal, jp.closed = advanceJournal(s, now, journal, jp.events, force)
	return jp
}

// carryChangePackages finds the Change Dump packages of earlier builds of
// set st that its journal still covers, whole in the output or the state
// archive, and notes the until of the newest one that is lost.
func (jp *journalPlan) carryChangePackages(prev *loaded, st *set, journal []snapshot.Segment, n *notes) {
	for _, pkg := range prev.state.Packages {
		if !coveredChangePackage(&pkg, st, journal) {
			continue
		}
		if _, ok := prev.kept.whole(pkg.Path); !ok {
			n.warn(WarnLost, pkg.Path, "Change Dump package lost or damaged in both the state folder and the output folder; it cannot be made again")
			jp.lostPackages = max(jp.lostPackages, pkg.Until)
			continue
		}
		jp.carried = append(jp.carried, pkg)
	}
}

// inJournalOrder returns a build's events, in walk order, in the order
// of its Change Lists (deletionsFirst): events itself when they are in
// it already, a sorted copy otherwise, since the walk order is the one
// the build reports.
func inJournalOrder(events []snapshot.Event) []snapshot.Event {
	if slices.IsSortedFunc(events, deletionsFirst) {
		return events
	}
	ordered := slices.Clone(events)
	slices.SortStableFunc(ordered, deletionsFirst)
	return ordered
}

// deletionsFirst orders a build's events for its Change Lists and Change
// Dumps: its deletions before its creations and updates, each in walk
// order. The events of one build share one datetime, so the specification
// lets them come in any order, but a Destination applies them in the
// document's: a folder dir turned into a file dir is "deleted dir/b.txt"
// and "created dir", and no Destination can write the file dir while the
// folder still holds b.txt (walk order puts dir first). Recovery keeps
// the order it reads (see recoverJournal): a path has one event per build.
func deletionsFirst(x, y snapshot.Event) int {
	rank := func(ev snapshot.Event) int {
		if ev.Change == snapshot.Deleted {
			return 0
		}
		return 1
	}
	return cmp.Compare(rank(x), rank(y))
}

// advanceJournal brings one set's journal up to now: it closes the open
// segment when its period is over and it holds events (or force says so),
// appends the set's events, closing and opening segments at the size
// limits, and returns the journal and the segments it closed.
func advanceJournal(s *site, now int64, segs []snapshot.Segment, events []snapshot.Event, force bool) ([]snapshot.Segment, []snapshot.Segment) {
	var closed []snapshot.Segment
	closeOpen := func() {
		open := &segs[len(segs)-1]
		open.Until = now
		closed = append(closed, *open)
		open.Events = nil
		seq := 0
		if open.From == now {
			seq = open.Seq + 1
		}
		segs = append(segs, snapshot.Segment{From: now, Seq: seq})
	}
	if snapshot.Open(segs) == nil {
		segs = append(segs, opening(segs, now))
	}
	if force || rotationDue(s, snapshot.Open(segs), now) {
		closeOpen()
	}
	size := segmentBytes(s, snapshot.Open(segs).Events)
	for start := 0; start < len(events); {
		open := snapshot.Open(segs)
		end := start
		for ; end < len(events); end++ {
			add := eventBytes(s, &events[end])
			if held := len(open.Events) + end - start; held > 0 && (held >= s.opts.limits.entries || size+add > s.opts.limits.bytes-4096) {
				break
			}
			size += add
		}
		if end == start { // the open segment is full
			closeOpen()
			size = 0
			continue
		}
		open.Events = appendEvents(open.Events, events[start:end:end])
		start = end
	}
	return segs, closed
}

// appendEvents appends run to a segment's events: run itself, whose
// capacity ends at its end, when the segment has none, so that a build's
// events are not copied once more into its journal.
func appendEvents(events, run []snapshot.Event) []snapshot.Event {
	if len(events) == 0 {
		return run
	}
	return append(events, run...)
}

// rotationDue reports whether the open segment is closed at now for its
// age: it is older than the rotation period, and holds events.
func rotationDue(s *site, open *snapshot.Segment, now int64) bool {
	rotate := int64(s.cfg.ChangeList.Rotate.Seconds())
	return rotate > 0 && now-open.From >= rotate && len(open.Events) > 0
}

// opening returns the segment that opens after the closed ones of a
// journal: where the last one closed, so that the lists leave no gap (a
// journal rebuilt from an output whose open list a killed build closed),
// or at now in a journal's first build.
func opening(closed []snapshot.Segment, now int64) snapshot.Segment {
	if len(closed) == 0 {
		return snapshot.Segment{From: now}
	}
	last := closed[len(closed)-1]
	next := snapshot.Segment{From: last.Until}
	if last.From == last.Until {
		next.Seq = last.Seq + 1
	}
	return next
}

// eventBytes bounds the bytes ev adds to a Change List.
func eventBytes(s *site, ev *snapshot.Event) int64 {
	// A URI is at most three times the path's length once percent-encoded.
	return int64(len(s.resBase) + 3*len(ev.Record.Path) + eventBytesBound)
}

func segmentBytes(s *site, events []snapshot.Event) int64 {
	var n int64
	for i := range events {
		n += eventBytes(s, &events[i])
	}
	return n
}

// dropLost keeps set st's journal from listing what cannot be published
// whole, as kept found it. A closed segment whose documents, or whose
// Change Dump's packages, are lost (the state's copy and the output's both
// lost or damaged) leaves the journal with every older segment, with a
// warning in n: the set's indexes then start later, as after retention,
// without a gap, and never list a broken document. The segments this
// build closes are whole: it writes them. Of the others, the sums of the
// copies found are learnt. It returns the files that leave the state
// archive.
func (jp *journalPlan) dropLost(kept *keptSurvey, st *set, n *notes) (pruned []string) {
	journal := jp.journal
	lost := -1
	for i := len(journal) - 1; i >= 0 && lost < 0; i-- {
		seg := &journal[i]
		if seg.Until == 0 {
			continue
		}
		if seg.Until > jp.lostPackages && jp.lostPackages >= seg.From {
			lost = i
			break
		}
		if slices.ContainsFunc(jp.closed, func(c snapshot.Segment) bool { return c.From == seg.From && c.Seq == seg.Seq }) {
			continue // written by this build
		}
		seg.Kept = slices.Clone(seg.Kept) // the previous state's, which the plan does not change
		for _, kind := range segmentKinds(st) {
			rel := segmentPath(kind, st.Name, seg)
			if _, written := kept.segmentDoc(seg, rel); !written {
				continue // the set did not publish this kind when the segment closed
			}
			got, ok := kept.whole(rel)
			if !ok {
				lost = i
				break
			}
			setKept(seg, snapshot.Kept{Path: rel, Size: got.size, SHA256: got.sha256})
		}
	}
	if lost < 0 {
		return nil
	}
	var names []string
	for i := 0; i <= lost; i++ {
		for _, kind := range []segmentKind{changeLists, changeDumps} {
			rel := segmentPath(kind, st.Name, &journal[i])
			pruned = append(pruned, rel)
			if i == lost {
				names = append(names, rel)
			}
		}
	}
	n.warn(WarnLost, "", fmt.Sprintf("set %s: the closed documents %s, or a package of theirs, are lost or damaged in both the state folder and the output folder; they leave the Change List and Change Dump indexes with the %d segments before them, so that no broken document is published (Destinations that had not read them start again from the Resource List)",
		st.Name, strings.Join(names[:1], ", "), lost))
	jp.journal = journal[lost+1:]
	return pruned
}
