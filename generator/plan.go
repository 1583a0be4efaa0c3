package generator

import (
	"slices"

	"github.com/rsgen/rsgen/snapshot"
)

// buildPlan is what a build makes of every document, package, version and
// archive, decided by plan from the site, the previous state and the scan
// before anything is written: the write stage carries it out.
type buildPlan struct {
	now int64
	// events are the events this build publishes, in the order of its
	// Change Lists (deletionsFirst): none in a first build, whose
	// Resource List is the baseline; its Change List opens empty at the
	// same time (§12.1).
	events []snapshot.Event
	sets   []setPlan // in the order of the site's sets
	// archived are the archived Resource Lists and Resource Dumps carried
	// over, retention applied, oldest first; this build's copies follow
	// them in the next state.
	archived []snapshot.Archived
	// setChanged holds, per set, the time of the last build that changed
	// it: its Resource List's at.
	setChanged map[string]int64
	versions   versionPlan
	// prune are the files of the state archive that leave it once the
	// state is saved: of a rebase, of retention, of what was lost.
	prune []string
	// notes are what the plan tells: the files lost, the dumps split.
	notes notes
}

// setPlan is what becomes of one set's documents.
type setPlan struct {
	set *set
	journalPlan
	// changePackages and resourcePackages are the packages of this
	// build's Change Dump and of the Resource Dump.
	changePackages, resourcePackages []plannedPackage
	// archived are the indexes in buildPlan.archived of the set's archived
	// Resource Lists and Resource Dumps published again, whole.
	archived []int
	// snapshots say whether a copy of the Resource List [0] and of the
	// Resource Dump [1] goes into their archives.
	snapshots [2]bool
}

// plan decides what this build makes of every document, package, version
// and archive of site s, from the previous state prev, what its load
// found of the kept files, and the scan sc. It writes nothing and reads
// nothing but the scan's records: what is lost on disk it learns from
// prev.kept.
func plan(s *site, prev *loaded, sc *scanned) (*buildPlan, error) {
	p := &buildPlan{now: prev.now, setChanged: map[string]int64{}, prune: slices.Clone(prev.pruned)}
	if !prev.baseline() {
		p.events = inJournalOrder(sc.events)
	}
	for _, st := range s.sets {
		p.sets = append(p.sets, setPlan{set: st, journalPlan: planJournal(s, prev, st, p.events, p.now, &p.notes)})
	}
	var pruned []string
	p.archived, pruned = retainArchived(s, prev, p.now)
	p.prune = append(p.prune, pruned...)
	for k := range p.sets {
		sp := &p.sets[k]
		if retainsSegments(s) {
			sp.journal, pruned = retainSegments(s.cfg.Archives.Keep, sp.set, sp.journal, p.archived, p.now)
			p.prune = append(p.prune, pruned...)
		}
	}
	p.recordSetChanges(s, prev.state)
	var journals [][]snapshot.Segment
	for _, sp := range p.sets {
		journals = append(journals, sp.journal, sp.closed)
	}
	p.versions = planVersions(s, prev, journals...)
	last := lastPackages(prev.state)
	for k := range p.sets {
		if err := p.planSet(s, prev, sc, &p.sets[k], last); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// planSet decides the packages and archives of set sp.set, and what its
// journal loses; last are the last build's packages.
func (p *buildPlan) planSet(s *site, prev *loaded, sc *scanned, sp *setPlan, last map[string]snapshot.Package) error {
	st := sp.set
	sp.carried = slices.DeleteFunc(sp.carried, func(pkg snapshot.Package) bool { return pkg.Until < sp.journal[0].From }) // left with its segment
	var err error
	if st.changeDump {
		// A package covers the changes since the previous build, but no
		// earlier than the open segment, whose Change Dump lists it.
		from := max(prev.state.LastBuild, sp.journal[len(sp.journal)-1].From)
		if sp.changePackages, err = planChangeDump(s, st, sp.events, from, p.now, &p.notes); err != nil {
			return err
		}
	}
	p.prune = append(p.prune, sp.dropLost(prev.kept, st, &p.notes)...)
	if st.resourceDump {
		if sp.resourcePackages, err = planResourceDump(s, sc, st, p.now, last); err != nil {
			return err
		}
	}
	sp.snapshots = snapshotsDue(s, st, p.archived, p.setChanged[st.Name], sc.members[st].Len() > 0, p.now)
	sp.archived = publishArchived(prev, st, p.archived, &p.notes)
	return nil
}

// snapshotsDue says whether a copy of set st's Resource List [0] and
// Resource Dump [1] goes into their archives at now, given those archived,
// the time the set last changed, and whether it has files: an archived
// document is never empty, so a set without files has none.
func snapshotsDue(s *site, st *set, archived []snapshot.Archived, changed int64, files bool, now int64) [2]bool {
	return [2]bool{files && snapshotDue(s, st, false, archived, changed, now),
		files && st.resourceDump && snapshotDue(s, st, true, archived, changed, now)}
}

// publishesSnapshots reports whether the set publishes its archive of
// Resource Lists (or Resource Dumps): it lists the archived ones carried
// over whole, and this build's copy when one is due; an archive without
// entries is not published, as no empty document but the open Change
// List is. archived are the plan's.
func (sp *setPlan) publishesSnapshots(archived []snapshot.Archived, dump bool) bool {
	return sp.snapshots[btoi(dump)] || slices.ContainsFunc(sp.archived, func(i int) bool { return archived[i].Dump == dump })
}

// recordSetChanges carries over, per set, the time of the last build that
// changed it, moving it to now for the sets this build's events touch.
func (p *buildPlan) recordSetChanges(s *site, prev *snapshot.State) {
	for _, st := range s.sets {
		t, ok := prev.SetChanged[st.Name]
		if !ok || slices.ContainsFunc(p.events, func(ev snapshot.Event) bool { return st.Contains(ev.Record.Path) }) {
			t = p.now
		}
		p.setChanged[st.Name] = t
	}
}

// btoi returns 1 for true, 0 for false.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
