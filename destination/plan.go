package destination

import "github.com/rsgen/rsgen/rs"

// action is what a sync does about one path.
type action int

const (
	actKeep   action = iota // the file is right; nothing to do
	actRecord               // the file is right; its record changes (a new lastmod, an event applied)
	actFetch                // fetch the resource, verify it, place it
	actCheck                // a file is there that the state cannot vouch for: hash it, keep it when it matches, else fetch
	actDelete               // remove the file and its record
	actForget               // KeepDeleted: drop the record, leave the file
)

// decide says what to do about one path, from what a document wants of
// it (nil: nothing), the inventory's record of it (nil: none), whether
// the file is still the one the record describes (trusted: its stamp is
// unchanged), whether a file is there at all, and whether wants come
// from a Resource List (list: a path it lacks is deleted) or from change
// events (a path none names is left as it is). It decides without
// touching a disk, so that the rules can be read, and tested, here.
//
// A change event applies once: a record that has taken in an event as
// new as it, with bytes that match it, is kept. A file that no record
// vouches for is adopted when its bytes match the digests listed (a
// file placed just before a kill, before its journal line), never on
// a length or a date alone.
func decide(w *want, r *record, trusted, present, list, keepDeleted bool) action {
	if w == nil && !list {
		return actKeep
	}
	if w == nil || w.change == rs.ChangeDeleted {
		switch {
		case keepDeleted && r != nil:
			return actForget
		case keepDeleted || r == nil && !present:
			return actKeep
		}
		return actDelete
	}
	if !trusted {
		r = nil // the file changed behind the sync's back, or is gone: judge it by its bytes
	}
	switch {
	case w.change != "" && r != nil && applied(w, r):
		return actKeep
	case r != nil && r.matches(&w.fix):
		if w.change != "" && !w.at.Equal(r.changed) || !w.fix.lastmod.IsZero() && !w.fix.lastmod.Equal(r.lastmod) {
			return actRecord
		}
		return actKeep
	case present && w.fix.hasHash() && (r == nil || !r.knowsAlgorithmOf(&w.fix)):
		return actCheck
	}
	return actFetch
}

// applied reports whether the record has taken in the event w already:
// it took in a later one, or this one with the bytes it lists.
func applied(w *want, r *record) bool {
	switch c := r.changed.Compare(w.at); {
	case r.changed.IsZero():
		return false
	case c > 0:
		return true
	case c == 0:
		return r.matches(&w.fix) || !w.fix.hasHash() && w.fix.length < 0
	}
	return false
}
