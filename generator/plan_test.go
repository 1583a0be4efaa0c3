package generator

import (
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/snapshot"
)

// The plan decides without a disk: these tests give it a site, a previous
// state, what the load found of the kept files and a scan, all in memory,
// with folders that do not exist.

// planNow is the time of the planned builds.
var planNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).Unix()

// planSite returns the site of a default configuration, changed by
// change, whose folders do not exist.
func planSite(t *testing.T, change func(*config.Config)) *site {
	t.Helper()
	cfg := config.Default()
	cfg.Dir, cfg.BaseURL = "/nonexistent/plan", "https://data.example.org/"
	if change != nil {
		change(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := resolve(&cfg, Options{Now: time.Unix(planNow, 0)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// planScan returns the scan of records, in walk order, with events.
func planScan(s *site, records []snapshot.Record, events []snapshot.Event) *scanned {
	sc := newScanned(s, 0)
	sc.files, sc.events = snapshot.RecordsOf(records...), events
	for i := range records {
		sc.addMember(s, i, &records[i])
	}
	return sc
}

// planPrevious returns a previous state, st, found whole but for the kept
// files lost.
func planPrevious(st *snapshot.State, lost ...string) *loaded {
	kept := &keptSurvey{files: map[string]keptFound{}, legacyDocs: map[string][]snapshot.Kept{}, legacyWritten: map[string]bool{}, versionsPresent: true}
	whole := func(rel string, size int64, sum [32]byte) {
		kept.files[rel] = keptFound{copy: keptBoth, got: sums{size: size, sha256: sum}}
		if slices.Contains(lost, rel) {
			kept.files[rel] = keptFound{copy: keptLost}
		}
	}
	for _, journal := range st.Journals {
		for _, seg := range journal {
			for _, k := range seg.Kept {
				whole(k.Path, k.Size, k.SHA256)
			}
		}
	}
	for _, p := range st.Packages {
		whole(p.Path, p.Length, p.SHA256)
	}
	for _, a := range st.Archived {
		for _, k := range a.Docs {
			whole(k.Path, k.Size, k.SHA256)
		}
		for _, p := range a.Packages {
			whole(p.Path, p.Length, p.SHA256)
		}
	}
	if st.SetChanged == nil {
		st.SetChanged = map[string]int64{}
	}
	return &loaded{state: st, now: planNow, intact: true, kept: kept}
}

func record(p string, size int64, seen int64, change snapshot.Change) snapshot.Record {
	r := snapshot.Record{Path: p, Size: size, Seen: seen, Change: change}
	r.Digests.SHA256[0] = byte(size)
	return r
}

func mustPlan(t *testing.T, s *site, prev *loaded, sc *scanned) *buildPlan {
	t.Helper()
	p, err := plan(s, prev, sc)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPlanFirstBuild: a first build's Resource List is the baseline: its
// events are not published, and each set's journal opens empty now.
func TestPlanFirstBuild(t *testing.T) {
	s := planSite(t, nil)
	recs := []snapshot.Record{record("a.txt", 1, planNow, snapshot.Created), record("b/c.txt", 2, planNow, snapshot.Created)}
	p := mustPlan(t, s, planPrevious(&snapshot.State{}), planScan(s, recs, nil))
	if p.events != nil || len(p.sets) != 1 {
		t.Fatalf("events %v, %d sets; want none and 1", p.events, len(p.sets))
	}
	sp := p.sets[0]
	if len(sp.journal) != 1 || sp.journal[0].From != planNow || sp.journal[0].Until != 0 || len(sp.journal[0].Events) != 0 || len(sp.closed) != 0 {
		t.Errorf("journal %+v, closed %d; want one empty segment open now", sp.journal, len(sp.closed))
	}
	if p.setChanged["default"] != planNow || len(p.prune) != 0 || len(p.notes) != 0 {
		t.Errorf("set changed at %d, prune %q, notes %v; want now, nothing, none", p.setChanged["default"], p.prune, p.notes)
	}
}

// TestPlanRotatesAndSplitsSegments: an open segment older than the
// rotation period closes before this build's events, which fill new
// segments of at most the entry limit.
func TestPlanRotatesAndSplitsSegments(t *testing.T) {
	s := planSite(t, nil)
	s.opts.limits = limits{entries: 2, bytes: 50_000_000}
	dayAgo := planNow - 25*3600
	old := record("old.txt", 1, dayAgo, snapshot.Updated)
	prev := planPrevious(&snapshot.State{LastBuild: dayAgo, SetChanged: map[string]int64{"default": dayAgo},
		Journals: map[string][]snapshot.Segment{"default": {{From: dayAgo - 3600, Events: []snapshot.Event{{Change: snapshot.Updated, Time: dayAgo, Record: &old}}}}}})
	var recs []snapshot.Record
	var events []snapshot.Event
	for _, p := range []string{"a", "b", "c", "d", "e"} {
		recs = append(recs, record(p, 1, planNow, snapshot.Created))
	}
	for i := range recs {
		events = append(events, snapshot.Event{Change: snapshot.Created, Time: planNow, Record: &recs[i]})
	}
	p := mustPlan(t, s, prev, planScan(s, recs, events))
	sp := p.sets[0]
	var spans []string
	for _, seg := range sp.journal {
		spans = append(spans, strings.Join([]string{unixTime(seg.From).Format("15"), unixTime(seg.Until).Format("15"), string(rune('0' + seg.Seq)), string(rune('0' + len(seg.Events)))}, ":"))
	}
	// The day-old segment closes now; the five events fill segments of
	// two, opened at the same second with rising sequence numbers; only
	// the open one keeps its events.
	want := []string{"10:12:0:0", "12:12:0:0", "12:12:1:0", "12:00:2:1"}
	if !slices.Equal(spans, want) {
		t.Errorf("journal from:until:seq:events %q, want %q", spans, want)
	}
	if len(sp.closed) != 3 || len(sp.closed[0].Events) != 1 || len(sp.closed[1].Events) != 2 {
		t.Errorf("%d segments closed, want 3, the first with the old event and the next with two", len(sp.closed))
	}
	if p.setChanged["default"] != planNow {
		t.Errorf("the set changed at %d, want now", p.setChanged["default"])
	}
}

// changeDumpSite returns a site whose set publishes a Change Dump.
func changeDumpSite(t *testing.T) *site {
	return planSite(t, func(c *config.Config) { c.Dumps.ChangeDump = true })
}

// TestPlanLostChangeDumpPackage: a Change Dump package of the open segment
// that is lost in both folders closes that segment, which leaves the
// journal with every older one (their documents leave the state archive),
// with warnings; the lost package is not carried over.
func TestPlanLostChangeDumpPackage(t *testing.T) {
	s := changeDumpSite(t)
	t0, t1, t2 := planNow-5*3600, planNow-3*3600, planNow-3600
	closed := snapshot.Segment{From: t0, Until: t1, Kept: []snapshot.Kept{
		{Path: layout.ChangeList("default", unixTime(t0), 0), Size: 10}, {Path: layout.ChangeDump("default", unixTime(t0), 0), Size: 11}}}
	kept := snapshot.Package{Set: "default", Change: true, From: t0, Until: t1 - 60, Path: "resourcesync/default/changedumps/kept.zip", Length: 5}
	lost := snapshot.Package{Set: "default", Change: true, From: t1, Until: t2, Path: "resourcesync/default/changedumps/lost.zip", Length: 6}
	prev := planPrevious(&snapshot.State{LastBuild: t2, SetChanged: map[string]int64{"default": t2}, Packages: []snapshot.Package{kept, lost},
		Journals: map[string][]snapshot.Segment{"default": {closed, {From: t1}}}}, lost.Path)
	p := mustPlan(t, s, prev, planScan(s, nil, nil))
	sp := p.sets[0]
	if len(sp.journal) != 1 || sp.journal[0].From != planNow || sp.journal[0].Until != 0 {
		t.Errorf("journal %+v, want only the segment opened now", sp.journal)
	}
	if len(sp.closed) != 1 || sp.closed[0].From != t1 || sp.closed[0].Until != planNow {
		t.Errorf("closed %+v, want the segment of the lost package, closed now", sp.closed)
	}
	for _, rel := range []string{closed.Kept[0].Path, closed.Kept[1].Path, layout.ChangeList("default", unixTime(t1), 0)} {
		if !slices.Contains(p.prune, rel) {
			t.Errorf("prune %q lacks %s", p.prune, rel)
		}
	}
	if slices.ContainsFunc(sp.carried, func(p snapshot.Package) bool { return p.Path == lost.Path }) {
		t.Errorf("carried %v: the lost package among them", sp.carried)
	}
	if warnings := noteCodes(p.notes); !slices.Equal(warnings, []string{WarnLost, WarnLost}) || !strings.Contains(p.notes[0].Msg, "Change Dump package lost") {
		t.Errorf("notes %v, want the lost package and the segments that leave", p.notes)
	}
}

func noteCodes(ns notes) []string {
	var codes []string
	for _, n := range ns {
		codes = append(codes, n.Code)
	}
	return codes
}

// TestPlanLostClosedDocument: a closed Change List lost in both folders
// leaves the journal with the segments before it; the newer ones stay,
// with the sums the survey found of their documents.
func TestPlanLostClosedDocument(t *testing.T) {
	s := planSite(t, nil)
	var journal []snapshot.Segment
	for i := range 3 {
		from := planNow - int64(4-i)*3600
		journal = append(journal, snapshot.Segment{From: from, Until: from + 3600, Kept: []snapshot.Kept{{Path: layout.ChangeList("default", unixTime(from), 0), Size: 100}}})
	}
	journal = append(journal, snapshot.Segment{From: planNow - 3600})
	lost := journal[1].Kept[0].Path
	prev := planPrevious(&snapshot.State{LastBuild: planNow - 3600, SetChanged: map[string]int64{"default": planNow - 3600},
		Journals: map[string][]snapshot.Segment{"default": journal}}, lost)
	prev.kept.files[journal[2].Kept[0].Path] = keptFound{copy: keptInOutput, got: sums{size: 100, sha256: [32]byte{7}}}
	p := mustPlan(t, s, prev, planScan(s, nil, nil))
	sp := p.sets[0]
	if len(sp.journal) != 2 || sp.journal[0].From != journal[2].From {
		t.Fatalf("journal %+v, want the last closed segment and the open one", sp.journal)
	}
	if got := sp.journal[0].Kept[0].SHA256; got != ([32]byte{7}) {
		t.Errorf("the closed segment kept sums %x, want those the survey found", got)
	}
	if journal[2].Kept[0].SHA256 != ([32]byte{}) {
		t.Error("the plan changed the previous state's records")
	}
	if !slices.Contains(p.prune, journal[0].Kept[0].Path) || !slices.Contains(p.prune, lost) || slices.Contains(p.prune, journal[2].Kept[0].Path) {
		t.Errorf("prune %q, want the two oldest segments' documents only", p.prune)
	}
	if len(p.notes) != 1 || !strings.Contains(p.notes[0].Msg, lost) {
		t.Errorf("notes %v, want one warning naming %s", p.notes, lost)
	}
}

// TestPlanRetention: a kept count of one leaves the newest archived
// Resource List and the newest closed segment; what goes leaves the state
// archive; and a copy is due when the set changed and snapshot_every has
// passed.
func TestPlanRetention(t *testing.T) {
	s := planSite(t, func(c *config.Config) {
		c.Archives = config.Archives{ResourceLists: true, ChangeLists: true, Keep: config.Retention{Count: 1}, SnapshotEvery: config.Duration{Duration: time.Hour}}
	})
	var journal []snapshot.Segment
	var archived []snapshot.Archived
	for i := range 3 {
		from := planNow - int64(10-i)*3600
		journal = append(journal, snapshot.Segment{From: from, Until: from + 3600, Kept: []snapshot.Kept{{Path: layout.ChangeList("default", unixTime(from), 0), Size: 1}}})
		a := snapshot.Archived{Set: "default", At: from, Completed: from}
		a.Docs = []snapshot.Kept{{Path: archivedPath(&a), Size: 1}}
		archived = append(archived, a)
	}
	journal = append(journal, snapshot.Segment{From: planNow - 7*3600})
	prev := planPrevious(&snapshot.State{LastBuild: planNow - 7*3600, SetChanged: map[string]int64{"default": planNow - 7*3600},
		Journals: map[string][]snapshot.Segment{"default": journal}, Archived: archived})
	r := record("a.txt", 1, planNow, snapshot.Created)
	p := mustPlan(t, s, prev, planScan(s, []snapshot.Record{r}, []snapshot.Event{{Change: snapshot.Created, Time: planNow, Record: &r}}))
	sp := p.sets[0]
	if len(p.archived) != 1 || p.archived[0].At != archived[2].At || !slices.Equal(sp.archived, []int{0}) {
		t.Errorf("archived %+v, published %v; want the newest, published", p.archived, sp.archived)
	}
	// The newest closed segment stays; it is older than the oldest
	// archived Resource List, which needs none of its changes.
	if len(sp.journal) != 2 || sp.journal[0].From != journal[2].From {
		t.Errorf("journal %+v, want the newest closed segment and the open one", sp.journal)
	}
	for _, rel := range []string{archived[0].Docs[0].Path, archived[1].Docs[0].Path, journal[0].Kept[0].Path, journal[1].Kept[0].Path} {
		if !slices.Contains(p.prune, rel) {
			t.Errorf("prune %q lacks %s", p.prune, rel)
		}
	}
	if !sp.snapshots[0] || sp.snapshots[1] {
		t.Errorf("snapshots due %v, want the Resource List's only", sp.snapshots)
	}
}

// TestPlanArchivedSnapshotLost: an archived Resource List whose document is
// lost in both folders is not published again, with a warning.
func TestPlanArchivedSnapshotLost(t *testing.T) {
	s := planSite(t, func(c *config.Config) {
		c.Archives = config.Archives{ResourceLists: true, SnapshotEvery: config.Duration{Duration: time.Hour}}
	})
	var archived []snapshot.Archived
	for i := range 2 {
		a := snapshot.Archived{Set: "default", At: planNow - int64(3-i)*3600, Completed: planNow - int64(3-i)*3600}
		a.Docs = []snapshot.Kept{{Path: archivedPath(&a), Size: 1}}
		archived = append(archived, a)
	}
	prev := planPrevious(&snapshot.State{LastBuild: planNow - 3600, SetChanged: map[string]int64{"default": archived[1].At},
		Journals: map[string][]snapshot.Segment{"default": {{From: planNow - 3600}}}, Archived: archived}, archived[0].Docs[0].Path)
	p := mustPlan(t, s, prev, planScan(s, nil, nil))
	if sp := p.sets[0]; !slices.Equal(sp.archived, []int{1}) {
		t.Errorf("published %v, want the second only", sp.archived)
	}
	if len(p.notes) != 1 || p.notes[0].Path != archived[0].Docs[0].Path {
		t.Errorf("notes %v, want a warning about %s", p.notes, archived[0].Docs[0].Path)
	}
	if p.sets[0].snapshots[0] {
		t.Error("a copy is due though the set did not change")
	}
}

// TestPlanResourceDumpKeepsItsPackage: a package whose contents did not
// change keeps its name and the last build's at; a changed one is named
// anew and made now.
func TestPlanResourceDumpKeepsItsPackage(t *testing.T) {
	s := planSite(t, func(c *config.Config) { c.Dumps.ResourceDump = true })
	recs := []snapshot.Record{record("a.txt", 1, planNow-7200, 0)}
	first := mustPlan(t, s, planPrevious(&snapshot.State{}), planScan(s, recs, nil))
	pkgs := first.sets[0].resourcePackages
	if len(pkgs) != 1 || pkgs[0].last != nil || pkgs[0].pkg.At != planNow || !strings.HasPrefix(pkgs[0].pkg.Path, "resourcesync/default/") {
		t.Fatalf("first build's packages %+v, want one new package made now", pkgs)
	}
	old := snapshot.Package{Set: "default", Path: pkgs[0].pkg.Path, At: planNow - 3600, Length: 99}
	prev := planPrevious(&snapshot.State{LastBuild: planNow - 3600, SetChanged: map[string]int64{"default": planNow - 3600}, Packages: []snapshot.Package{old},
		Journals: map[string][]snapshot.Segment{"default": {{From: planNow - 3600}}}})
	kept := mustPlan(t, s, prev, planScan(s, recs, nil)).sets[0].resourcePackages
	if len(kept) != 1 || kept[0].last == nil || kept[0].last.Length != 99 || kept[0].pkg.At != old.At || kept[0].pkg.Path != old.Path {
		t.Errorf("unchanged contents: %+v, want the last build's package and at", kept)
	}
	recs[0].Size = 2
	made := mustPlan(t, s, prev, planScan(s, recs, nil)).sets[0].resourcePackages
	if len(made) != 1 || made[0].last != nil || made[0].pkg.Path == old.Path || made[0].pkg.At != planNow {
		t.Errorf("changed contents: %+v, want a new package made now", made)
	}
}

// TestPlanChangeDumpPackages: this build's changes of a set go into Change
// Dump packages from the previous build until now.
func TestPlanChangeDumpPackages(t *testing.T) {
	s := changeDumpSite(t)
	last := planNow - 3600
	prev := planPrevious(&snapshot.State{LastBuild: last, SetChanged: map[string]int64{"default": last},
		Journals: map[string][]snapshot.Segment{"default": {{From: last - 3600}}}})
	r := record("a.txt", 3, planNow, snapshot.Updated)
	p := mustPlan(t, s, prev, planScan(s, []snapshot.Record{r}, []snapshot.Event{{Change: snapshot.Updated, Time: planNow, Record: &r}}))
	pkgs := p.sets[0].changePackages
	if len(pkgs) != 1 || pkgs[0].pkg.From != last || pkgs[0].pkg.Until != planNow || !pkgs[0].pkg.Change ||
		path.Dir(pkgs[0].pkg.Path) != path.Dir(layout.ChangeDumpPackage("default", unixTime(planNow), "x")) {
		t.Errorf("change packages %+v, want one from the previous build until now", pkgs)
	}
}

// TestVersionPlanResource: what becomes of one resource's versions, decided
// from the versions kept, those found whole, and this build's record.
func TestVersionPlanResource(t *testing.T) {
	json := func(seen int64, patched bool) snapshot.Record {
		r := record("d.json", seen, seen, 0)
		r.SetType("application/json")
		r.Patched = patched
		return r
	}
	v1, v2, v3 := json(100, false), json(200, true), json(300, false)
	vp := &versionPlan{on: true, trusted: true, eventSeen: map[string][]int64{"d.json": {300}}}

	// v2 is lost; v3 is new, and a Change List of this build lists it.
	rv := vp.resource("d.json", true, true, []snapshot.Record{v1, v2}, []bool{true, false}, &v3, nil)
	if len(rv.kept) != 2 || rv.kept[1].Seen != 300 || rv.added != 1 || rv.timeMapStep != stepWrite {
		t.Errorf("kept %d, added %d, TimeMap %v; want v1 and the new v3, and the TimeMap written", len(rv.kept), rv.added, rv.timeMapStep)
	}
	if want := []string{layout.Memento(unixTime(200), "d.json"), layout.Patch(unixTime(200), "d.json")}; !slices.Equal(rv.obsolete, want) ||
		!slices.Equal(rv.pruned, want[:1]) {
		t.Errorf("obsolete %q, pruned %q; want v2's memento and patch, and its memento", rv.obsolete, rv.pruned)
	}
	if !slices.Equal(rv.patches, []fileStep{stepNone, stepWrite}) || !slices.Equal(rv.linked, []bool{false, true}) {
		t.Errorf("patches %v, linked %v; want v3's written and linked", rv.patches, rv.linked)
	}

	// Nothing changed: the TimeMap and the patch are trusted.
	rv = vp.resource("d.json", true, true, []snapshot.Record{v1, v2}, []bool{true, true}, &v2, nil)
	if rv.added != -1 || rv.timeMapStep != stepKeep || !slices.Equal(rv.patches, []fileStep{stepNone, stepKeep}) || len(rv.obsolete) != 0 {
		t.Errorf("unchanged: added %d, TimeMap %v, patches %v, obsolete %q; want all kept", rv.added, rv.timeMapStep, rv.patches, rv.obsolete)
	}

	// A set that no longer keeps versions drops them all, and the TimeMap.
	rv = vp.resource("d.json", false, false, []snapshot.Record{v1, v2}, []bool{false, false}, nil, nil)
	if len(rv.kept) != 0 || !slices.Contains(rv.obsolete, layout.TimeMap("d.json")) || len(rv.pruned) != 2 {
		t.Errorf("dropped: kept %d, obsolete %q, pruned %q; want none kept, the TimeMap and both mementos gone", len(rv.kept), rv.obsolete, rv.pruned)
	}
}

// TestPlanHoldsABuildsEventsOnceMore: a build of many changes holds its
// events in the scan's walk order and at most once more, in the order of
// its Change Lists. A set that holds every event and the segments opened
// for them share that copy; appending to a segment's events leaves the
// next segment's alone; the events of a set that holds only some are its
// own; no versions kept, no map of their times.
func TestPlanHoldsABuildsEventsOnceMore(t *testing.T) {
	s := planSite(t, func(c *config.Config) {
		c.Sets = []config.Set{{Name: "all", Path: ""}, {Name: "books", Path: "books"}}
	})
	s.opts.limits = limits{entries: 2, bytes: 50_000_000}
	gone := record("books/b.txt", 1, planNow-3600, 0)
	known := map[string][]snapshot.Segment{"all": {{From: planNow - 3600}}, "books": {{From: planNow - 3600}}}
	prev := planPrevious(&snapshot.State{LastBuild: planNow - 3600, Journals: known, SetChanged: map[string]int64{}})
	recs := []snapshot.Record{record("a.txt", 1, planNow, snapshot.Updated), record("books/c.txt", 1, planNow, snapshot.Created), record("d.txt", 1, planNow, snapshot.Updated)}
	walk := []snapshot.Event{{Change: snapshot.Updated, Time: planNow, Record: &recs[0]}, {Change: snapshot.Deleted, Time: planNow, Record: &gone},
		{Change: snapshot.Created, Time: planNow, Record: &recs[1]}, {Change: snapshot.Updated, Time: planNow, Record: &recs[2]}}

	p := mustPlan(t, s, prev, planScan(s, recs, walk))
	var order []string
	for _, ev := range p.events {
		order = append(order, ev.Record.Path)
	}
	if want := []string{"books/b.txt", "a.txt", "books/c.txt", "d.txt"}; !slices.Equal(order, want) {
		t.Fatalf("the plan's events are %q, want the deletion first, then walk order: %q", order, want)
	}
	if walk[0].Record.Path != "a.txt" {
		t.Errorf("the scan's events were sorted in place: the build reports them in walk order")
	}
	all, books := &p.sets[0], &p.sets[1]
	if &all.events[0] != &p.events[0] || cap(all.events) != len(p.events) {
		t.Errorf("the set that holds every event copied them")
	}
	segs := slices.Concat(all.closed, all.journal[len(all.journal)-1:])
	if len(segs) != 2 || len(segs[0].Events) != 2 || &segs[0].Events[0] != &p.events[0] || &segs[1].Events[0] != &p.events[2] {
		t.Fatalf("the segments of the set of every event (%d) do not share its events", len(segs))
	}
	if grown := append(segs[0].Events, snapshot.Event{}); &grown[0] == &segs[0].Events[0] {
		t.Errorf("a segment's events can grow into the next segment's")
	}
	if len(books.events) != 2 || &books.events[0] == &p.events[0] || books.events[0].Record.Path != "books/b.txt" {
		t.Errorf("the books set's events are %v, want its own two", books.events)
	}
	if cap(books.events) != len(books.events) {
		t.Errorf("the books set holds room for %d events to keep its %d: a set's copy lives as long as its open segment", cap(books.events), len(books.events))
	}
	if p.versions.eventSeen != nil {
		t.Errorf("a site that keeps no versions maps the times of its events: %v", p.versions.eventSeen)
	}

	// Without a deletion the walk order is the Change Lists' order.
	noDeletion := []snapshot.Event{walk[0], walk[2], walk[3]}
	p = mustPlan(t, s, prev, planScan(s, recs, noDeletion))
	if &p.events[0] != &noDeletion[0] || &p.sets[0].events[0] != &noDeletion[0] || p.events[1].Record.Path != "books/c.txt" {
		t.Errorf("events in walk order without a deletion were copied or reordered")
	}
}

// TestMigrateSharedGivesEachSetItsEvents: a state written before format 3
// kept one journal for all sets; each published set gets its own, of the
// same segments with only its events, and an unpublished set none.
func TestMigrateSharedGivesEachSetItsEvents(t *testing.T) {
	s := planSite(t, func(c *config.Config) {
		c.Sets = []config.Set{{Name: "all", Path: ""}, {Name: "books", Path: "books"}, {Name: "later", Path: "later"}}
	})
	a, b := record("a.txt", 1, planNow, snapshot.Updated), record("books/b.txt", 1, planNow, snapshot.Created)
	events := []snapshot.Event{{Change: snapshot.Updated, Time: planNow, Record: &a}, {Change: snapshot.Created, Time: planNow, Record: &b}}
	st := &snapshot.State{Shared: []snapshot.Segment{{From: planNow - 7200, Until: planNow - 3600, Events: events[:1]}, {From: planNow - 3600, Events: events}},
		SetChanged: map[string]int64{"all": planNow, "books": planNow}}
	migrateShared(s.sets, st)
	paths := func(set string) []string {
		var got []string
		for _, seg := range st.Journals[set] {
			var ps []string
			for _, ev := range seg.Events {
				ps = append(ps, ev.Record.Path)
			}
			got = append(got, strings.Join(ps, ","))
		}
		return got
	}
	if got := paths("all"); !slices.Equal(got, []string{"a.txt", "a.txt,books/b.txt"}) {
		t.Errorf("the journal of all holds %q", got)
	}
	if got := paths("books"); !slices.Equal(got, []string{"", "books/b.txt"}) {
		t.Errorf("the journal of books holds %q", got)
	}
	if _, ok := st.Journals["later"]; ok || st.Shared != nil {
		t.Errorf("an unpublished set got a journal, or the shared one stayed")
	}
}
