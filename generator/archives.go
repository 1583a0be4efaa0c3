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
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// archiver writes the archives of earlier documents.
type archiver struct {
	*run
	arch archiveState
}

// archiveEntryBound bounds the bytes of one archive entry beyond its URI.
const archiveEntryBound = 200

// archiveState is what a build knows about its archives beyond the state.
type archiveState struct {
	// carried counts the records of b.next.Archived carried over from the
	// previous build; the ones after them are this build's snapshots.
	carried int
	// published holds, by set and kind, the carried snapshots this build
	// published (publishCarried), once it has.
	published map[snapshotKind][]snapshot.Archived
	// prune are the paths, relative to the state archive, of documents
	// that left their archive; they are deleted once the state is saved.
	prune []string
}

// archives returns the capabilities whose archives set s publishes, in the
// order the Capability List gives them.
func (b *archiver) archives(s *set) []string {
	a := &b.cfg.Archives
	var caps []string
	if a.ResourceLists {
		caps = append(caps, rs.CapResourceList)
	}
	if a.ResourceDumps && s.resourceDump {
		caps = append(caps, rs.CapResourceDump)
	}
	if a.ChangeLists {
		caps = append(caps, rs.CapChangeList)
	}
	if a.ChangeDumps && s.changeDump {
		caps = append(caps, rs.CapChangeDump)
	}
	return caps
}

// archivesLink returns the rel="archives" link that set s's live documents
// of a capability carry, when that capability's archive is published: it
// is archived, and the archive lists something. It is called before the
// live document is written, and so before the snapshot of it this build
// may add (see publishes).
func (b *archiver) archivesLink(s *set, capability string) ([]rs.Link, error) {
	ok, err := b.publishes(s, capability)
	if !ok || err != nil {
		return nil, err
	}
	return []rs.Link{{Rel: rs.RelArchives, Href: b.docURL(layout.Archive(s.Name, capability))}}, nil
}

// publishes reports whether set s publishes its archive of a capability:
// an archive without entries is not published, as no empty document but
// the open Change List is. An archive of Resource Lists (or Dumps) lists
// the carried snapshots still whole and the one this build takes, when a
// snapshot is due and the set has files (an archived document would be
// empty otherwise); one of Change Lists (or Dumps), the closed segments.
func (b *archiver) publishes(s *set, capability string) (bool, error) {
	if !slices.Contains(b.archives(s), capability) {
		return false, nil
	}
	switch capability {
	case rs.CapChangeList:
		return len(b.journals.closedSegments(s, changeLists)) > 0, nil
	case rs.CapChangeDump:
		return len(b.journals.closedSegments(s, changeDumps)) > 0, nil
	}
	dump := capability == rs.CapResourceDump
	carried, err := b.publishCarried(s, dump)
	return len(carried) > 0 || b.snapshotDue(s, dump) && b.lister.members(s).Len() > 0, err
}

// snapshotKind names the archived Resource Lists, or Resource Dumps, of
// a set.
type snapshotKind struct {
	set  string
	dump bool
}

