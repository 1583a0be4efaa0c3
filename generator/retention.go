package generator

// The archives of the ResourceSync Archives extension: documents that list
// the earlier Resource Lists, Resource Dumps, Change Lists and Change Dumps
// of a set, so that a Destination can reconstruct an earlier state or
// catch up after a long absence.
//
// Closed Change Lists and Change Dumps are archived as they are: they are
// written once anyway (changelists.go). Resource Lists and Resource Dumps
// are rewritten by every build that changes their set, so a copy is kept
// under a name of its own, at most every snapshot_every; like a closed
// Change List it is written once into the state folder and published from
// there. An archived Resource Dump lists packages by their
// content-addressed names, and those packages stay published for as long
// as it is archived.
//
// Retention (keep) removes what is older than a duration, or beyond a
// count, in each archive, but never a document a Destination may still
// need: the open Change List, the newest closed one, the newest archived
// Resource List and Resource Dump, and any Change List needed to bring the
// oldest archived Resource List up to date. A document that leaves an
// archive leaves every document that lists it in the same build, and is
// deleted only then: nothing published ever points at a removed document.
//
// Here the plan decides what the archives hold (plan.go calls these);
// archives.go writes them.

import (
	"fmt"
	"slices"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/snapshot"
)

// retainArchived applies retention to the archived Resource Lists and
// Resource Dumps of the previous state prev, now: it returns those still
// kept, oldest first, and the files of those that go, which leave the
// state archive once the build is saved.
func retainArchived(s *site, prev *loaded, now int64) (archived []snapshot.Archived, pruned []string) {
	keep := s.cfg.Archives.Keep
	var carried []snapshot.Archived
	groups := map[[2]string][]int{} // set and capability -> indexes in carried, oldest first
	for _, a := range prev.state.Archived {
		i := slices.IndexFunc(s.sets, func(st *set) bool { return st.Name == a.Set })
		if i < 0 || !slices.Contains(s.sets[i].archives, archivedCapability(&a)) {
			pruned = append(pruned, snapshotFiles(prev.kept, &a)...) // its archive is no longer published
			continue
		}
		k := [2]string{a.Set, archivedCapability(&a)}
		groups[k] = append(groups[k], len(carried))
		carried = append(carried, a)
	}
	drop := map[int]bool{}
	for _, idx := range groups {
		for n, i := range idx {
			if expired(keep, carried[i].Completed, n, len(idx), now) {
				drop[i] = true
				pruned = append(pruned, snapshotFiles(prev.kept, &carried[i])...)
			}
		}
	}
	for i, a := range carried {
		if !drop[i] {
			archived = append(archived, a)
		}
	}
	return archived, pruned
}

// retainsSegments reports whether retention lets closed segments go.
func retainsSegments(s *site) bool {
	return !s.cfg.Archives.Keep.Forever() && (s.cfg.Archives.ChangeLists || s.cfg.Archives.ChangeDumps)
}

// expired reports whether the n-th (from 0) oldest of count documents of
// one archive, archived at t, leaves it. The newest never does.
func expired(keep config.Retention, t int64, n, count int, now int64) bool {
	switch {
	case n == count-1 || keep.Forever():
		return false
	case keep.Count > 0:
		return n < count-keep.Count
	}
	return t < now-int64(keep.Age.Seconds())
}

