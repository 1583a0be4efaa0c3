package generator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/hosting"
	"github.com/rsgen/rsgen/internal/chunked"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// Build runs one build: scan, diff, place resources, write documents,
// remove what is obsolete, and save the snapshot.
func Build(ctx context.Context, cfg *config.Config, opts Options) (_ *Summary, err error) {
	lock, err := snapshot.AcquireLock(ctx, cfg.State, opts.Wait, func(msg string) {
		if opts.Notify != nil {
			opts.Notify(Note{Kind: NoteInfo, Path: filepath.Join(cfg.State, snapshot.LockFile), Msg: msg})
		}
	})
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	b, err := newBuilder(cfg, opts)
	if err != nil {
		return nil, err
	}
	defer b.close()
	if lock.StalePID > 0 {
		b.warn(WarnState, filepath.Join(cfg.State, snapshot.LockFile), fmt.Sprintf(
			"took over the lock of process %d, which is no longer running (a build was killed; this one repairs what it left)", lock.StalePID))
	}
	if err := prepare(b.site, b.loaded, lock.Leftover); err != nil {
		return nil, err
	}
	return b.build(ctx)
}

// Plan scans and diffs like Build but writes nothing: its Summary holds the
// events the next build would publish.
func Plan(ctx context.Context, cfg *config.Config, opts Options) (_ *Summary, err error) {
	b, err := newBuilder(cfg, opts)
	if err != nil {
		return nil, err
	}
	defer b.close()
	if _, err := b.scan(ctx, b.linker.measuringTee()); err != nil {
		return nil, err
	}
	if err := b.listEvents(); err != nil {
		return nil, err
	}
	return b.sum, nil
}

func newBuilder(cfg *config.Config, opts Options) (*builder, error) {
	site, err := resolve(cfg, opts)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(cfg.Source)
	if err != nil {
		return nil, fmt.Errorf("source folder: %w", err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("source %s is not a folder", cfg.Source)
	}
	src, err := snapshot.OpenTree(cfg.Source, cfg.FollowSymlinks)
	if err != nil {
		return nil, fmt.Errorf("source folder: %w", err)
	}
	prev, err := load(site)
	if err != nil {
		src.Close()
		return nil, err
	}
	b := newParts(&run{site: site, src: src, sum: &Summary{}, loaded: prev, prev: prev.state, intent: prev.intent,
		now: prev.now, intact: prev.intact, recovered: prev.recovered})
	b.archiver.arch.prune = prev.pruned
	b.sink = sink.New(cfg.Out, func(rel string) { b.notify(Note{Kind: NoteWritten, Path: rel}) })
	b.sum.Now = time.Unix(b.now, 0).UTC()
	return b, nil
}

// close lets go of the source folder, the previous state's file and the
// file of the scan's spilled records.
func (b *builder) close() {
	b.src.Close()
	b.prev.Close()
	if b.next != nil {
		b.next.Files.Close()
		b.next.Close()
	}
}

// baseline reports whether this is a first build, whose Resource List is
// the baseline: no Change List publishes its events (§12.1).
func (b *builder) baseline() bool { return b.prev.LastBuild == 0 }

// listEvents fills Summary.Events with every event of a first build, when
// Options.ListEvents asks: the creations, which the scan left out of its
// events, from the records, and the scan's events, in walk order.
func (b *builder) listEvents() error {
	if !b.opts.ListEvents || !b.baseline() {
		return nil
	}
	events := b.sum.Events
	all := make([]snapshot.Event, 0, b.sum.Created+len(events))
	for r, err := range b.next.Files.All() {
		if err != nil {
			return err
		}
		for len(events) > 0 && layout.ComparePaths(events[0].Record.Path, r.Path) < 0 {
			all, events = append(all, events[0]), events[1:]
		}
		if r.Change == snapshot.Created {
			all = append(all, snapshot.Event{Change: snapshot.Created, Time: b.now, Record: r})
		}
	}
	b.sum.Events = append(all, events...)
	return nil
}

// recordVisitor is handed each record of the scan, with its index, as it
// settles (see snapshot.ScanOptions.Visit).
type recordVisitor func(i int, r *snapshot.Record) error

// scan walks the source and diffs it against the snapshot, filling b.next
// with the new file list and b.sum with the counts and events, and hands
// every record to the visitors as the scan settles it: a large scan's
// records are spilled, and reading them back costs a decoding of each
// (about 0.3 s at a million files).
func (b *builder) scan(ctx context.Context, tee snapshot.Tee, visitors ...recordVisitor) ([]snapshot.Event, error) {
	scanStart := time.Now().UnixNano() // wall clock: only for the racy-file check
	b.sum.Sets = make([]SetSummary, len(b.sets))
	reserved := b.reservedPaths()
	visitors = append([]recordVisitor{b.countInSets, b.linker.warnHeadless}, visitors...)
	if b.cfg.CopyResources { // else the source files are not in the output
		visitors = append(visitors, reserved.visit)
	}
	var visitErr error
	reread := b.linker.rereadRewritten()
	files, events, stats, err := snapshot.Scan(ctx, b.prev, snapshot.ScanOptions{
		FS:         b.src,
		Algorithms: b.algs,
		Exclude:    b.excluder().Exclude,
		Verify:     b.opts.Verify,
		Reread:     func(old *snapshot.Record) bool { return reread && (old.Rewritten || b.linker.rewrites(old.Path)) },
		Tee:        tee,
		Notify:     b.scanNote,
		Now:        b.now,
		Adjust:     b.linker.applyRewrite,

		FollowSymlinks: b.cfg.FollowSymlinks,
		SkipUnreadable: b.opts.SkipUnreadable,
		SpillDir:       spillDir(b.cfg.State),
		SpillAfter:     spillAfter,
		Baseline:       b.baseline(),
		Visit: func(i int, r *snapshot.Record) error {
			for _, v := range visitors {
				if visitErr = v(i, r); visitErr != nil {
					return visitErr
				}
			}
			return nil
		},
	})
	if visitErr != nil {
		return nil, visitErr // it says what and where
	}
	if err != nil {
		var pe *snapshot.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("scan %s: %w", filepath.Join(b.cfg.Source, filepath.FromSlash(pe.Path)), pe.Err)
		}
		return nil, fmt.Errorf("scan %s: %w", b.cfg.Source, err)
	}
	if err := reserved.err(); err != nil {
		return nil, err
	}
	b.next = &snapshot.State{LastBuild: b.now, ScanStart: scanStart, BaseURL: b.base, ResourceBaseURL: b.resBase, HTMLLink: b.tags, Files: files,
		SetChanged: map[string]int64{}}
	b.summarizeSets(events)
	s := b.sum
	s.ScanTime = time.Duration(time.Now().UnixNano() - scanStart)
	s.Files, s.Hashed, s.HashedBytes, s.Skipped = stats.Files, stats.Hashed, stats.HashedBytes, stats.Skipped
	s.Events = events
	return events, nil
}

