package generator

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// recoverer rebuilds a lost or stale state from the output (recover*.go).
type recoverer struct {
	*run
	recovered *recovery // the state rebuilt from the output, if it was
}

// # Recovering the state from the published output
//
// The output folder holds almost everything the state does: the Resource
// Lists name every published file with its length, digests, media type and
// lastmod; the Change Lists hold the segments and the open segment's
// events; the Change List Index their times. When the state is missing
// (a CI runner that restored the output, say a gh-pages branch, but not the
// state folder), corrupt, truncated, or written by a newer rsgen, the
// builder rebuilds it from there instead of publishing every resource as
// created:
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

// recovery is a state rebuilt from the output, and what the build must do
// with it before writing anything.
type recovery struct {
	state   *snapshot.State
	archive []string // output paths of closed Change Lists and Change Dumps to copy into the state archive
	lists   int      // Change Lists read
	bad     string   // "corrupt" or "newer": the state file to keep aside
}

// loadState loads the previous state, or rebuilds it from the output when
// it is missing, unusable or --state-from-output asks for it.
func (b *recoverer) loadState() (*snapshot.State, error) {
	statePath := filepath.Join(b.cfg.State, snapshot.FileName)
	_, statErr := os.Stat(statePath)
	missing := errors.Is(statErr, fs.ErrNotExist)
	st, err := snapshot.Load(b.cfg.State)
	var why string
	killed := false // the state is a killed build's predecessor
	switch {
	case errors.Is(err, snapshot.ErrCorrupt), errors.Is(err, snapshot.ErrNewerVersion):
		rec, rerr := b.recoverFromOutput()
		if errors.Is(rerr, errNotRsgenOutput) {
			b.warn(WarnState, "", fmt.Sprintf("%v; the output folder %s holds no previous build to rebuild it from, so this build starts afresh", err, b.cfg.Out))
			b.recovered = &recovery{bad: badKind(err)}
			return &snapshot.State{SetChanged: map[string]int64{}}, nil
		}
		if rerr != nil {
			return nil, fmt.Errorf("%w; rebuilding it from the output folder failed: %v", err, rerr)
		}
		rec.bad = badKind(err)
		b.recovered = rec
		b.warn(WarnState, "", fmt.Sprintf("%v; rebuilt it from the build published in %s (%d resources, %d Change Lists); the bad file is kept as %s.%s",
			err, b.cfg.Out, rec.state.NumFiles(), rec.lists, statePath, rec.bad))
		return rec.state, nil
	case err != nil:
		return nil, err
	case b.opts.StateFromOutput:
		why = "--state-from-output"
	case missing:
		why = "no state in " + b.cfg.State
	default:
		if why = b.outputNewer(st); why == "" {
			return st, nil
		}
		killed = true
	}
	rec, err := b.recoverFromOutput()
	if errors.Is(err, errNotRsgenOutput) && !b.opts.StateFromOutput {
		return st, nil // a first build
	}
	if err != nil && killed {
		b.warn(WarnState, "", fmt.Sprintf("%s, but rebuilding the state from the output folder %s failed (%v); this build goes on from the state", why, b.cfg.Out, err))
		return st, nil
	}
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("%s: cannot rebuild the state from the output folder %s: %w", why, b.cfg.Out, err)
	}
	// The loaded state gives way to the recovered one; its file records
	// are not read.
	st.Close()
	if killed {
		// What the output does not hold, the loaded state still knows:
		// it is the one a build after a kill goes on from otherwise.
		rec.state.Archived, rec.state.Versions = st.Archived, st.Versions
		rec.state.Outputs = sortedPaths(append(rec.state.Outputs, st.Outputs...))
	}
	b.recovered = rec
	b.notify(Note{Kind: NoteInfo, Msg: fmt.Sprintf("%s: rebuilt the state from the build published in %s (%d resources, %d Change Lists); every file is read once",
		why, b.cfg.Out, rec.state.NumFiles(), rec.lists)})
	return rec.state, nil
}

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
func (b *recoverer) outputNewer(st *snapshot.State) string {
	names, err := b.publishedSets()
	if err != nil {
		return ""
	}
	for _, name := range names {
		head, err := readPublished(b.sink.Path(layout.ResourceList(name)), nil)
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

// restoreRecovered finishes a recovery before the build writes anything:
// it keeps a bad state file aside and copies the closed Change Lists and
// Change Dumps of the output into the state archive, where they are missing.
func (b *recoverer) restoreRecovered() error {
	rec := b.recovered
	if rec == nil {
		return nil
	}
	if rec.bad != "" {
		p := filepath.Join(b.cfg.State, snapshot.FileName)
		if err := os.Rename(p, p+"."+rec.bad); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("keep the bad state aside: %w", err)
		}
	}
	for _, rel := range rec.archive {
		// The output is the truth the state was rebuilt from: an archived
		// copy that differs (left by a killed build) is replaced.
		dst, src := b.keeper.archivePath(rel), b.sink.Path(rel)
		si, err := os.Stat(src)
		if err != nil {
			return fmt.Errorf("restore kept file: %w", err)
		}
		if di, err := os.Stat(dst); err == nil && (os.SameFile(si, di) || di.Size() == si.Size() && di.ModTime().Equal(si.ModTime())) {
			continue
		}
		if err := sink.Keep(src, dst); err != nil {
			return fmt.Errorf("restore kept file: %w", err)
		}
	}
	return nil
}

// publishedSets returns the names of the sets the output's Source
// Description lists, or errNotRsgenOutput when there is none written by
// rsgen for this base URL.
func (b *recoverer) publishedSets() ([]string, error) {
	var names []string
	head, err := readPublished(b.sink.Path(layout.SourceDescription), func(_ *rs.Head, e *rs.Entry) error {
		rel, ok := layout.PathFromURL(b.base, e.Loc)
		name, inDocs := strings.CutPrefix(rel, layout.DocumentsDir+"/")
		name, isCap := strings.CutSuffix(name, "/capabilitylist.xml")
		if !ok || !inDocs || !isCap || strings.Contains(name, "/") || rel != layout.CapabilityList(name) {
			return fmt.Errorf("%w: %s lists %s, not a Capability List rsgen writes under %s", errNotRsgenOutput, layout.SourceDescription, e.Loc, b.base)
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
func (b *recoverer) outputHoldsBuild() bool {
	_, err := b.publishedSets()
	return err == nil
}

// recoverFromOutput rebuilds the state from the documents in the output:
// per set, its files from the Resource List, its journal from the Change
// Lists and Change Dumps, its dump packages and its archives; and the kept
// versions from the mementos.
func (b *recoverer) recoverFromOutput() (*recovery, error) {
	names, err := b.publishedSets()
	if err != nil {
		return nil, err
	}
	rec := &recovery{}
	st := &snapshot.State{SetChanged: map[string]int64{}, Journals: map[string][]snapshot.Segment{}, BaseURL: b.base}
	outputs := []string{layout.SourceDescription}
	var files snapshot.Records
	for i, name := range names {
		outputs = append(outputs, layout.CapabilityList(name))
		var setFiles snapshot.Records
		at, rlDocs, err := b.recoverResourceList(name, &setFiles)
		if err != nil {
			return nil, err
		}
		outputs = append(outputs, rlDocs...)
		st.SetChanged[name] = at
		st.LastBuild = max(st.LastBuild, at)
		journal, late, listDocs, err := b.recoverJournal(name, at, &setFiles, rec)
		if err != nil {
			return nil, err
		}
		outputs = append(outputs, listDocs...)
		for _, seg := range journal {
			st.LastBuild = max(st.LastBuild, seg.From, seg.Until)
		}
		for _, ev := range late {
			st.LastBuild = max(st.LastBuild, ev.Time)
		}
		st.Journals[name] = journal
		dumpOutputs, err := b.recoverDumps(name, st, rec)
		if err != nil {
			return nil, err
		}
		outputs = append(outputs, dumpOutputs...)
		archiveOutputs, err := b.recoverArchived(name, st, rec)
		if err != nil {
			return nil, err
		}
		outputs = append(outputs, archiveOutputs...)
		setFiles = replayLate(setFiles, late)
		if i == 0 {
			files = setFiles // nothing to merge: a second list of a million records is not made
			continue
		}
		// A file in several sets keeps the record of the first.
		files = mergeRecords(&files, &setFiles)
	}
	st.Files = files
	versionOutputs, err := b.recoverVersions(st, rec)
	if err != nil {
		return nil, err
	}
	outputs = append(outputs, versionOutputs...)
	st.Outputs = sortedPaths(outputs)
	b.spill(st)
	rec.state = st
	return rec, nil
}

// spill moves the recovered file records out of memory into the state
// folder (see snapshot.State.Spill), so that the build that re-reads every
// file holds no more than a build from a saved state: at a million files,
// the recovered records and the scan's together were most of a peak of
// 800 MB. It is only a saving: without a state folder to spill into (rsgen
// plan before any build) or when spilling fails, the records stay in
// memory, and the build goes on as it would have.
func (b *recoverer) spill(st *snapshot.State) {
	if info, err := os.Stat(b.cfg.State); err != nil || !info.IsDir() {
		return
	}
	if err := st.Spill(b.cfg.State); err != nil {
		b.notify(Note{Kind: NoteInfo, Msg: fmt.Sprintf("%v; the recovered records stay in memory", err)})
	}
}

// replayLate applies to files, in walk order, the events newer than their
// Resource List (oldest first): a build killed between the two published
// them only in a Change List.
func replayLate(files snapshot.Records, late []snapshot.Event) snapshot.Records {
	if len(late) == 0 {
		return files
	}
	final := map[string]*snapshot.Record{} // nil: deleted
	for _, ev := range late {
		final[ev.Record.Path] = ev.Record
		if ev.Change == snapshot.Deleted {
			final[ev.Record.Path] = nil
		}
	}
	var created []snapshot.Record
	for p, r := range final {
		switch cur := files.Find(p); {
		case cur != nil && r != nil:
			*cur = *r
		case cur == nil && r != nil:
			created = append(created, *r)
		}
	}
	files.DeleteFunc(func(r *snapshot.Record) bool {
		last, evented := final[r.Path]
		return evented && last == nil
	})
	if len(created) == 0 {
		return files
	}
	slices.SortFunc(created, func(x, y snapshot.Record) int { return layout.ComparePaths(x.Path, y.Path) })
	added := snapshot.RecordsOf(created...)
	return mergeRecords(&files, &added)
}

// mergeRecords merges two lists of records in walk order into one; a path
// in both keeps the record of a.
func mergeRecords(a, b *snapshot.Records) snapshot.Records {
	var out snapshot.Records
	i, j := 0, 0
	for i < a.Len() || j < b.Len() {
		switch {
		case j == b.Len():
			out.Append(*a.At(i))
			i++
		case i == a.Len():
			out.Append(*b.At(j))
			j++
		default:
			c := layout.ComparePaths(a.At(i).Path, b.At(j).Path)
			if c <= 0 {
				out.Append(*a.At(i))
				i++
			} else {
				out.Append(*b.At(j))
				j++
			}
			if c == 0 {
				j++
			}
		}
	}
	return out
}

// recoverJournal rebuilds set name's journal from its Change List Index and
// Change Lists: a segment per list, the open one with its events, each
// closed one with the sums of its copy in the output, which goes back into
// the state archive. It returns the journal, the events newer than the
// Resource List's at (a build killed between the two), oldest first, and
// the output paths it read.
func (b *recoverer) recoverJournal(name string, at int64, setFiles *snapshot.Records, rec *recovery) ([]snapshot.Segment, []snapshot.Event, []string, error) {
	lists, err := b.changeListsOf(name)
	if err != nil {
		return nil, nil, nil, err
	}
	outputs := []string{layout.ChangeListIndex(name)}
	var journal []snapshot.Segment
	var late []snapshot.Event
	// With lastmod from content, every listed file first seen after the
	// baseline has its event at that time in the lists; see dropUnexplained.
	check := b.cfg.Lastmod == config.LastmodContent && len(lists) > 0
	evented := map[eventKey]bool{}
	for _, l := range lists {
		rec.lists++
		outputs = append(outputs, l.rel)
		seg := snapshot.Segment{From: l.from, Until: l.until, Seq: l.seq}
		if l.until != 0 {
			k, err := b.recoverKept(l.rel, rec)
			if err != nil {
				return nil, nil, nil, err
			}
			seg.Kept = append(seg.Kept, k)
		}
		if l.until == 0 || l.until > at || check {
			evs, err := b.readEvents(l.rel)
			if err != nil {
				return nil, nil, nil, err
			}
			for _, ev := range evs {
				evented[eventKey{ev.Time, ev.Change, ev.Record.Path}] = true
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
	if check {
		b.dropUnexplained(setFiles, evented, lists[0].from)
	}
	slices.SortFunc(journal, func(x, y snapshot.Segment) int {
		return cmp.Or(cmp.Compare(x.From, y.From), cmp.Compare(x.Seq, y.Seq))
	})
	for i, seg := range journal {
		if seg.Until == 0 && i != len(journal)-1 {
			return nil, nil, nil, fmt.Errorf("set %s: the Change List opened at %s is open but not the last", name, unixTime(seg.From).Format(time.RFC3339))
		}
	}
	if open := snapshot.Open(journal); open != nil {
		slices.SortStableFunc(open.Events, func(x, y snapshot.Event) int { return cmp.Compare(x.Time, y.Time) })
	}
	slices.SortStableFunc(late, func(x, y snapshot.Event) int { return cmp.Compare(x.Time, y.Time) })
	return journal, late, outputs, nil
}

// recoverKept returns the record of a file kept in the state archive, as
// its copy in the output has it, and puts that copy back into the state
// archive (see restoreRecovered).
func (b *recoverer) recoverKept(rel string, rec *recovery) (snapshot.Kept, error) {
	sum, err := measure(b.sink.Path(rel))
	if err != nil {
		return snapshot.Kept{}, fmt.Errorf("recover %s: %w", rel, err)
	}
	rec.archive = append(rec.archive, rel)
	return snapshot.Kept{Path: rel, Size: sum.size, SHA256: sum.sha256}, nil
}

// sortedPaths sorts paths in walk order and drops repeats.
func sortedPaths(paths []string) []string {
	slices.SortFunc(paths, layout.ComparePaths)
	return slices.Compact(paths)
}

// eventKey identifies one published change event.
type eventKey struct {
	time   int64
	change snapshot.Change
	path   string
}

// dropUnexplained removes from files those whose Resource List entry no
// Change List explains: first seen (lastmod, from content) after the
// baseline at from, with no created or updated event at that time. Such an
// entry was published by a build that was killed before its state was
// saved, and a retry from the old state may have rewritten the Change List
// that held its event without it (it closed the list, knowing nothing of
// the event). Left in, the file would never get its event; dropped, the
// next build finds it and publishes it as created.
func (b *recoverer) dropUnexplained(files *snapshot.Records, evented map[eventKey]bool, from int64) {
	files.DeleteFunc(func(r *snapshot.Record) bool {
		if r.Seen <= from || evented[eventKey{r.Seen, snapshot.Created, r.Path}] || evented[eventKey{r.Seen, snapshot.Updated, r.Path}] {
			return false
		}
		b.notify(Note{Kind: NoteInfo, Path: r.Path, Msg: "listed in the Resource List without its change event (a build was killed); it is published again as created"})
		return true
	})
}

// recoverResourceList reads the Resource List of set name (or its index
// and parts) into files, in walk order, and returns its "at" and its
// output paths.
func (b *recoverer) recoverResourceList(name string, files *snapshot.Records) (int64, []string, error) {
	rel := layout.ResourceList(name)
	docs := []string{rel}
	var parts []string
	head, err := readPublished(b.sink.Path(rel), func(head *rs.Head, e *rs.Entry) error {
		if head.Root == rs.SitemapIndex {
			p, ok := layout.PathFromURL(b.base, e.Loc)
			if !ok {
				return fmt.Errorf("part %s is not under %s", e.Loc, b.base)
			}
			parts = append(parts, p)
			return nil
		}
		return b.recoverEntry(e, files)
	})
	if err != nil {
		return 0, nil, err
	}
	if head.MD.Capability != rs.CapResourceList {
		return 0, nil, fmt.Errorf("%s: capability %q, want %q", rel, head.MD.Capability, rs.CapResourceList)
	}
	for _, p := range parts {
		docs = append(docs, p)
		if _, err := readPublished(b.sink.Path(p), func(_ *rs.Head, e *rs.Entry) error { return b.recoverEntry(e, files) }); err != nil {
			return 0, nil, err
		}
	}
	*files = inWalkOrder(files)
	return unixOf(head.MD.At), docs, nil
}

// inWalkOrder returns files sorted in walk order, a path listed twice with
// its last record. rsgen writes its Resource Lists in walk order, so that
// they are read into order without sorting a million records; a list in
// another order (edited by hand) is sorted.
func inWalkOrder(files *snapshot.Records) snapshot.Records {
	ordered := true
	for i := 1; i < files.Len() && ordered; i++ {
		ordered = layout.ComparePaths(files.At(i-1).Path, files.At(i).Path) < 0
	}
	if ordered {
		return *files
	}
	recs := make([]snapshot.Record, 0, files.Len())
	for _, r := range files.All() {
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

// recoverEntry reads one Resource List entry into files.
func (b *recoverer) recoverEntry(e *rs.Entry, files *snapshot.Records) error {
	r, err := b.pubRecord(e)
	if err != nil {
		return err
	}
	r.Seen = unixOf(e.Lastmod)
	files.Append(r)
	return nil
}

// pubRecord returns the recovered record of a published resource entry.
func (b *recoverer) pubRecord(e *rs.Entry) (snapshot.Record, error) {
	p, ok := layout.PathFromURL(b.resBase, e.Loc)
	if !ok {
		return snapshot.Record{}, fmt.Errorf("resource %s is not under %s", e.Loc, b.resBase)
	}
	r := snapshot.Record{Path: p}
	r.SetType(e.MD.Type)
	if e.MD.Change == rs.ChangeDeleted {
		return r, nil
	}
	var err error
	if r.Digests, err = snapshot.ParseHash(e.MD.Hash); err != nil {
		return r, fmt.Errorf("%s: %w", e.Loc, err)
	}
	if !e.MD.HasLength || e.MD.Length < 0 {
		return r, fmt.Errorf("%s: no length", e.Loc)
	}
	r.Size = e.MD.Length
	return r, nil
}

// pubList is one Change List found in the output.
type pubList struct {
	rel         string
	from, until int64
	seq         int
}

// changeListsOf returns the Change Lists of set name that its Change List
// Index lists, oldest first.
func (b *recoverer) changeListsOf(name string) ([]pubList, error) {
	var lists []pubList
	idx := layout.ChangeListIndex(name)
	_, err := readPublished(b.sink.Path(idx), func(_ *rs.Head, e *rs.Entry) error {
		rel, ok := layout.PathFromURL(b.base, e.Loc)
		if !ok {
			return fmt.Errorf("%s lists %s, not under %s", idx, e.Loc, b.base)
		}
		lists = append(lists, pubList{rel: rel})
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for i := range lists {
		l := &lists[i]
		head, err := readPublished(b.sink.Path(l.rel), nil)
		if err != nil {
			return nil, err
		}
		if l.from, l.until = unixOf(head.MD.From), unixOf(head.MD.Until); l.from == 0 {
			return nil, fmt.Errorf("%s: no from", l.rel)
		}
		seq, named := changeListSeq(name, l.from, l.rel)
		if !named {
			return nil, fmt.Errorf("%s: not the name rsgen gives the Change List opened at %s", l.rel, head.MD.From.Format(time.RFC3339))
		}
		l.seq = seq
	}
	return lists, nil
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
func (b *recoverer) readEvents(rel string) ([]snapshot.Event, error) {
	var evs []snapshot.Event
	_, err := readPublished(b.sink.Path(rel), func(_ *rs.Head, e *rs.Entry) error {
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
		r, err := b.pubRecord(e)
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

// readPublished streams the document rsgen published at path through
// rs.Reader (bounded, as every document rsgen writes is), calling entry,
// when not nil, for each entry with the document's head; with a nil entry
// it reads only the head.
func readPublished(path string, entry func(*rs.Head, *rs.Entry) error) (*rs.Head, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := rs.NewReader(f)
	head, err := r.Head()
	if err == nil && entry != nil {
		err = r.Entries(func(e *rs.Entry) error { return entry(head, e) })
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return head, nil
}

// unixOf returns a time read from a document in Unix seconds; the zero
// time (the attribute was left out) is 0.
func unixOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}
