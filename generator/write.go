package generator

import (
	"context"
	"slices"

	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
)

// writeBuild carries out the plan p, in the order of publication: it places
// the resources, writes the side files, restores the Change Dump packages
// carried over, keeps the versions, and writes every set's documents,
// leaves first, then the Source Description, the notifications and their
// topics (notifications.go) and the hosting files. Each
// writer takes what it renders and the sink (in d); what one writer
// returns reaches the next here, and nowhere else.
func writeBuild(ctx context.Context, prev *loaded, sc *scanned, p *buildPlan, out *placer, d docWriter, in sources) (_ *staged, err error) {
	s := d.s
	out.overTypeChange = out.typeChanges(sc.events)
	if err := out.placeAll(ctx, &sc.files, sc.places); err != nil {
		return nil, err
	}
	if err := writeStylesheet(d.w, &s.cfg.Publish); err != nil {
		return nil, err
	}
	if err := writeViewer(d.w, &s.cfg.Publish); err != nil {
		return nil, err
	}
	dm := &dumper{d: d, in: in}
	carried := make([][]carriedPackage, len(p.sets))
	for k := range p.sets {
		var err error
		if carried[k], err = dm.restore(p.sets[k].carried); err != nil {
			return nil, err
		}
	}
	vw := &versionsWriter{d: d, in: in, vp: &p.versions, now: p.now}
	versions, err := vw.write(ctx, prev.state, &sc.files)
	if err != nil {
		return nil, err
	}
	next := &snapshot.State{LastBuild: p.now, ScanStart: sc.start, BaseURL: s.base, ResourceBaseURL: s.resBase, HTMLLink: s.tags, OutputDigest: s.digest,
		Files: sc.files, Journals: map[string][]snapshot.Segment{}, SetChanged: p.setChanged, Archived: slices.Clone(p.archived)}
	if versions.file != nil {
		next.UseVersions(versions.file)
	}
	defer func() {
		if err != nil {
			next.Close() // the versions' file
		}
	}()
	links := &linkIndex{s: s, files: &sc.files, versions: &versions.links}
	for k := range p.sets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sw := setWriter{d: d, dm: dm, sc: sc, p: p, sp: &p.sets[k], links: links, next: next}
		if err := sw.write(ctx, carried[k]); err != nil {
			return nil, err
		}
	}
	if err := writeSourceDescription(d); err != nil {
		return nil, err
	}
	notes, err := prepareNotifications(s, prev.state, p, d.w)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			notes.abort()
		}
	}()
	if err := writeHosting(s, d.w, hostingFiles{journals: next.Journals, versions: versions.used, files: &sc.files, mementos: next.Versions()}); err != nil {
		return nil, err
	}
	return &staged{next: next, versions: versions, notes: notes}, nil
}

// setWriter writes the documents of one set, sp, and adds what it
// publishes to the next state.
type setWriter struct {
	d     docWriter
	dm    *dumper
	sc    *scanned
	p     *buildPlan
	sp    *setPlan
	links *linkIndex
	next  *snapshot.State
}

