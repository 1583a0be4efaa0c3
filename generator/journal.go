package generator

import "github.com/rsgen/rsgen/snapshot"

// eventBytesBound bounds the bytes one event adds to a Change List beyond
// its URI: the element markup, lastmod, datetime, three digests, length and
// type. It keeps a segment's lists under rs.MaxBytes without rendering them.
const eventBytesBound = 420

// advanceJournal brings the Change List segments up to this build: it
// closes the open segment when its period is over, appends the build's
// events, closing and opening segments at the size limits, and returns the
// segments it closed, with their events, so that their lists can be
// written once.
func (b *builder) advanceJournal(events []snapshot.Event) []snapshot.Segment {
	segs := b.next.Segments
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
	if len(segs) == 0 || segs[len(segs)-1].Until != 0 {
		segs = append(segs, snapshot.Segment{From: b.now})
	}
	if rotate := int64(b.cfg.ChangeList.Rotate.Seconds()); rotate > 0 && b.now-segs[len(segs)-1].From >= rotate {
		closeOpen()
	}
	size := b.segmentBytes(segs[len(segs)-1].Events)
	for _, ev := range events {
		open := &segs[len(segs)-1]
		add := b.eventBytes(&ev)
		if len(open.Events) >= b.opts.limits.entries || size+add > b.opts.limits.bytes-4096 {
			closeOpen()
			open, size = &segs[len(segs)-1], 0
		}
		open.Events = append(open.Events, ev)
		size += add
	}
	b.next.Segments = segs
	return closed
}

// eventBytes bounds the bytes ev adds to a Change List.
func (b *builder) eventBytes(ev *snapshot.Event) int64 {
	// A URI is at most three times the path's length once percent-encoded.
	return int64(len(b.resBase) + 3*len(ev.Record.Path) + eventBytesBound)
}

func (b *builder) segmentBytes(events []snapshot.Event) int64 {
	var n int64
	for i := range events {
		n += b.eventBytes(&events[i])
	}
	return n
}
