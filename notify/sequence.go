package notify

import "time"

// Interval is a span of time [From, Until].
type Interval struct{ From, Until time.Time }

// Sequence orders the notifications of one channel by their intervals:
// each should start where the one before ended. It tells a duplicate (a
// payload seen before, or one older than what was seen: a resent
// notification is byte for byte the same) and a gap (a notification
// starting after the last one ended: some were missed, and the Change
// Lists cover them).
type Sequence struct {
	until time.Time         // of the newest notification seen, or the start
	have  bool              // until is set
	seen  map[[32]byte]bool // digests of the notifications that end at until
}

// NewSequence returns a Sequence for a Destination that holds every
// change up to since (its last pull), or knows nothing when since is
// zero.
func NewSequence(since time.Time) *Sequence {
	return &Sequence{until: since, have: !since.IsZero(), seen: map[[32]byte]bool{}}
}

// Observe takes the notification covering [from, until] whose payload has
// the given digest. It reports a duplicate, to drop, or else the gap
// before it, if any, that the Destination closes from the Change Lists.
//
// A notification of one instant (from equal to until) is a part of a
// notification split at that instant, or follows it: parts cannot be
// counted from their intervals, so Observe reports that instant as a gap.
func (s *Sequence) Observe(from, until time.Time, digest [32]byte) (duplicate bool, gap *Interval) {
	if s.have && (s.seen[digest] || until.Before(s.until)) {
		return true, nil
	}
	switch {
	case s.have && from.After(s.until):
		gap = &Interval{From: s.until, Until: from}
	case from.Equal(until):
		gap = &Interval{From: from, Until: until}
	}
	if !s.have || until.After(s.until) {
		s.until, s.have, s.seen = until, true, map[[32]byte]bool{}
	}
	s.seen[digest] = true
	return false, gap
}
