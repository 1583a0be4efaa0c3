package generator

import (
	"errors"
	"fmt"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
)

// The writers of the archives (retention.go says what they hold).

// archiveEntryBound bounds the bytes of one archive entry beyond its URI.
const archiveEntryBound = 200

// archiveSnapshot keeps a copy of set st's Resource List, or Resource
// Dump, whose packages are given: the same entries as the live document,
// l, written with writeSplit into the state archive, with completed set to
// now, and published from there. The packages of an archived Resource Dump
// are kept in the state archive too: once the set changes, no build could
// make them again. It returns the record of the copy.
func archiveSnapshot(d docWriter, st *set, dump bool, l listing, now int64, packages []snapshot.Package) (snapshot.Archived, error) {
	a := snapshot.Archived{Set: st.Name, Dump: dump, At: unixOf(l.md.At), Completed: now, Packages: packages}
	l.md.Completed = unixTime(now)
	write := func(rel string, root rs.Root, md rs.MD, links []rs.Link, fill func(*rs.Writer) error) error {
		k, err := writeArchivedDoc(d, rel, root, md, links, fill)
		a.Docs = append(a.Docs, k)
		return err
	}
	if err := writeSplit(d.s, st, archivedPath(&a), l, nil, write, nil); err != nil {
		return a, err
	}
	for _, p := range packages {
		d.k.keepPublished(p.Path)
	}
	return a, nil
}

// writeArchivedDoc writes a document into the state archive, which keeps
// it for later builds, and publishes it from there.
func writeArchivedDoc(d docWriter, rel string, root rs.Root, md rs.MD, links []rs.Link, fill func(*rs.Writer) error) (snapshot.Kept, error) {
	k, err := d.keepDoc("archived", rel, func(path string) error {
		_, err := d.writeXML(path, root, md, links, fill)
		return err
	})
	if err != nil {
		return k, err
	}
	_, ok, changed, err := d.k.publishKept(rel, keptSums(k))
	if err != nil || !ok {
		return snapshot.Kept{}, errors.Join(err, fmt.Errorf("publish %s: missing from the state archive", rel))
	}
	d.w.Record(rel, changed)
	return k, nil
}

// publishSnapshot publishes an archived Resource List or Resource Dump
// that an earlier build kept, with its parts, from the state archive or
// the output (publishKept), and returns the packages of an archived
// Resource Dump, to be listed again. The plan found it whole.
func publishSnapshot(d docWriter, a *snapshot.Archived) ([]carriedPackage, error) {
	type published struct {
		rel     string
		changed bool
	}
	var done []published
	for _, k := range a.Docs {
		_, ok, changed, err := d.k.publishKept(k.Path, keptSums(k))
		if err == nil && !ok {
			err = fmt.Errorf("archived document %s: lost from the state folder and the output folder during the build", k.Path)
		}
		if err != nil {
			return nil, err
		}
		done = append(done, published{k.Path, changed})
	}
	var pkgs []carriedPackage
	for _, p := range a.Packages {
		_, ok, changed, err := d.k.publishKept(p.Path, sums{size: p.Length, sha256: p.SHA256})
		if err == nil && !ok {
			err = fmt.Errorf("package %s of the archived %s: lost from the state folder and the output folder during the build", p.Path, archivedPath(a))
		}
		if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, carriedPackage{p, changed})
	}
	for _, p := range done {
		d.w.Record(p.rel, p.changed)
	}
	return pkgs, nil
}

// writeSnapshotArchive writes set st's archive of Resource Lists (or
// Resource Dumps), listing those archived with their at and completed,
// unless it lists none.
func writeSnapshotArchive(d docWriter, st *set, dump bool, archived []snapshot.Archived) error {
	if len(archived) == 0 {
		return nil
	}
	capability := archivedCapability(&snapshot.Archived{Dump: dump})
	l := listing{md: rs.MD{Capability: capability + "-archive"}, n: len(archived),
		size: int64(len(archived)) * int64(len(d.s.base)+len(layout.SetDir(st.Name))+80+archiveEntryBound),
		entry: func(i int, e *rs.Entry) error {
			a := &archived[i]
			*e = rs.Entry{Loc: d.s.docURL(archivedPath(a)), MD: rs.MD{At: unixTime(a.At), Completed: unixTime(a.Completed)}}
			return nil
		}}
	return writeSplit(d.s, st, layout.Archive(st.Name, capability), l, nil, d.writeDoc, nil)
}

// writeSegmentArchive writes set st's archive of closed Change Lists (or
// Change Dumps) of its journal, in forward chronological order with from
// and until, once one is closed.
func writeSegmentArchive(d docWriter, st *set, kind segmentKind, journal []snapshot.Segment) error {
	segs := closedListed(journal, st, kind)
	if len(segs) == 0 {
		return nil // nothing closed yet: an empty archive is not published
	}
	l := listing{md: rs.MD{Capability: kind.capability + "-archive"}, n: len(segs),
		size: int64(len(segs)) * int64(len(d.s.base)+len(layout.SetDir(st.Name))+80+archiveEntryBound),
		entry: func(i int, e *rs.Entry) error {
			seg := segs[i]
			*e = rs.Entry{Loc: d.s.docURL(segmentPath(kind, st.Name, seg)), MD: rs.MD{From: unixTime(seg.From), Until: unixTime(seg.Until)}}
			return nil
		}}
	return writeSplit(d.s, st, layout.Archive(st.Name, kind.capability), l, nil, d.writeDoc, nil)
}