// excluder returns the scan's excluder, which counts and reports the
// files left out because they cannot be published.
func (b *builder) excluder() *excluder {
	ex := newExcluder(b.cfg, b.opts.ConfigFile, b.resBase, b.opts.Exclude...)
	ex.unpublishable = func(p, reason string) {
		b.sum.LeftOut++
		b.warn(WarnURITooLong, p, reason)
	}
	return ex
}

// reservedPaths finds the source files at paths rsgen writes its own
// files at (a scan visits with it when resources are copied into the
// output): each is refused,
// and all of them are named at once, so that one build lists what to
// rename or exclude.
type reservedPaths struct {
	source       string
	hostingFiles []string
	found        []string // messages, the first maxReservedListed
	n            int
}

// maxReservedListed bounds the source files a refusal names.
const maxReservedListed = 10

func (b *builder) reservedPaths() *reservedPaths {
	return &reservedPaths{source: b.cfg.Source, hostingFiles: hosting.Files(&b.cfg.Publish)}
}

// visit notes r when rsgen writes its own file at its path.
func (rp *reservedPaths) visit(_ int, r *snapshot.Record) error {
	var why string
	switch {
	case layout.IsReserved(r.Path):
		why = "would be overwritten by rsgen's own documents at the same path: rename it or exclude it"
	case slices.Contains(rp.hostingFiles, r.Path):
		why = "would be overwritten by the file rsgen writes for [publish] (targets or robots): exclude it, or turn that off and write the file yourself"
	default:
		return nil
	}
	if rp.n++; len(rp.found) < maxReservedListed {
		rp.found = append(rp.found, fmt.Sprintf("source file %s %s", filepath.Join(rp.source, filepath.FromSlash(r.Path)), why))
	}
	return nil
}