// write writes the set's documents, leaves first: its Change Dump
// packages and journal, its Resource List, its Resource Dump, its
// archives, and its Capability List, which links to them all. carried are
// the Change Dump packages of earlier builds it lists again.
func (sw *setWriter) write(ctx context.Context, carried []carriedPackage) error {
	sp, st := sw.sp, sw.sp.set
	var changePackages []snapshot.Package
	if st.changeDump {
		listed, err := sw.dm.list(carried)
		if err != nil {
			return err
		}
		made, err := sw.dm.writeChangePackages(ctx, sp)
		if err != nil {
			return err
		}
		changePackages = append(listed, made...)
		sw.next.Packages = append(sw.next.Packages, changePackages...)
	}
	jw := &journalWriter{d: sw.d, st: st, links: sw.links, packages: changePackages}
	journal, err := jw.write(sp)
	if err != nil {
		return err
	}
	sw.next.Journals[st.Name] = journal
	if sw.sc.members[st].Len() == 0 {
		// No document but the open Change List is published empty: the
		// Capability List of a set without files lists its Change List
		// Index only, whose Change Lists say when files come.
		return sw.writeArchivesAndCapabilities(journal)
	}
	list := resourceListing(sw.d.s, sw.sc, st, sw.links, sw.p.setChanged[st.Name])
	if err := writeResourceList(sw.d, st, list, sp.publishesSnapshots(sw.p.archived, false)); err != nil {
		return err
	}
	if err := sw.archiveSnapshot(false, list, nil); err != nil {
		return err
	}
	if st.resourceDump {
		pkgs, err := sw.dm.writeResourcePackages(ctx, sw.sc, sp)
		if err != nil {
			return err
		}
		sw.next.Packages = append(sw.next.Packages, pkgs...)
		dump := resourceDumpListing(sw.d.s, st, pkgs, sw.p.setChanged[st.Name])
		if err := writeResourceDump(sw.d, st, dump, sp.publishesSnapshots(sw.p.archived, true)); err != nil {
			return err
		}
		if err := sw.archiveSnapshot(true, dump, pkgs); err != nil {
			return err
		}
	}
	return sw.writeArchivesAndCapabilities(journal)
}

// writeArchivesAndCapabilities writes the set's archives and then its
// Capability List, which lists them.
func (sw *setWriter) writeArchivesAndCapabilities(journal []snapshot.Segment) error {
	if err := sw.writeArchives(journal); err != nil {
		return err
	}
	return writeCapabilityList(sw.d, sw.sp.set, journal)
}

// archiveSnapshot keeps a copy of the set's Resource List (or Resource
// Dump, whose packages are given), l, when the plan says one is due.
func (sw *setWriter) archiveSnapshot(dump bool, l listing, packages []snapshot.Package) error {
	if !sw.sp.snapshots[btoi(dump)] {
		return nil
	}
	a, err := archiveSnapshot(sw.d, sw.sp.set, dump, l, sw.p.now, packages)
	if err != nil {
		return err
	}
	sw.next.Archived = append(sw.next.Archived, a)
	return nil
}

// writeArchives publishes the set's archived documents that earlier
// builds kept, and writes its archives of them and of journal's closed
// segments.
func (sw *setWriter) writeArchives(journal []snapshot.Segment) error {
	st := sw.sp.set
	for _, capability := range st.archives {
		var err error
		switch capability {
		case rs.CapResourceList, rs.CapResourceDump:
			err = sw.writeSnapshotArchive(capability == rs.CapResourceDump)
		case rs.CapChangeList:
			err = writeSegmentArchive(sw.d, st, changeLists, journal)
		case rs.CapChangeDump:
			err = writeSegmentArchive(sw.d, st, changeDumps, journal)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writeSnapshotArchive publishes the set's archived Resource Lists (or
// Resource Dumps, with their packages) that the plan found whole, and
// writes the archive listing them and this build's copy.
func (sw *setWriter) writeSnapshotArchive(dump bool) error {
	var archived []snapshot.Archived
	for _, i := range sw.sp.archived {
		a := &sw.next.Archived[i]
		if a.Dump != dump {
			continue
		}
		pkgs, err := publishSnapshot(sw.d, a)
		if err != nil {
			return err
		}
		pkgs = slices.DeleteFunc(pkgs, func(p carriedPackage) bool {
			// The live Resource Dump, or another archived one, lists it too.
			return slices.ContainsFunc(sw.next.Packages, func(q snapshot.Package) bool { return q.Path == p.Path })
		})
		listed, err := sw.dm.list(pkgs)
		if err != nil {
			return err
		}
		sw.next.Packages = append(sw.next.Packages, listed...)
		archived = append(archived, *a)
	}
	for _, a := range sw.next.Archived[len(sw.p.archived):] {
		if a.Set == sw.sp.set.Name && a.Dump == dump {
			archived = append(archived, a)
		}
	}
	return writeSnapshotArchive(sw.d, sw.sp.set, dump, archived)
}
