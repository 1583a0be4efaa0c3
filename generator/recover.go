package generator

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
)

// # Recovering the state from the published output
//
// The output folder holds almost everything the state does: the Resource
// Lists name every published file with its length, digests, media type and
// lastmod; the Change Lists hold the segments and the open segment's
// events; the Change List Index (or, with [changelist] index = false, the
// Change List Archive and the Capability List) their times. When the
// state is missing (a CI runner that restored the output, say a gh-pages
// branch, but not the state folder), corrupt, truncated, or written by a
// newer rsgen, the build rebuilds it from there instead of publishing
// every resource as created:
//
//   - missing state and an output holding an rsgen build: automatic;
//   - corrupt, truncated or newer-version state: a warning, the bad file is
//     kept aside as state.corrupt, and the state is recovered;
//   - --state-from-output (Options.StateFromOutput): the state is rebuilt
//     from the output even when it loads, for a state that belongs to
//     another build than the output (a stale CI cache).
//
// Recovered file records carry no fingerprint, inode or mtime (see
// snapshot.SameContent): the recovering build re-reads every file once and
// compares its published digests. Closed Change Lists found in the output
// are copied back into the state's archive, from which later builds
// publish them. Events in a Change List newer than its set's Resource List
// (a build killed between the two) are replayed onto the recovered files,
// so that they are not published twice.

// Recovery errors and causes.
var (
	// errNotRsgenOutput: the output folder holds no Source Description
	// written by rsgen for this base URL.
	errNotRsgenOutput = errors.New("no rsgen build in the output folder")
)

// outputNewer returns why the output holds a build the loaded state st
// does not know, or "" when it holds none. A set's Resource List "at" is
// the time of the last build that changed the set; one later than the
// state's is from a build killed after writing it and before saving its
// state. A build from st would publish that build's changes again, and
// worse, rewrite (closing it at a rotation) the Change List that holds
// their events without them; killed in turn before it rewrites the
// Resource List, it would leave an output whose Resource List has changes
// no Change List publishes, which a later recovery (a lost state) could
// not tell from unchanged files. So the state is rebuilt from the output,
// whose Change Lists then go on from the killed build's.
func (rc *recoverer) outputNewer(st *snapshot.State) string {
	names, err := rc.publishedSets()
	if err != nil {
		return ""
	}
	for _, name := range names {
		head, err := readPublished(rc.s.outPath(layout.ResourceList(name)), nil)
		if err != nil {
			continue
		}
		at := unixOf(head.MD.At)
		if head.MD.Capability != rs.CapResourceList {
			continue
		}
		if known, ok := st.SetChanged[name]; !ok || at > known {
			return fmt.Sprintf("the Resource List of set %s (at %s) is newer than the state (a build was killed before saving it)",
				name, unixTime(at).Format(time.RFC3339))
		}
	}
	return ""
}

func badKind(err error) string {
	if errors.Is(err, snapshot.ErrNewerVersion) {
		return "newer"
	}
	return "corrupt"
}

