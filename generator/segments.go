package generator

import (
	"time"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
)

// The names of what a journal and the archives publish, shared by the
// plan, which decides what they hold, the writers and the recovery.

// segmentKind is a kind of document written once per Change List segment:
// the Change List itself and, when enabled, the Change Dump.
type segmentKind struct {
	capability string
	index      func(set string) string
	path       func(set string, from time.Time, seq int) string
}

var (
	changeLists = segmentKind{rs.CapChangeList, layout.ChangeListIndex, layout.ChangeList}
	changeDumps = segmentKind{rs.CapChangeDump, layout.ChangeDumpIndex, layout.ChangeDump}
)

// segmentKinds returns the kinds of segment documents set s publishes.
func segmentKinds(s *set) []segmentKind {
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

// closedListed returns the closed segments of set st's journal whose
// document of a kind is published, oldest first.
func closedListed(journal []snapshot.Segment, st *set, kind segmentKind) []*snapshot.Segment {
	var segs []*snapshot.Segment
	for i := range journal {
		if seg := &journal[i]; seg.Until != 0 && listed(seg, segmentPath(kind, st.Name, seg)) {
			segs = append(segs, seg)
		}
	}
	return segs
}

// archivedCapability returns the capability of an archived document.
func archivedCapability(a *snapshot.Archived) string {
	if a.Dump {
		return rs.CapResourceDump
	}
	return rs.CapResourceList
}

// archivedPath returns the output path of an archived Resource List or
// Resource Dump.
func archivedPath(a *snapshot.Archived) string {
	if a.Dump {
		return layout.ArchivedResourceDump(a.Set, unixTime(a.At))
	}
	return layout.ArchivedResourceList(a.Set, unixTime(a.At))
}

// unixTime returns a time in Unix seconds as a UTC time; 0 is the zero
// time (an attribute left out).
func unixTime(sec int64) time.Time {
	if sec == 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0).UTC()
}

// unixOf returns a time read from a document in Unix seconds; the zero
// time (the attribute was left out) is 0.
func unixOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}
