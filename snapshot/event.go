package snapshot

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
// Record points into the scan's results (or the state's), which nobody
// changes once the events are made: a build that creates every file holds
// each record once, not once more in its event.
type Event struct {
	Change Change
	Time   int64 // Unix seconds of the build that detected it
	Record *Record
}
