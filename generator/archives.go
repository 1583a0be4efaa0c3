package generator

// The archives of the ResourceSync Archives extension: documents that list
// the earlier Resource Lists, Resource Dumps, Change Lists and Change Dumps
// of a set, so that a Destination can reconstruct an earlier state or
// catch up after a long absence.
//
// Closed Change Lists and Change Dumps are archived as they are: they are
// written once anyway (documents.go). Resource Lists and Resource Dumps are
// rewritten by every build that changes their set, so a copy is kept under
// a name of its own, at most every snapshot_every; like a closed Change
// List it is written once into the state folder and published from there.
// An archived Resource Dump lists packages by their content-addressed
// names, and those packages stay published for as long as it is archived.
//
// Retention (keep) removes what is older than a duration, or beyond a
// count, in each archive, but never a document a Destination may still
// need: the open Change List, the newest closed one, the newest archived
// Resource List and Resource Dump, and any Change List needed to bring the
// oldest archived Resource List up to date. A document that leaves an
// archive leaves every document that lists it in the same build, and is
// deleted only then: nothing published ever points at a removed document.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
)

// archiveEntryBound bounds the bytes of one archive entry beyond its URI.
const archiveEntryBound = 200

// archiveState is what a build knows about its archives beyond the state.
type archiveState struct {
	// carried counts the records of b.next.Archived carried over from the
	// previous build; the ones after them are this build's snapshots.
	carried int
	// prune are the paths, relative to the state archive, of documents
	// that left their archive; they are deleted once the state is saved.
	prune []string
}

// archives returns the capabilities whose archives set s publishes, in the
// order the Capability List gives them.
func (b *builder) archives(s *set) []string {
	a := &b.cfg.Archives
	var caps []string
	if a.ResourceLists {
		caps = append(caps, rs.CapResourceList)
	}
	if a.ResourceDumps && s.WantsResourceDump(&b.cfg.Dumps) {
		caps = append(caps, rs.CapResourceDump)
	}
	if a.ChangeLists {
		caps = append(caps, rs.CapChangeList)
	}
	if a.ChangeDumps && s.WantsChangeDump(&b.cfg.Dumps) {
		caps = append(caps, rs.CapChangeDump)
	}
	return caps
}

// archivesLink returns the rel="archives" link that set s's live documents
// of a capability carry, when that capability is archived.
func (b *builder) archivesLink(s *set, capability string) []rs.Link {
	if !slices.Contains(b.archives(s), capability) {
		return nil
	}
	return []rs.Link{{Rel: rs.RelArchives, Href: b.docURL(layout.Archive(s.Name, capability))}}
}

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

// snapshotDue reports whether this build keeps set s's Resource List (or
// Resource Dump) in its archive: the first time, and then when
// snapshot_every has passed since the last copy and the set has changed.
func (b *builder) snapshotDue(s *set, dump bool) bool {
	capability := rs.CapResourceList
	if dump {
		capability = rs.CapResourceDump
	}
	if !slices.Contains(b.archives(s), capability) {
		return false
	}
	var last *snapshot.Archived
	for i := range b.next.Archived {
		if a := &b.next.Archived[i]; a.Set == s.Name && a.Dump == dump {
			last = a
		}
	}
	every := int64(b.cfg.Archives.SnapshotEvery.Seconds())
	return last == nil || last.At != b.next.SetChanged[s.Name] && b.now-last.Completed >= every
}

// snapshot keeps a copy of set s's Resource List (or Resource Dump, whose
// packages are given) when one is due: the same entries as the live
// document, written with writeSplit into the state archive, with
// completed set to this build's time.
func (b *builder) snapshot(s *set, dump bool, md rs.MD, n int, size int64, entry func(int, *rs.Entry), packages ...string) error {
	if !b.snapshotDue(s, dump) {
		return nil
	}
	a := snapshot.Archived{Set: s.Name, Dump: dump, At: b.next.SetChanged[s.Name], Completed: b.now, Packages: packages}
	md.Completed = unixTime(b.now)
	if err := b.writeSplit(s, archivedPath(&a), md, nil, n, size, entry, b.writeArchivedDoc); err != nil {
		return err
	}
	b.next.Archived = append(b.next.Archived, a)
	return nil
}