// publishCarried publishes, once per build, set s's archived Resource
// Lists (or Resource Dumps, with their packages) that earlier builds kept,
// and returns those published whole (see publishSnapshot).
func (b *archiver) publishCarried(s *set, dump bool) ([]snapshot.Archived, error) {
	key := snapshotKind{s.Name, dump}
	if listed, done := b.arch.published[key]; done {
		return listed, nil
	}
	listed := []snapshot.Archived{}
	for i, a := range b.next.Archived[:b.arch.carried] {
		if a.Set != s.Name || a.Dump != dump {
			continue
		}
		ok, err := b.publishSnapshot(&b.next.Archived[i])
		if err != nil {
			return nil, err
		}
		if ok {
			listed = append(listed, b.next.Archived[i])
		}
	}
	if b.arch.published == nil {
		b.arch.published = map[snapshotKind][]snapshot.Archived{}
	}
	b.arch.published[key] = listed
	return listed, nil
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
func (b *archiver) snapshotDue(s *set, dump bool) bool {
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

// archiveSnapshot keeps a copy of set s's Resource List (or Resource Dump, whose
// packages are given) when one is due: the same entries as the live
// document, written with writeSplit into the state archive, with
// completed set to this build's time. The packages of an archived
// Resource Dump are kept in the state archive too: once the set changes,
// no build could make them again.
func (b *archiver) archiveSnapshot(s *set, dump bool, md rs.MD, n int, size int64, entry func(int, *rs.Entry), packages ...snapshot.Package) error {
	if n == 0 || !b.snapshotDue(s, dump) {
		return nil // an archived document is never empty: a set without files has none
	}
	a := snapshot.Archived{Set: s.Name, Dump: dump, At: b.next.SetChanged[s.Name], Completed: b.now, Packages: packages}
	md.Completed = unixTime(b.now)
	write := func(rel string, root rs.Root, md rs.MD, links []rs.Link, fill func(*rs.Writer) error) error {
		k, err := b.writeArchivedDoc(rel, root, md, links, fill)
		a.Docs = append(a.Docs, k)
		return err
	}
	if err := b.lister.writeSplit(s, archivedPath(&a), md, nil, n, size, entry, write); err != nil {
		return err
	}
	for _, p := range packages {
		b.keeper.keepPublished(p.Path)
	}
	b.next.Archived = append(b.next.Archived, a)
	return nil
}

// writeArchivedDoc writes a document into the state archive, which keeps
// it for later builds, and publishes it from there.
func (b *archiver) writeArchivedDoc(rel string, root rs.Root, md rs.MD, links []rs.Link, fill func(*rs.Writer) error) (snapshot.Kept, error) {
	if _, err := b.writeXML(b.keeper.archivePath(rel), root, md, links, fill); err != nil {
		return snapshot.Kept{}, err
	}
	written, err := measure(b.keeper.archivePath(rel))
	if err != nil {
		return snapshot.Kept{}, fmt.Errorf("archived document %s: %w", b.keeper.archivePath(rel), err)
	}
	_, ok, changed, err := b.keeper.publishKept(rel, written)
	if err != nil || !ok {
		return snapshot.Kept{}, errors.Join(err, fmt.Errorf("publish %s: missing from the state archive", rel))
	}
	b.sink.Record(rel, changed)
	return snapshot.Kept{Path: rel, Size: written.size, SHA256: written.sha256}, nil
}

// writeArchives publishes the archived documents of set s that earlier
// builds kept, and writes its archives.
func (b *archiver) writeArchives(s *set) error {
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
// them with their at and completed, unless it lists none.
func (b *archiver) writeSnapshotArchive(s *set, dump bool) error {
	listed, err := b.publishCarried(s, dump)
	if err != nil {
		return err
	}
	for _, a := range b.next.Archived[b.arch.carried:] {
		if a.Set == s.Name && a.Dump == dump {
			listed = append(listed, a)
		}
	}
	if len(listed) == 0 {
		return nil
	}
	capability := archivedCapability(&snapshot.Archived{Dump: dump})
	size := int64(len(listed)) * int64(len(b.base)+len(layout.SetDir(s.Name))+80+archiveEntryBound)
	md := rs.MD{Capability: capability + "-archive"}
	return b.lister.writeSplit(s, layout.Archive(s.Name, capability), md, nil, len(listed), size, func(i int, e *rs.Entry) {
		a := &listed[i]
		*e = rs.Entry{Loc: b.docURL(archivedPath(a)), MD: rs.MD{At: unixTime(a.At), Completed: unixTime(a.Completed)}}
	}, b.writeDoc)
}

// publishSnapshot publishes an archived Resource List or Resource Dump
// that an earlier build kept, with its parts, and keeps the packages of an
// archived Resource Dump published. It reports false, after a warning,
// when it cannot be published whole: a document or a package lost or
// damaged in both the state folder and the output; it then leaves its
// archive.
func (b *archiver) publishSnapshot(a *snapshot.Archived) (bool, error) {
	docs := a.Docs
	if len(docs) == 0 {
		docs = b.legacyArchivedDocs(a)
	}
	type published struct {
		rel     string
		changed bool
	}
	var done []published
	for i, k := range docs {
		got, ok, changed, err := b.keeper.publishKept(k.Path, keptSums(k))
		if err != nil {
			return false, err
		}
		if !ok {
			b.warn(WarnLost, k.Path, "archived document lost or damaged in both the state folder and the output folder; it leaves its archive")
			return false, nil
		}
		docs[i] = snapshot.Kept{Path: k.Path, Size: got.size, SHA256: got.sha256}
		if got.sha256 == ([32]byte{}) {
			docs[i].SHA256 = k.SHA256
		}
		done = append(done, published{k.Path, changed})
	}
	var pkgs []carriedPackage
	for _, p := range a.Packages {
		pkg, ok, err := b.publishArchivedPackage(p)
		if err != nil {
			return false, err
		}
		if !ok {
			b.warn(WarnLost, archivedPath(a), fmt.Sprintf("package %s of this archived Resource Dump is lost or damaged in both the state folder and the output folder; the archived Resource Dump leaves its archive", p.Path))
			return false, nil
		}
		pkgs = append(pkgs, pkg)
	}
	for _, d := range done {
		b.sink.Record(d.rel, d.changed)
	}
	a.Docs = docs
	for i, p := range pkgs {
		a.Packages[i] = p.Package
		if slices.ContainsFunc(b.next.Packages, func(q snapshot.Package) bool { return q.Path == p.Path }) {
			continue // the live Resource Dump, or another archived one, lists it too
		}
		b.dumper.recordPackage(p.Package, p.changed)
		if err := b.dumper.ensureManifestCopy(p.Path); err != nil {
			return false, err
		}
	}
	return true, nil
}

// legacyArchivedDocs returns the documents of an archived Resource List or
// Resource Dump of a state written before format 3, which did not record
// them: the document, and its parts as far as the state archive has them.
func (b *archiver) legacyArchivedDocs(a *snapshot.Archived) []snapshot.Kept {
	rel := archivedPath(a)
	docs := []snapshot.Kept{{Path: rel}}
	for n := 1; ; n++ {
		part := layout.Part(rel, n)
		if _, err := os.Stat(b.keeper.archivePath(part)); err != nil {
			return docs
		}
		docs = append(docs, snapshot.Kept{Path: part})
	}
}

// publishArchivedPackage publishes a Resource Dump package that an archived
// Resource Dump lists, from a whole copy in the output or the state archive
// (publishKept); ok is false when neither is whole. A package
// recorded by a state written before format 3 has only its path; the rest
// comes from the state's package records.
func (b *archiver) publishArchivedPackage(p snapshot.Package) (carriedPackage, bool, error) {
	if p.Length == 0 && p.SHA256 == ([32]byte{}) {
		i := slices.IndexFunc(b.prev.Packages, func(q snapshot.Package) bool { return q.Path == p.Path })
		if i < 0 {
			return carriedPackage{}, false, nil
		}
		p = b.prev.Packages[i]
	}
	_, ok, changed, err := b.keeper.publishKept(p.Path, sums{size: p.Length, sha256: p.SHA256})
	return carriedPackage{p, changed}, ok, err
}

// writeSegmentArchive writes set s's archive of closed Change Lists (or
// Change Dumps), in forward chronological order with from and until,
// once one is closed.
func (b *archiver) writeSegmentArchive(s *set, kind segmentKind) error {
	segs := b.journals.closedSegments(s, kind)
	if len(segs) == 0 {
		return nil // nothing closed yet: an empty archive is not published
	}
	size := int64(len(segs)) * int64(len(b.base)+len(layout.SetDir(s.Name))+80+archiveEntryBound)
	md := rs.MD{Capability: kind.capability + "-archive"}
	return b.lister.writeSplit(s, layout.Archive(s.Name, kind.capability), md, nil, len(segs), size, func(i int, e *rs.Entry) {
		seg := segs[i]
		*e = rs.Entry{Loc: b.docURL(segmentPath(kind, s.Name, seg)), MD: rs.MD{From: unixTime(seg.From), Until: unixTime(seg.Until)}}
	}, b.writeDoc)
}

// retain applies retention to the archives before the documents are
// written: it carries over the archived Resource Lists and Resource Dumps
// still kept, and drops the oldest closed segments that may go. What it
// drops is no longer listed anywhere by this build, and deleted from the
// state archive once the build is saved (pruneArchive).
func (b *archiver) retain() {
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

// retainSegments drops, in each set's journal, the oldest closed segments
// that retention lets go: never the newest closed one, and never one whose
// changes the set's oldest archived Resource List needs to be brought up
// to date. What is dropped is always a prefix, so that the remaining lists
// cover one span without gaps.
func (b *archiver) retainSegments(keep config.Retention) {
	for _, s := range b.sets {
		segs := b.next.Journals[s.Name]
		closed := len(segs)
		if segs[closed-1].Until == 0 {
			closed--
		}
		oldestList := int64(-1)
		for _, a := range b.next.Archived {
			if a.Set == s.Name && !a.Dump && (oldestList < 0 || a.At < oldestList) {
				oldestList = a.At
			}
		}
		n := 0
		for n < closed && expired(keep, segs[n].Until, n, closed, b.now) && (oldestList < 0 || segs[n].Until <= oldestList) {
			n++
		}
		for i := range n {
			for _, kind := range []segmentKind{changeLists, changeDumps} {
				b.arch.prune = append(b.arch.prune, segmentPath(kind, s.Name, &segs[i]))
			}
		}
		b.next.Journals[s.Name] = slices.Clone(segs[n:])
	}
}

// pruneSnapshot marks an archived Resource List or Resource Dump, with
// its parts, for deletion from the state archive.
func (b *archiver) pruneSnapshot(a *snapshot.Archived) {
	docs := a.Docs
	if len(docs) == 0 {
		docs = b.legacyArchivedDocs(a)
	}
	for _, k := range docs {
		b.arch.prune = append(b.arch.prune, k.Path)
	}
}

// pruneArchive deletes from the state archive the documents that left
// their archives, and the folders they leave empty (a set that stops
// keeping versions left one per version time and source folder). It runs
// after the state is saved: until then the previous state, which lists
// them, is the one in force.
func (b *archiver) pruneArchive() error {
	root := filepath.Join(b.cfg.State, snapshot.ArchiveDir)
	for _, rel := range b.arch.prune {
		if _, err := sink.RemoveInFolder(root, b.keeper.archivePath(rel)); err != nil {
			return fmt.Errorf("prune archive: %w", err)
		}
	}
	return nil
}
