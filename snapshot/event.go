package snapshot

import "github.com/rsgen/rsgen/layout"

// Change is the kind of a change event.
type Change uint8

// The three kinds of change (spec §12.1).
const (
	Created Change = iota + 1
	Updated
	Deleted
)

// String returns the rs:md change value.
func (c Change) String() string {
	switch c {
	case Created:
		return "created"
	case Updated:
		return "updated"
	case Deleted:
		return "deleted"
	}
	return "unknown"
}

// Event is one change to one file, detected by one build. For creations
// and updates, Record is the file as it became; for deletions, as it was.
type Event struct {
	Change Change
	Time   int64 // Unix seconds of the build that detected it
	Record Record
}

// Diff compares the previous and the current files, both in walk order, and
// returns the change events between them in walk order, stamped with time
// now (Unix seconds). It also carries each unchanged file's first-seen time
// over into cur, and stamps new content in cur with now.
func Diff(prev, cur []Record, now int64) []Event {
	var events []Event
	i, j := 0, 0
	for i < len(prev) || j < len(cur) {
		var c int
		switch {
		case i == len(prev):
			c = 1
		case j == len(cur):
			c = -1
		default:
			c = layout.ComparePaths(prev[i].Path, cur[j].Path)
		}
		switch {
		case c < 0:
			events = append(events, Event{Change: Deleted, Time: now, Record: prev[i]})
			i++
		case c > 0:
			cur[j].Seen = now
			events = append(events, Event{Change: Created, Time: now, Record: cur[j]})
			j++
		default:
			if !SameContent(&prev[i], &cur[j]) {
				cur[j].Seen = now
				events = append(events, Event{Change: Updated, Time: now, Record: cur[j]})
			} else {
				cur[j].Seen = prev[i].Seen
			}
			i++
			j++
		}
	}
	return events
}
