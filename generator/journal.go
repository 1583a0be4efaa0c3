package generator

import (
	"cmp"
	"slices"

	"github.com/rsgen/rsgen/snapshot"
)

// journals keeps the Change List and Change Dump segments of each set
// (here and in changelists.go).
type journals struct {
	*run
	setEvents map[string][]snapshot.Event // this build's events, per set whose journal takes them
}

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

// eventBytesBound bounds the bytes one event adds to a Change List beyond
// its URI: the element markup, lastmod, datetime, three digests, length and
// type. It keeps a segment's lists under rs.MaxBytes without rendering them.
const eventBytesBound = 420

// advanceJournals brings every set's journal up to this build and returns,
// per set name, the segments this build closed, with their events, so
// that their documents can be written once. A set published for the first
// time starts a journal of its own at this build, whose Resource List is
// its baseline: its events are not replayed. The Change Dump packages of
// earlier builds are carried over first: a lost one closes the open
// segment, which then leaves the journal (see publishJournal).
func (b *journals) advanceJournals(events []snapshot.Event) (map[string][]snapshot.Segment, error) {
	closed := map[string][]snapshot.Segment{}
	b.next.Journals = map[string][]snapshot.Segment{}
	b.setEvents = map[string][]snapshot.Event{}
	b.dumper.lostPackages = map[string]int64{}
	for _, s := range b.sets {
		journal, known := b.prev.Journals[s.Name]
		journal = slices.Clone(journal)
		if known {
			for _, ev := range events {
				if s.Contains(ev.Record.Path) {
					b.setEvents[s.Name] = append(b.setEvents[s.Name], ev)
				}
			}
			slices.SortStableFunc(b.setEvents[s.Name], deletionsFirst)
		}
		force := false
		if known && s.changeDump {
			lost, err := b.dumper.carryChangePackages(s, journal)
			if err != nil {
				return nil, err
			}
			b.dumper.lostPackages[s.Name] = lost
			open := snapshot.Open(journal)
			force = lost > 0 && open != nil && lost >= open.From
		}
		journal, closed[s.Name] = b.advanceJournal(journal, b.setEvents[s.Name], force)
		b.next.Journals[s.Name] = journal
	}
	return closed, nil
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

// advanceJournal brings one set's journal up to this build: it closes the
// open segment when its period is over and it holds events (or force says
// so), appends the set's events, closing and opening segments at the size
// limits, and returns the journal and the segments it closed.
func (b *journals) advanceJournal(segs []snapshot.Segment, events []snapshot.Event, force bool) ([]snapshot.Segment, []snapshot.Segment) {
	var closed []snapshot.Segment
	closeOpen := func() {
		open := &segs[len(segs)-1]
		open.Until = b.now
		closed = append(closed, *open)
		open.Events = nil
		seq := 0
		if open.From == b.now {
			seq = open.Seq + 1
		}
		segs = append(segs, snapshot.Segment{From: b.now, Seq: seq})
	}
	if snapshot.Open(segs) == nil {
		segs = append(segs, opening(segs, b.now))
	}
	open := snapshot.Open(segs)
	rotate := int64(b.cfg.ChangeList.Rotate.Seconds())
	if force || rotate > 0 && b.now-open.From >= rotate && len(open.Events) > 0 {
		closeOpen()
	}
	size := b.segmentBytes(snapshot.Open(segs).Events)
	for _, ev := range events {
		open := snapshot.Open(segs)
		add := b.eventBytes(&ev)
		if len(open.Events) > 0 && (len(open.Events) >= b.opts.limits.entries || size+add > b.opts.limits.bytes-4096) {
			closeOpen()
			open, size = snapshot.Open(segs), 0
		}
		open.Events = append(open.Events, ev)
		size += add
	}
	return segs, closed
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
func (b *journals) eventBytes(ev *snapshot.Event) int64 {
	// A URI is at most three times the path's length once percent-encoded.
	return int64(len(b.resBase) + 3*len(ev.Record.Path) + eventBytesBound)
}

func (b *journals) segmentBytes(events []snapshot.Event) int64 {
	var n int64
	for i := range events {
		n += b.eventBytes(&events[i])
	}
	return n
}

// migrateShared turns the segments of a state written before format 3,
// shared by all sets, into one journal per set that state published, each
// with the events of its own resources: the journals every later build
// keeps. The closed documents stay as they were written, in the state's
// archive; their checksums are learnt the first time they are published.
func (b *journals) migrateShared(st *snapshot.State) {
	if st.Shared == nil {
		return
	}
	st.Journals = map[string][]snapshot.Segment{}
	for _, s := range b.sets {
		if _, published := st.SetChanged[s.Name]; !published {
			continue
		}
		journal := make([]snapshot.Segment, len(st.Shared))
		for i, seg := range st.Shared {
			seg.Events = slices.DeleteFunc(slices.Clone(seg.Events), func(ev snapshot.Event) bool { return !s.Contains(ev.Record.Path) })
			journal[i] = seg
		}
		st.Journals[s.Name] = journal
	}
	st.Shared = nil
}