// err refuses the source files found: the one, or how many on a line of
// its own and then one per line.
func (rp *reservedPaths) err() error {
	switch {
	case rp.n == 0:
		return nil
	case rp.n == 1:
		return errors.New(rp.found[0])
	}
	msg := fmt.Sprintf("%d source files are at paths rsgen writes its own files at:\n  %s", rp.n, strings.Join(rp.found, "\n  "))
	if rp.n > len(rp.found) {
		msg += fmt.Sprintf("\n  and %d more", rp.n-len(rp.found))
	}
	return errors.New(msg)
}

// countInSets counts the record in the resources of each set it is in, or
// in the files in no set, and in the files created or updated: the events
// of a first build do not say (see snapshot.ScanOptions.Baseline).
func (b *builder) countInSets(_ int, r *snapshot.Record) error {
	switch r.Change {
	case snapshot.Created:
		b.sum.Created++
	case snapshot.Updated:
		b.sum.Updated++
	}
	listed := false
	for k, s := range b.sets {
		if s.Contains(r.Path) {
			b.sum.Sets[k].Resources++
			listed = true
			switch r.Change {
			case snapshot.Created:
				b.sum.Sets[k].Created++
			case snapshot.Updated:
				b.sum.Sets[k].Updated++
			}
		}
	}
	if !listed {
		b.sum.Unlisted++
		if b.opts.ListUnlisted {
			b.sum.UnlistedPaths = append(b.sum.UnlistedPaths, r.Path)
		}
	}
	return nil
}

// summarizeSets counts the deletions, in all and in each set (countInSets
// counts the other changes), and warns about a set that publishes
// nothing: its folder is missing, or nothing matches its globs.
func (b *builder) summarizeSets(events []snapshot.Event) {
	for i, s := range b.sets {
		b.sum.Sets[i].Name = s.Name
	}
	for _, ev := range events {
		if ev.Change != snapshot.Deleted {
			continue
		}
		b.sum.Deleted++
		for k, s := range b.sets {
			if s.Contains(ev.Record.Path) {
				b.sum.Sets[k].Deleted++
			}
		}
	}
	for k, s := range b.sets {
		if b.sum.Sets[k].Resources > 0 {
			continue
		}
		if _, err := os.Stat(filepath.Join(b.cfg.Source, filepath.FromSlash(s.prefix))); s.prefix != "" && err != nil {
			b.warn(WarnSet, "", fmt.Sprintf("set %s publishes nothing: its path %s is not a folder of the source %s", s.Name, strings.TrimSuffix(s.prefix, "/"), b.cfg.Source))
		} else {
			b.warn(WarnSet, "", fmt.Sprintf("set %s publishes nothing: no file of the source matches its path and globs (rsgen status --explain lists what is left out)", s.Name))
		}
	}
}

func (b *builder) scanNote(n snapshot.Note) {
	switch n.Kind {
	case snapshot.NoteSkipped:
		b.warn(n.Code, n.Path, n.Msg)
	case snapshot.NoteHashed:
		b.notify(Note{Kind: NoteHashed, Path: n.Path, Bytes: n.Bytes})
	case snapshot.NoteFound:
		b.notify(Note{Kind: NoteFound, Path: n.Path, Bytes: n.Bytes, Read: n.Read})
	case snapshot.NoteWalked:
		b.notify(Note{Kind: NoteWalked})
	case snapshot.NoteInfo:
		b.notify(Note{Kind: NoteInfo, Msg: n.Msg})
	}
}