// publishedSets returns the names of the sets the output's Source
// Description lists, or errNotRsgenOutput when there is none written by
// rsgen for this base URL.
func (rc *recoverer) publishedSets() ([]string, error) {
	var names []string
	head, err := readPublished(rc.s.outPath(layout.SourceDescription), func(_ *rs.Head, e *rs.Entry) error {
		rel, ok := layout.PathFromURL(rc.s.base, e.Loc)
		name, inDocs := strings.CutPrefix(rel, layout.DocumentsDir+"/")
		name, isCap := strings.CutSuffix(name, "/capabilitylist.xml")
		if !ok || !inDocs || !isCap || strings.Contains(name, "/") || rel != layout.CapabilityList(name) {
			return fmt.Errorf("%w: %s lists %s, not a Capability List rsgen writes under %s", errNotRsgenOutput, layout.SourceDescription, e.Loc, rc.s.base)
		}
		names = append(names, name)
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNotRsgenOutput
	}
	if err != nil {
		return nil, err
	}
	if head.Root != rs.URLSet || head.MD.Capability != rs.CapDescription {
		return nil, fmt.Errorf("%w: %s is not a Source Description", errNotRsgenOutput, layout.SourceDescription)
	}
	return names, nil
}

// OutputHoldsBuild reports whether the output folder holds a build rsgen
// published for this configuration's base URL.
func (rc *recoverer) outputHoldsBuild() bool {
	_, err := rc.publishedSets()
	return err == nil
}

// recoverFromOutput rebuilds the state from the documents in the output:
// per set, its files from the Resource List, its journal from the Change
// Lists and Change Dumps, its dump packages and its archives; and the kept
// versions from the mementos.
func (rc *recoverer) recoverFromOutput() (rec *recovery, err error) {
	names, err := rc.publishedSets()
	if err != nil {
		return nil, err
	}
	rec = &recovery{}
	st := &snapshot.State{SetChanged: map[string]int64{}, Journals: map[string][]snapshot.Segment{}, BaseURL: rc.s.base}
	outputs := []string{layout.SourceDescription}
	var sets []*snapshot.RecordFile // each set's files, closed once merged
	defer func() {
		if err != nil {
			for _, f := range sets {
				f.Close()
			}
		}
	}()
	for _, name := range names {
		outputs = append(outputs, layout.CapabilityList(name))
		at, rlDocs, lists, err := rc.resourceListDocs(name)
		noFiles := errors.Is(err, fs.ErrNotExist) // a set without files has no Resource List
		if err != nil && !noFiles {
			return nil, err
		}
		outputs = append(outputs, rlDocs...)
		if noFiles {
			at = math.MaxInt64 // no event is later than the files it has
		}
		journal, late, unexplained, listDocs, err := rc.recoverJournal(name, at, rec)
		if err != nil {
			return nil, err
		}
		if noFiles {
			at = lastChange(journal)
		}
		st.SetChanged[name] = at
		st.LastBuild = max(st.LastBuild, at)
		outputs = append(outputs, listDocs...)
		for _, seg := range journal {
			st.LastBuild = max(st.LastBuild, seg.From, seg.Until)
		}
		for _, ev := range late {
			st.LastBuild = max(st.LastBuild, ev.Time)
		}
		st.Journals[name] = journal
		dumpOutputs, err := rc.recoverDumps(name, st, rec)
		if err != nil {
			return nil, err
		}
		outputs = append(outputs, dumpOutputs...)
		archiveOutputs, err := rc.recoverArchived(name, st, rec)
		if err != nil {
			return nil, err
		}
		outputs = append(outputs, archiveOutputs...)
		setFiles, err := rc.recoverSetFiles(lists, unexplained, late)
		if err != nil {
			return nil, err
		}
		sets = append(sets, setFiles)
	}
	var files *snapshot.RecordFile
	if len(sets) == 1 {
		files = sets[0]
	} else {
		files = newRecordFile(rc.s, "the recovered records")
		if err := mergeSets(files, sets); err != nil {
			files.Close()
			return nil, err
		}
	}
	sets = nil // merged and closed, or the state's
	st.UseFiles(files)
	if err := rc.recoverVersions(st, rec); err != nil {
		st.Close()
		return nil, err
	}
	st.Outputs = sortedPaths(outputs)
	rec.state = st
	return rec, nil
}

// lastChange returns when the set of a recovered journal last changed, as
// far as its documents say, for a set without a Resource List to say it:
// its newest open event, else when its open Change List opened.
func lastChange(journal []snapshot.Segment) int64 {
	open := snapshot.Open(journal)
	if open == nil {
		return 0
	}
	at := open.From
	for _, ev := range open.Events {
		at = max(at, ev.Time)
	}
	return at
}

// errNotInWalkOrder: a Resource List whose entries are not in walk order,
// which rsgen never writes (the list was edited by hand).
var errNotInWalkOrder = errors.New("entries not in walk order")

// recoverSetFiles reads the files of a set from the documents of its
// Resource List (the list, or the parts of its index) into a record file,
// in walk order, as they come: rsgen writes its lists in walk order, so
// they are read without holding them. The records no Change List explains
// are dropped and the events newer than the list replayed (see
// setRecords). A list in another order is read again into memory and
// sorted.
func (rc *recoverer) recoverSetFiles(lists []string, unexplained func(*snapshot.Record) bool, late []snapshot.Event) (*snapshot.RecordFile, error) {
	f := newRecordFile(rc.s, "the recovered records")
	w := newSetRecords(f, unexplained, late)
	err := rc.readListed(lists, w.add)
	if errors.Is(err, errNotInWalkOrder) {
		f.Close()
		var all snapshot.Records
		if err := rc.readListed(lists, func(r snapshot.Record) error { all.Append(r); return nil }); err != nil {
			return nil, err
		}
		sorted := inWalkOrder(&all)
		f = newRecordFile(rc.s, "the recovered records")
		w = newSetRecords(f, unexplained, late)
		for _, r := range sorted.List.All() {
			if err = w.add(*r); err != nil {
				break
			}
		}
	}
	if err == nil {
		w.finish()
		err = f.Finish()
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	for _, p := range w.dropped {
		rc.s.notify(Note{Kind: NoteInfo, Path: p, Msg: "listed in the Resource List without its change event (a build was killed); it is published again as created"})
	}
	return f, nil
}

// readListed reads the resource entries of the documents lists, in order,
// into add.
func (rc *recoverer) readListed(lists []string, add func(snapshot.Record) error) error {
	for _, rel := range lists {
		_, err := readPublished(rc.s.outPath(rel), func(_ *rs.Head, e *rs.Entry) error {
			r, err := rc.pubRecord(e)
			if err != nil {
				return err
			}
			r.Seen = unixOf(e.Lastmod)
			return add(r)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// setRecords turns the records of one set's Resource List, given in walk
// order, into the set's recovered records in a record file: it drops those
// no Change List explains, and replays the events newer than the list (a
// build killed between the two published them only in a Change List),
// oldest first, the last event of a path deciding: a deletion removes the
// record, a creation or update replaces it or adds it in its place.
type setRecords struct {
	f           *snapshot.RecordFile
	unexplained func(*snapshot.Record) bool // nil: every record is explained
	late        []lateRecord                // in walk order
	next        int                         // the first of late not yet applied
	prev        string                      // the path added last
	dropped     []string                    // the paths of the records no Change List explains
}

// lateRecord is the record a path has after the late events: nil when
// deleted.
type lateRecord struct {
	path string
	rec  *snapshot.Record
}

func newSetRecords(f *snapshot.RecordFile, unexplained func(*snapshot.Record) bool, late []snapshot.Event) *setRecords {
	final := map[string]*snapshot.Record{}
	for _, ev := range late {
		final[ev.Record.Path] = ev.Record
		if ev.Change == snapshot.Deleted {
			final[ev.Record.Path] = nil
		}
	}
	s := &setRecords{f: f, unexplained: unexplained}
	for p, r := range final {
		s.late = append(s.late, lateRecord{p, r})
	}
	slices.SortFunc(s.late, func(x, y lateRecord) int { return layout.ComparePaths(x.path, y.path) })
	return s
}

// add takes the next record of the list; errNotInWalkOrder when it does
// not follow the one before.
func (s *setRecords) add(r snapshot.Record) error {
	if s.prev != "" && layout.ComparePaths(s.prev, r.Path) >= 0 {
		return errNotInWalkOrder
	}
	s.prev = r.Path
	if s.unexplained != nil && s.unexplained(&r) {
		s.dropped = append(s.dropped, r.Path)
		return nil
	}
	for s.next < len(s.late) && layout.ComparePaths(s.late[s.next].path, r.Path) < 0 {
		s.applyLate() // a file the list does not hold
	}
	if s.next < len(s.late) && s.late[s.next].path == r.Path {
		s.applyLate()
		return nil
	}
	s.f.Append(&r)
	return nil
}

// finish adds the records of late events past the last path listed.
func (s *setRecords) finish() {
	for s.next < len(s.late) {
		s.applyLate()
	}
}

func (s *setRecords) applyLate() {
	if r := s.late[s.next].rec; r != nil {
		s.f.Append(r)
	}
	s.next++
}

// mergeSets merges the recovered files of several sets, each in walk
// order, into out, as the scan reads them: a file in several sets keeps the
// record of the first. It closes the sets' files.
func mergeSets(out *snapshot.RecordFile, sets []*snapshot.RecordFile) error {
	defer func() {
		for _, f := range sets {
			f.Close()
		}
	}()
	type head struct {
		r    snapshot.Record
		ok   bool
		next func() (snapshot.Record, error, bool)
	}
	heads := make([]head, len(sets))
	advance := func(h *head) error {
		r, err, ok := h.next()
		h.r, h.ok = r, ok && err == nil
		return err
	}
	for i, f := range sets {
		next, stop := iter.Pull2(f.All())
		defer stop()
		heads[i].next = next
		if err := advance(&heads[i]); err != nil {
			return err
		}
	}
	for {
		first := -1 // the set whose record comes first; the first set when several have the path
		for i := range heads {
			if heads[i].ok && (first < 0 || layout.ComparePaths(heads[i].r.Path, heads[first].r.Path) < 0) {
				first = i
			}
		}
		if first < 0 {
			break
		}
		out.Append(&heads[first].r)
		p := heads[first].r.Path
		for i := range heads {
			if heads[i].ok && heads[i].r.Path == p {
				if err := advance(&heads[i]); err != nil {
					return err
				}
			}
		}
	}
	return out.Finish()
}

// recoverJournal rebuilds set name's journal from its Change List Index and
// Change Lists: a segment per list, the open one with its events, each
// closed one with the sums of its copy in the output, which goes back into
// the state archive. It returns the journal, the events newer than the
// Resource List's at (a build killed between the two), oldest first, which
// of the Resource List's records no list explains (see unexplainedBy; nil
// when all are), and the output paths it read.
func (rc *recoverer) recoverJournal(name string, at int64, rec *recovery) ([]snapshot.Segment, []snapshot.Event, func(*snapshot.Record) bool, []string, error) {
	lists, outputs, err := rc.changeListsOf(name)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	var journal []snapshot.Segment
	var late []snapshot.Event
	// With lastmod from content, every listed file first seen after the
	// baseline has its event at that time in the lists; see unexplainedBy.
	check := rc.s.cfg.Lastmod == config.LastmodContent && len(lists) > 0
	changed := map[string]int64{}
	for _, l := range lists {
		rec.lists++
		outputs = append(outputs, l.rel)
		seg := snapshot.Segment{From: l.from, Until: l.until, Seq: l.seq}
		if l.until != 0 {
			k, err := rc.recoverKept(l.rel, rec)
			if err != nil {
				return nil, nil, nil, nil, err
			}
			seg.Kept = append(seg.Kept, k)
		}
		if l.until == 0 || l.until > at || check {
			evs, err := rc.readEvents(l.rel)
			if err != nil {
				return nil, nil, nil, nil, err
			}
			for _, ev := range evs {
				if check && ev.Time <= at {
					changed[ev.Record.Path] = max(changed[ev.Record.Path], ev.Time)
				}
				if l.until == 0 {
					seg.Events = append(seg.Events, ev)
				}
				if ev.Time > at {
					late = append(late, ev)
				}
			}
		}
		journal = append(journal, seg)
	}
	var unexplained func(*snapshot.Record) bool
	if check {
		unexplained = unexplainedBy(changed, lists[0].from)
	}
	slices.SortFunc(journal, func(x, y snapshot.Segment) int {
		return cmp.Or(cmp.Compare(x.From, y.From), cmp.Compare(x.Seq, y.Seq))
	})
	for i, seg := range journal {
		if seg.Until == 0 && i != len(journal)-1 {
			return nil, nil, nil, nil, fmt.Errorf("set %s: the Change List opened at %s is open but not the last", name, unixTime(seg.From).Format(time.RFC3339))
		}
	}
	if open := snapshot.Open(journal); open != nil {
		slices.SortStableFunc(open.Events, func(x, y snapshot.Event) int { return cmp.Compare(x.Time, y.Time) })
	}
	slices.SortStableFunc(late, func(x, y snapshot.Event) int { return cmp.Compare(x.Time, y.Time) })
	return journal, late, unexplained, outputs, nil
}

// sortedPaths sorts paths in walk order and drops repeats.
func sortedPaths(paths []string) []string {
	slices.SortFunc(paths, layout.ComparePaths)
	return slices.Compact(paths)
}

// unexplainedBy returns whether a Resource List record is one no Change
// List explains: first seen (lastmod, from content) after the baseline at
// from, and not at the time of its path's last event up to the list's at
// (changed). Such an entry was published by a build
// that was killed before its state was saved, and a retry from the old
// state may have rewritten the Change List that held its event without it
// (it closed the list, knowing nothing of the event). Left in, the file
// would never get its event; dropped, the next build finds it and
// publishes it as created.
//
// Only the last event of each path is kept, not every event: a Resource
// List written at at lists each file as last changed at its last event up
// to at, and the lists of a site that has been edited for years would
// otherwise fill memory with events of the same paths.
func unexplainedBy(changed map[string]int64, from int64) func(*snapshot.Record) bool {
	return func(r *snapshot.Record) bool {
		return r.Seen > from && changed[r.Path] != r.Seen
	}
}

// resourceListDocs reads the head of set name's Resource List, and the
// parts of its index when it is one: it returns the list's "at", its
// output paths, and the documents that list the set's files (the list
// itself, or its parts).
func (rc *recoverer) resourceListDocs(name string) (int64, []string, []string, error) {
	rel := layout.ResourceList(name)
	var parts []string
	head, err := readPublished(rc.s.outPath(rel), nil)
	if err != nil {
		return 0, nil, nil, err
	}
	if head.MD.Capability != rs.CapResourceList {
		return 0, nil, nil, fmt.Errorf("%s: capability %q, want %q", rel, head.MD.Capability, rs.CapResourceList)
	}
	if head.Root != rs.SitemapIndex {
		return unixOf(head.MD.At), []string{rel}, []string{rel}, nil
	}
	_, err = readPublished(rc.s.outPath(rel), func(_ *rs.Head, e *rs.Entry) error {
		p, ok := layout.PathFromURL(rc.s.base, e.Loc)
		if !ok {
			return fmt.Errorf("part %s is not under %s", e.Loc, rc.s.base)
		}
		parts = append(parts, p)
		return nil
	})
	if err != nil {
		return 0, nil, nil, err
	}
	return unixOf(head.MD.At), append([]string{rel}, parts...), parts, nil
}

// inWalkOrder returns files sorted in walk order, a path listed twice with
// its last record. rsgen writes its Resource Lists in walk order, so that
// they are read into order without sorting a million records; a list in
// another order (edited by hand) is sorted. The records are in memory.
func inWalkOrder(files *snapshot.Records) snapshot.Records {
	ordered := true
	for i := 1; i < files.Len() && ordered; i++ {
		ordered = layout.ComparePaths(files.List.At(i-1).Path, files.List.At(i).Path) < 0
	}
	if ordered {
		return *files
	}
	recs := make([]snapshot.Record, 0, files.Len())
	for _, r := range files.List.All() {
		recs = append(recs, *r)
	}
	slices.SortStableFunc(recs, func(x, y snapshot.Record) int { return layout.ComparePaths(x.Path, y.Path) })
	var out snapshot.Records
	for i, r := range recs {
		if i+1 < len(recs) && recs[i+1].Path == r.Path {
			continue // the later listing wins
		}
		out.Append(r)
	}
	return out
}

// pubList is one Change List found in the output.
type pubList struct {
	rel         string
	from, until int64
	seq         int
}

// changeListsOf returns the Change Lists of set name that its Change List
// Index lists, oldest first, and the documents it read for them. Without
// an index ([changelist] index = false) the Change List Archive lists the
// closed ones and the Capability List the open one.
func (rc *recoverer) changeListsOf(name string) ([]pubList, []string, error) {
	var lists []pubList
	listedBy := func(doc string) func(*rs.Entry) error {
		return func(e *rs.Entry) error {
			rel, ok := layout.PathFromURL(rc.s.base, e.Loc)
			if !ok {
				return fmt.Errorf("%s lists %s, not under %s", doc, e.Loc, rc.s.base)
			}
			lists = append(lists, pubList{rel: rel})
			return nil
		}
	}
	docs, err := rc.changeListDocs(name, listedBy)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, docs, nil
	}
	if err != nil {
		return nil, nil, err
	}
	for i := range lists {
		l := &lists[i]
		head, err := readPublished(rc.s.outPath(l.rel), nil)
		if err != nil {
			return nil, nil, err
		}
		if l.from, l.until = unixOf(head.MD.From), unixOf(head.MD.Until); l.from == 0 {
			return nil, nil, fmt.Errorf("%s: no from", l.rel)
		}
		seq, named := changeListSeq(name, l.from, l.rel)
		if !named {
			return nil, nil, fmt.Errorf("%s: not the name rsgen gives the Change List opened at %s", l.rel, head.MD.From.Format(time.RFC3339))
		}
		l.seq = seq
	}
	return lists, docs, nil
}

// changeListDocs reads the documents that list set name's Change Lists,
// calling listedBy(doc) for each entry of doc, and returns their paths:
// the Change List Index, or the Change List Archive and the Capability
// List's changelist entry. fs.ErrNotExist: the set has no Change List yet.
func (rc *recoverer) changeListDocs(name string, listedBy func(doc string) func(*rs.Entry) error) ([]string, error) {
	if idx := layout.ChangeListIndex(name); rc.s.cfg.ChangeList.Index {
		_, err := readPublished(rc.s.outPath(idx), func(_ *rs.Head, e *rs.Entry) error { return listedBy(idx)(e) })
		return []string{idx}, err
	}
	archive := layout.Archive(name, rs.CapChangeList)
	docs, err := rc.readSplitDoc(archive, rs.CapChangeList+"-archive", listedBy(archive))
	if err != nil {
		return nil, err
	}
	capList, open := layout.CapabilityList(name), listedBy(layout.CapabilityList(name))
	_, err = readPublished(rc.s.outPath(capList), func(_ *rs.Head, e *rs.Entry) error {
		if e.MD.Capability != rs.CapChangeList {
			return nil
		}
		return open(e)
	})
	return docs, err
}

// changeListSeq returns the sequence number in the name of the Change List
// of set name opened at from.
func changeListSeq(name string, from int64, rel string) (int, bool) {
	first := layout.ChangeList(name, unixTime(from), 0)
	if rel == first {
		return 0, true
	}
	rest, found := strings.CutPrefix(rel, strings.TrimSuffix(first, ".xml")+"-")
	rest, isXML := strings.CutSuffix(rest, ".xml")
	n, err := strconv.Atoi(rest)
	if !found || !isXML || err != nil || n <= 0 || layout.ChangeList(name, unixTime(from), n) != rel {
		return 0, false
	}
	return n, true
}

// readEvents reads the change events of a Change List.
func (rc *recoverer) readEvents(rel string) ([]snapshot.Event, error) {
	var evs []snapshot.Event
	_, err := readPublished(rc.s.outPath(rel), func(_ *rs.Head, e *rs.Entry) error {
		ev := snapshot.Event{}
		switch e.MD.Change {
		case rs.ChangeCreated:
			ev.Change = snapshot.Created
		case rs.ChangeUpdated:
			ev.Change = snapshot.Updated
		case rs.ChangeDeleted:
			ev.Change = snapshot.Deleted
		default:
			return fmt.Errorf("%s: %s: bad change %q", rel, e.Loc, e.MD.Change)
		}
		when := e.MD.Datetime
		if when.IsZero() {
			when = e.Lastmod // ResourceSync 1.0 mode
		}
		if ev.Time = unixOf(when); ev.Time == 0 {
			return fmt.Errorf("%s: %s: no datetime", rel, e.Loc)
		}
		r, err := rc.pubRecord(e)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		r.Seen = ev.Time
		ev.Record = &r
		evs = append(evs, ev)
		return nil
	})
	return evs, err
}
