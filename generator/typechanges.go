package generator

import (
	"path"

	"github.com/rsgen/rsgen/snapshot"
)

// Type changes
//
// A path can change between file and folder from one build to the next:
// the file dir replaces the folder dir/ and what it held, or the folder
// thing/ the file thing. The scan publishes the old resources as deleted
// and the new as created, as for any other paths, but the output cannot
// hold both at once, and the new resource cannot take its name before the
// old ones left. So the old files are displaced (sink.Displace: removed
// first thing at Commit), and the new resource is staged, never renamed
// into place at once, from a temporary file in the nearest folder that
// stands (sink.TempName), to be renamed once the way is clear.

// typeChanges returns the paths of this build's new resources that stand
// where an earlier build published resources of the other type, and tells
// the sink to displace those. events are the scan's, in walk order.
func (o *placer) typeChanges(events []snapshot.Event) map[string]bool {
	var created, deleted []string
	for _, ev := range events {
		switch ev.Change {
		case snapshot.Created:
			created = append(created, ev.Record.Path)
		case snapshot.Deleted:
			deleted = append(deleted, ev.Record.Path)
		}
	}
	if !o.enabled || len(created) == 0 || len(deleted) == 0 {
		return nil
	}
	gone := make(map[string]bool, len(deleted))
	under := map[string][]string{} // the deleted files below each folder
	for _, d := range deleted {
		gone[d] = true
		for dir := path.Dir(d); dir != "."; dir = path.Dir(dir) {
			under[dir] = append(under[dir], d)
		}
	}
	changed := map[string]bool{}
	for _, c := range created {
		for dir := path.Dir(c); dir != "."; dir = path.Dir(dir) {
			if gone[dir] { // a file became a folder
				o.sink.Displace(dir)
				changed[c] = true
			}
		}
		if files := under[c]; len(files) > 0 { // a folder became a file
			for _, f := range files {
				o.sink.Displace(f)
			}
			changed[c] = true
		}
	}
	return changed
}