// writeArchivedDoc writes a document into the state archive, which keeps
// it for later builds, and publishes it from there.
func (b *builder) writeArchivedDoc(rel string, root rs.Root, md rs.MD, links []rs.Link, fill func(*rs.Writer) error) error {
	if _, err := b.writeXML(b.archivePath(rel), root, md, links, fill); err != nil {
		return err
	}
	if ok, err := b.publishArchived(rel); err != nil || !ok {
		return errors.Join(err, fmt.Errorf("publish %s: missing from the state archive", rel))
	}
	return nil
}

// archivePath returns the file, in the state archive, of output path rel.
func (b *builder) archivePath(rel string) string {
	return filepath.Join(b.cfg.State, archiveDir, filepath.FromSlash(rel))
}

// writeArchives publishes the archived documents of set s that earlier
// builds kept, and writes its archives.
func (b *builder) writeArchives(s *set) error {
	for _, capability := range b.archives(s) {
		var err error
		switch capability {
		case rs.CapResourceList, rs.CapResourceDump:
			err = b.writeSnapshotArchive(s, capability == rs.CapResourceDump)
		case rs.CapChangeList:
			err = b.writeSegmentArchive(s, changeLists)
		case rs.CapChangeDump:
			err = b.writeSegmentArchive(s, changeDumps)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writeSnapshotArchive publishes set s's archived Resource Lists (or
// Resource Dumps, with their packages) and writes the archive listing
// them with their at and completed.
func (b *builder) writeSnapshotArchive(s *set, dump bool) error {
	var listed []snapshot.Archived
	for i, a := range b.next.Archived {
		if a.Set != s.Name || a.Dump != dump {
			continue
		}
		if i < b.arch.carried {
			ok, err := b.publishSnapshot(&a)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
		}
		listed = append(listed, a)
	}
	capability := archivedCapability(&snapshot.Archived{Dump: dump})
	size := int64(len(listed)) * int64(len(b.base)+len(layout.SetDir(s.Name))+80+archiveEntryBound)
	md := rs.MD{Capability: capability + "-archive"}
	return b.writeSplit(s, layout.Archive(s.Name, capability), md, nil, len(listed), size, func(i int, e *rs.Entry) {
		a := &listed[i]
		*e = rs.Entry{Loc: b.docURL(archivedPath(a)), MD: rs.MD{At: unixTime(a.At), Completed: unixTime(a.Completed)}}
	}, b.writeDoc)
}

// publishSnapshot publishes an archived Resource List or Resource Dump
// that an earlier build kept, with its parts, and keeps the packages of an
// archived Resource Dump published. It reports false, after a warning,
// when the state archive has lost the document.
func (b *builder) publishSnapshot(a *snapshot.Archived) (bool, error) {
	rel := archivedPath(a)
	ok, err := b.publishArchived(rel)
	if err != nil || !ok {
		if err == nil {
			b.warn(rel, "archived document missing from the state folder; it is no longer listed in its archive")
		}
		return false, err
	}
	for n := 1; ok; n++ {
		if ok, err = b.publishArchived(layout.Part(rel, n)); err != nil {
			return false, err
		}
	}
	for _, p := range a.Packages {
		b.keepArchivedPackage(p)
	}
	return true, nil
}

// keepArchivedPackage keeps published a Resource Dump package that an
// archived Resource Dump lists, unless the live dump already does.
func (b *builder) keepArchivedPackage(path string) {
	found := func(p snapshot.Package) bool { return p.Path == path }
	if slices.ContainsFunc(b.next.Packages, found) {
		return
	}
	i := slices.IndexFunc(b.prev.Packages, found)
	if i < 0 {
		b.warn(path, "package of an archived Resource Dump unknown to the state; it cannot be made again")
		return
	}
	if _, err := os.Stat(b.outPath(path)); err != nil {
		b.warn(path, "package of an archived Resource Dump missing from the output; it cannot be made again")
		return
	}
	b.recordPackage(b.prev.Packages[i], false)
	b.recordOutput(layout.ManifestCopy(path), false)
}

// writeSegmentArchive writes set s's archive of closed Change Lists (or
// Change Dumps), in forward chronological order with from and until.
func (b *builder) writeSegmentArchive(s *set, kind segmentKind) error {
	var listed []*snapshot.Segment
	for i := range b.next.Segments {
		seg := &b.next.Segments[i]
		if seg.Until == 0 {
			continue
		}
		if _, err := os.Stat(b.archivePath(segmentPath(kind, s, seg))); err == nil {
			listed = append(listed, seg)
		}
	}
	size := int64(len(listed)) * int64(len(b.base)+len(layout.SetDir(s.Name))+80+archiveEntryBound)
	md := rs.MD{Capability: kind.capability + "-archive"}
	return b.writeSplit(s, layout.Archive(s.Name, kind.capability), md, nil, len(listed), size, func(i int, e *rs.Entry) {
		seg := listed[i]
		*e = rs.Entry{Loc: b.docURL(segmentPath(kind, s, seg)), MD: rs.MD{From: unixTime(seg.From), Until: unixTime(seg.Until)}}
	}, b.writeDoc)
}

// retain applies retention to the archives before the documents are
// written: it carries over the archived Resource Lists and Resource Dumps
// still kept, and drops the oldest closed segments that may go. What it
// drops is no longer listed anywhere by this build, and deleted from the
// state archive once the build is saved (pruneArchive).
func (b *builder) retain() {
	keep := b.cfg.Archives.Keep
	var carried []snapshot.Archived
	groups := map[[2]string][]int{} // set and capability -> indexes in carried, oldest first
	for _, a := range b.prev.Archived {
		i := slices.IndexFunc(b.sets, func(s *set) bool { return s.Name == a.Set })
		if i < 0 || !slices.Contains(b.archives(b.sets[i]), archivedCapability(&a)) {
			b.pruneSnapshot(&a) // its archive is no longer published
			continue
		}
		k := [2]string{a.Set, archivedCapability(&a)}
		groups[k] = append(groups[k], len(carried))
		carried = append(carried, a)
	}
	drop := map[int]bool{}
	for _, idx := range groups {
		for n, i := range idx {
			if expired(keep, carried[i].Completed, n, len(idx), b.now) {
				drop[i] = true
				b.pruneSnapshot(&carried[i])
			}
		}
	}
	b.next.Archived = nil
	for i, a := range carried {
		if !drop[i] {
			b.next.Archived = append(b.next.Archived, a)
		}
	}
	b.arch.carried = len(b.next.Archived)
	if keep.Forever() || !b.cfg.Archives.ChangeLists && !b.cfg.Archives.ChangeDumps {
		return
	}
	b.retainSegments(keep)
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

// retainSegments drops the oldest closed segments that retention lets go:
// never the newest closed one, and never one whose changes the oldest
// archived Resource List needs to be brought up to date. What is dropped
// is always a prefix, so that the remaining lists cover one span without
// gaps.
func (b *builder) retainSegments(keep config.Retention) {
	segs := b.next.Segments
	closed := len(segs)
	if segs[closed-1].Until == 0 {
		closed--
	}
	oldestList := int64(-1)
	for _, a := range b.next.Archived {
		if !a.Dump && (oldestList < 0 || a.At < oldestList) {
			oldestList = a.At
		}
	}
	n := 0
	for n < closed && expired(keep, segs[n].Until, n, closed, b.now) && (oldestList < 0 || segs[n].Until <= oldestList) {
		n++
	}
	for i := range n {
		for _, s := range b.sets {
			for _, kind := range []segmentKind{changeLists, changeDumps} {
				b.arch.prune = append(b.arch.prune, segmentPath(kind, s, &segs[i]))
			}
		}
	}
	b.next.Segments = slices.Clone(segs[n:])
}

// pruneSnapshot marks an archived Resource List or Resource Dump, with
// its parts, for deletion from the state archive.
func (b *builder) pruneSnapshot(a *snapshot.Archived) {
	rel := archivedPath(a)
	b.arch.prune = append(b.arch.prune, rel)
	for n := 1; ; n++ {
		part := layout.Part(rel, n)
		if _, err := os.Stat(b.archivePath(part)); err != nil {
			return
		}
		b.arch.prune = append(b.arch.prune, part)
	}
}

// pruneArchive deletes from the state archive the documents that left
// their archives. It runs after the state is saved: until then the
// previous state, which lists them, is the one in force.
func (b *builder) pruneArchive() error {
	for _, rel := range b.arch.prune {
		if err := os.Remove(b.archivePath(rel)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("prune archive: %w", err)
		}
	}
	return nil
}