// retainSegments drops, in set st's journal, the oldest closed segments
// that retention lets go by now: never the newest closed one, and never
// one whose changes the set's oldest archived Resource List (of archived)
// needs to be brought up to date. What is dropped is always a prefix, so
// that the remaining lists cover one span without gaps. It returns the
// journal and the files that leave the state archive.
func retainSegments(keep config.Retention, st *set, segs []snapshot.Segment, archived []snapshot.Archived, now int64) ([]snapshot.Segment, []string) {
	closed := len(segs)
	if segs[closed-1].Until == 0 {
		closed--
	}
	oldestList := int64(-1)
	for _, a := range archived {
		if a.Set == st.Name && !a.Dump && (oldestList < 0 || a.At < oldestList) {
			oldestList = a.At
		}
	}
	n := 0
	for n < closed && expired(keep, segs[n].Until, n, closed, now) && (oldestList < 0 || segs[n].Until <= oldestList) {
		n++
	}
	var pruned []string
	for i := range n {
		for _, kind := range []segmentKind{changeLists, changeDumps} {
			pruned = append(pruned, segmentPath(kind, st.Name, &segs[i]))
		}
	}
	return slices.Clone(segs[n:]), pruned
}

// snapshotFiles returns the files of an archived Resource List or
// Resource Dump: its document and parts.
func snapshotFiles(kept *keptSurvey, a *snapshot.Archived) []string {
	var files []string
	for _, k := range kept.archivedDocs(a) {
		files = append(files, k.Path)
	}
	return files
}

// snapshotDue reports whether this build, now, keeps a copy of set st's
// Resource List (or Resource Dump) in its archive, given those archived
// and the time the set last changed: the first time, and then when
// snapshot_every has passed since the last copy and the set has changed.
func snapshotDue(s *site, st *set, dump bool, archived []snapshot.Archived, changed, now int64) bool {
	if !slices.Contains(st.archives, archivedCapability(&snapshot.Archived{Dump: dump})) {
		return false
	}
	var last *snapshot.Archived
	for i := range archived {
		if a := &archived[i]; a.Set == st.Name && a.Dump == dump {
			last = a
		}
	}
	every := int64(s.cfg.Archives.SnapshotEvery.Seconds())
	return last == nil || last.At != changed && now-last.Completed >= every
}

// publishArchived decides which of set st's archived Resource Lists and
// Resource Dumps of archived, carried over, are published again: those
// whose documents and packages are whole in the state folder or the
// output. One that is not leaves its archive, with a warning in n. It
// returns their indexes in archived.
func publishArchived(prev *loaded, st *set, archived []snapshot.Archived, n *notes) []int {
	var published []int
	for _, dump := range []bool{false, true} {
		if !slices.Contains(st.archives, archivedCapability(&snapshot.Archived{Dump: dump})) {
			continue
		}
		for i := range archived {
			if a := &archived[i]; a.Set == st.Name && a.Dump == dump && wholeArchived(prev, a, n) {
				published = append(published, i)
			}
		}
	}
	return published
}

// wholeArchived reports whether an archived Resource List or Resource
// Dump is whole, after a warning in n when it is not; of one that is, it
// learns the sums of its documents (and, of a state written before format
// 3, the documents themselves and the whole records of its packages).
func wholeArchived(prev *loaded, a *snapshot.Archived, n *notes) bool {
	docs := prev.kept.archivedDocs(a)
	learnt := slices.Clone(docs)
	for i, k := range docs {
		got, ok := prev.kept.whole(k.Path)
		if !ok {
			n.warn(WarnLost, k.Path, "archived document lost or damaged in both the state folder and the output folder; it leaves its archive")
			return false
		}
		learnt[i] = snapshot.Kept{Path: k.Path, Size: got.size, SHA256: got.sha256}
		if got.sha256 == ([32]byte{}) {
			learnt[i].SHA256 = k.SHA256
		}
	}
	pkgs := make([]snapshot.Package, len(a.Packages))
	for i, pkg := range a.Packages {
		whole, known := archivedPackage(prev.state, pkg)
		if _, ok := prev.kept.whole(whole.Path); !known || !ok {
			n.warn(WarnLost, archivedPath(a), fmt.Sprintf("package %s of this archived Resource Dump is lost or damaged in both the state folder and the output folder; the archived Resource Dump leaves its archive", pkg.Path))
			return false
		}
		pkgs[i] = whole
	}
	a.Docs, a.Packages = learnt, pkgs
	return true
}