func (b *builder) build(ctx context.Context) (_ *Summary, err error) {
	out, err := b.openOutput()
	if err != nil {
		return nil, err
	}
	defer func() {
		if derr := out.discard(); derr != nil {
			err = errors.Join(err, derr)
		}
	}()
	defer b.sink.Discard()
	places := b.placements()
	events, err := b.scan(ctx, out.tee(), places.visit, b.lister.collectMembers)
	if err != nil {
		return nil, err
	}
	if err := out.placeAll(ctx, &b.next.Files, places.list()); err != nil {
		return nil, err
	}
	b.sum.ResourcesPlaced = int(out.placed.Load())
	if b.baseline() {
		// The first build's Resource List is the baseline; its Change List
		// opens empty at the same time (§12.1).
		events = nil
	}
	if err := b.writeStylesheet(); err != nil {
		return nil, err
	}
	if err := b.writeViewer(); err != nil {
		return nil, err
	}
	closed, err := b.journals.advanceJournals(events)
	if err != nil {
		return nil, err
	}
	b.archiver.retain()
	b.recordSetChanges(events)
	if err := b.versioner.keepVersions(ctx, closed); err != nil {
		return nil, err
	}
	if err := b.writeDocuments(ctx, closed); err != nil {
		return nil, err
	}
	if err := b.writeHosting(); err != nil {
		return nil, err
	}
	if err := b.saveIntent(); err != nil {
		return nil, err
	}
	if err := b.sink.Commit(); err != nil {
		return nil, err
	}
	if err := b.keeper.keepCommitted(); err != nil {
		return nil, err
	}
	out.keepAdded()
	if err := b.removeObsolete(); err != nil {
		return nil, err
	}
	b.next.Outputs = b.sink.Outputs()
	b.keeper.pruneUnkept()
	if err := snapshot.Save(b.cfg.State, b.next); err != nil {
		return nil, err
	}
	if err := snapshot.ClearIntent(b.cfg.State); err != nil {
		return nil, err
	}
	if err := b.archiver.pruneArchive(); err != nil {
		return nil, err
	}
	b.sum.Outputs = b.sink.Counts()
	if err := b.listEvents(); err != nil {
		return nil, err
	}
	return b.sum, nil
}

// placement says how much placeAll must check of one resource's output
// copy.
type placement uint8

const (
	placeCheck placement = iota // stat the copy and place it when stale
	placeKept                   // the previous build placed this very record: trusted
	placeNew                    // never published: link without looking first
	placeDone                   // the scan's tee placed it already
)

// placements tells placeAll what to check of each file: of is nil to check
// everything, or holds a placement per record, which visit fills in. A
// record equal to the one the previous build placed is trusted as the
// record is, without a stat (on a rebuild of a large tree that stat costs
// as much as the scan), unless --verify asks, the state was recovered, or
// the output does not look like the last build's: its Source Description
// or first resource is missing (a fresh or wiped output folder). A file
// the previous build did not have is linked at once: a link fails if
// anything is in the way, and only then is the path looked at.
type placements struct {
	b        *builder
	checkAll bool                    // --verify, or a recovered state: of stays empty
	of       chunked.List[placement] // a byte per record, in chunks: no copy as it grows
}

func (b *builder) placements() *placements {
	return &placements{b: b, checkAll: b.opts.Verify || b.recovered != nil}
}

// visit adds the placement of record i, a visitor of the scan's records.
func (p *placements) visit(i int, cur *snapshot.Record) error {
	if p.checkAll {
		return nil
	}
	place := placeCheck
	switch {
	case cur.Placed:
		place = placeDone
	case cur.Change == snapshot.Created:
		place = placeNew
	case p.b.intact && cur.Unchanged:
		place = placeKept
	}
	p.of.Append(place)
	return nil
}

// list returns the placement of each record, or nil to check them all.
func (p *placements) list() *chunked.List[placement] {
	if p.checkAll {
		return nil
	}
	return &p.of
}

// recordSetChanges carries over, per set, the time of the last build that
// changed it, moving it to now for the sets this build's events touch.
func (b *builder) recordSetChanges(events []snapshot.Event) {
	for _, s := range b.sets {
		t, ok := b.prev.SetChanged[s.Name]
		if !ok || slices.ContainsFunc(events, func(ev snapshot.Event) bool { return s.Contains(ev.Record.Path) }) {
			t = b.now
		}
		b.next.SetChanged[s.Name] = t
	}
}

// removeObsolete deletes the documents the previous build wrote and this
// one did not, and the copies of resources no longer published.
func (b *builder) removeObsolete() error {
	written := make(map[string]bool, len(b.sink.Outputs()))
	for _, p := range b.sink.Outputs() {
		written[p] = true
	}
	for _, p := range b.prev.Outputs {
		if !b.writes(p, written) {
			if err := b.sink.Remove(p); err != nil {
				return err
			}
		}
	}
	for _, p := range b.versioner.obsolete {
		if err := b.sink.Remove(p); err != nil {
			return err
		}
	}
	if err := b.removeIntended(written); err != nil {
		return err
	}
	if !b.cfg.CopyResources {
		return nil
	}
	for _, ev := range b.sum.Events {
		if ev.Change == snapshot.Deleted {
			if err := b.sink.RemoveFile(ev.Record.Path); err != nil {
				return err
			}
			b.sum.ResourcesRemoved++
		}
	}
	return nil
}
