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
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// Options configures one build beyond the configuration.
type Options struct {
	// Now is the build's time. The caller takes it from --now,
	// SOURCE_DATE_EPOCH or the clock; the generator never reads a clock
	// for anything it publishes.
	Now time.Time
	// Verify re-reads every file instead of trusting unchanged stat.
	Verify bool
	// ConfigFile is the configuration file, left out of the scan when it
	// lies inside the source.
	ConfigFile string
	// Notify, when set, receives progress and warnings as they happen. It
	// may be called from several goroutines at once.
	Notify func(Note)

	// StateFromOutput rebuilds the state from the output folder even when
	// it loads (see recover.go); a missing or corrupt state is rebuilt
	// from the output anyway.
	StateFromOutput bool
	// Wait waits for another build holding the state's lock instead of
	// failing at once.
	Wait bool
	// SkipUnreadable turns files and folders that cannot be read for lack
	// of permission into warnings instead of a failed build.
	SkipUnreadable bool
	// Force lets a first build publish into a non-empty output folder
	// that holds no rsgen build.
	Force bool
	// Rebase confirms a new base URL: the Source starts afresh there (see
	// continuity.go).
	Rebase bool
	// RemoveSets confirms that the sets the state published and the
	// configuration no longer has are removed with their documents.
	RemoveSets bool
	// ListUnlisted fills Summary.UnlistedPaths (rsgen status --explain).
	ListUnlisted bool
	// ListEvents fills Summary.Events of a first build too (see Summary).
	ListEvents bool
	// Exclude names more folders left out of the scan when they lie in the
	// source: a development build's own output and state live inside the
	// production state folder, which it leaves out.
	Exclude []string

	// limits overrides the per-document limits in tests.
	limits limits
}

// spillAfter is how many records a scan holds in memory before it spills
// them into the state folder (snapshot.ScanOptions.SpillAfter); 0 is
// snapshot's default. The tests spill after one record, so that each of
// their builds takes the path of a large one.
var spillAfter int

// limits are the most entries and bytes one document may hold.
type limits struct {
	entries int
	bytes   int64
}

// NoteKind says what a Note reports.
type NoteKind int

// The notes a build sends.
const (
	NoteWarning NoteKind = iota + 1 // something left out or adjusted
	NoteHashed                      // a file was read
	NoteWritten                     // a document or resource was written
	NoteFound                       // a source file was found; Read: it will be read
	NoteWalked                      // every source file is found; reading may go on
	// NoteInfo reports something the user should know that is not a
	// problem, such as a state rebuilt from the output.
	NoteInfo
)

// Note reports one thing a build did.
type Note struct {
	Kind  NoteKind
	Code  string // NoteWarning: what kind of problem, for grouping (the Warn constants)
	Path  string
	Bytes int64 // NoteFound: -1 when the size is known only once the file is read
	Msg   string
	Read  bool // NoteFound: the file is read by this build (NoteHashed follows)
}

// Summary is the outcome of a build or a plan.
type Summary struct {
	Now                       time.Time
	Files                     int
	Created, Updated, Deleted int
	Hashed                    int
	HashedBytes               int64
	Skipped                   int
	// LeftOut counts the files and folders left out because they cannot
	// be published (a URI too long for a list).
	LeftOut          int
	ResourcesPlaced  int
	ResourcesRemoved int
	// Outputs counts the files the build wrote beside the resources, by
	// kind: Outputs[sink.Document] are the ResourceSync documents.
	Outputs [sink.NumKinds]sink.Counts
	// Unlisted counts the files published in no set: placed in the
	// output, but advertised by no document; with Options.ListUnlisted,
	// UnlistedPaths names them.
	Unlisted      int
	UnlistedPaths []string
	// Sets are the counts of each set.
	Sets []SetSummary
	// ScanTime is how long the scan took (wall clock, for reports only).
	ScanTime time.Duration
	// Events are the change events of this build, in walk order. Those of
	// a first build, whose Resource List is the baseline and whose events
	// no Change List publishes, are there only when Options.ListEvents
	// asks: at a million files, they hold a million records.
	Events []snapshot.Event
}

// SetSummary counts the resources of one set and this build's changes to
// them.
type SetSummary struct {
	Name                      string
	Resources                 int
	Created, Updated, Deleted int
}

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
	if lock.StalePID > 0 && opts.Notify != nil {
		opts.Notify(Note{Kind: NoteWarning, Code: WarnState, Path: filepath.Join(cfg.State, snapshot.LockFile), Msg: fmt.Sprintf(
			"took over the lock of process %d, which is no longer running (a build was killed; this one repairs what it left)", lock.StalePID)})
	}
	if opts.Notify != nil {
		opts.Notify = (&onceNotes{notify: opts.Notify, sent: map[Note]bool{}}).note
	}
	for scans := 1; ; scans++ {
		sum, err := buildOnce(ctx, cfg, opts, lock.Leftover)
		switch {
		case !errors.Is(err, errRemovedSinceScan):
			return sum, err
		case scans == maxScans:
			return nil, fmt.Errorf("%w; the source was scanned %d times, and each time a file went away before the build could publish it", err, scans)
		case opts.Notify != nil:
			opts.Notify(Note{Kind: NoteInfo, Msg: fmt.Sprintf("%v; scanning the source again", err)})
		}
	}
}

// buildOnce runs one build under the state's lock, interrupted tells
// prepare that the last build may not have finished.
func buildOnce(ctx context.Context, cfg *config.Config, opts Options, interrupted bool) (_ *Summary, err error) {
	b, err := newBuilder(cfg, opts)
	if err != nil {
		return nil, err
	}
	defer b.close()
	defer snapshot.Catch(&err)
	if err := b.prepare(interrupted); err != nil {
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
	defer snapshot.Catch(&err)
	if _, err := b.scan(ctx, b.linker.measuringTee()); err != nil {
		return nil, err
	}
	b.listEvents()
	return b.sum, nil
}

func newBuilder(cfg *config.Config, opts Options) (*builder, error) {
	base, err := layout.ParseBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("generator: base_url: %w", err)
	}
	resBase := resourceBase(cfg)
	if opts.limits == (limits{}) {
		opts.limits = limits{rs.MaxEntries, rs.MaxBytes}
	}
	if err := checkConfiguredSizes(cfg, base, opts.limits); err != nil {
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
	b := newParts(&run{cfg: cfg, opts: opts, algs: cfg.Hashes, sets: newSets(cfg), src: src,
		base: base, resBase: resBase, sum: &Summary{}})
	b.sink = sink.New(cfg.Out, func(rel string) { b.notify(Note{Kind: NoteWritten, Path: rel}) })
	if b.prev, err = b.recoverer.loadState(); err != nil {
		src.Close()
		return nil, err
	}
	b.journals.migrateShared(b.prev)
	if err := b.checkContinuity(); err != nil {
		b.close()
		return nil, err
	}
	if b.intent, err = snapshot.LoadIntent(cfg.State); err != nil {
		b.close()
		return nil, err
	}
	b.now = b.clampedNow()
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
func (b *builder) listEvents() {
	if !b.opts.ListEvents || !b.baseline() {
		return
	}
	events := b.sum.Events
	all := make([]snapshot.Event, 0, b.sum.Created+len(events))
	for _, r := range b.next.Files.All() {
		for len(events) > 0 && layout.ComparePaths(events[0].Record.Path, r.Path) < 0 {
			all, events = append(all, events[0]), events[1:]
		}
		if r.Change == snapshot.Created {
			all = append(all, snapshot.Event{Change: snapshot.Created, Time: b.now, Record: r})
		}
	}
	b.sum.Events = append(all, events...)
}

// spillDir returns the folder into which a large scan spills its records,
// and recovery the records it rebuilds: the state folder, unless there is
// none yet (rsgen plan before the first build), when the records stay in
// memory.
func (b *run) spillDir() string {
	if info, err := os.Stat(b.cfg.State); err != nil || !info.IsDir() {
		return ""
	}
	return b.cfg.State
}

// spillFile makes the file a list of paths spills into: an unnamed file
// of the state folder (see spillDir).
func (b *run) spillFile() (chunked.File, error) {
	dir := b.spillDir()
	if dir == "" {
		return nil, errors.New("no state folder yet")
	}
	return snapshot.UnnamedFile(dir)
}

// pathList returns an empty list of paths that moves its full blocks into
// a file of the state folder (spillFile), so that a build holds a block of
// it however long it grows; without a state folder, it stays in memory.
func (b *run) pathList() chunked.Strings {
	return chunked.Strings{Spill: b.spillFile, BlockSize: spillBlockSize}
}

// newRecordFile returns where records the build makes go, what says
// which: an unnamed file of the state folder (see snapshot.RecordFile), so
// that a build holds a buffer of them, not all (at a million files, the
// recovered records in memory were 140 MB of a peak of 280 MB). It is only
// a saving: without a state folder to write into (rsgen plan before any
// build), or when the file cannot be made, the records stay in memory, and
// the build goes on as it would have.
func (b *run) newRecordFile(what string) *snapshot.RecordFile {
	f, err := snapshot.NewRecordFile(b.spillDir())
	if err != nil {
		b.notify(Note{Kind: NoteInfo, Msg: fmt.Sprintf("%v; %s stay in memory", err, what)})
		f, _ = snapshot.NewRecordFile("")
	}
	return f
}

// resourceBase returns the base URL of the resources, with a trailing
// slash: resource_base_url, else base_url. Validate has checked both.
func resourceBase(cfg *config.Config) string {
	u := cfg.BaseURL
	if cfg.ResourceBaseURL != "" {
		u = cfg.ResourceBaseURL
	}
	base, _ := layout.ParseBaseURL(u)
	return base
}

// clampedNow returns the build time in whole seconds, never before the
// previous build, so that Change Lists stay in chronological order when a
// clock runs backwards.
func (b *builder) clampedNow() int64 {
	now := b.opts.Now.Unix()
	if now < b.prev.LastBuild {
		b.warn(WarnClock, "", fmt.Sprintf("build time %s is before the previous build (%s); using the previous build's time",
			b.opts.Now.UTC().Format(time.RFC3339), time.Unix(b.prev.LastBuild, 0).UTC().Format(time.RFC3339)))
		return b.prev.LastBuild
	}
	return now
}

func (b *run) notify(n Note) {
	if b.opts.Notify != nil {
		b.opts.Notify(n)
	}
}

// The codes of warnings, by which they are grouped for people.
const (
	WarnSymlink    = snapshot.SkipSymlink    // a symbolic link not followed: follow_symlinks is off
	WarnSpecial    = snapshot.SkipSpecial    // a FIFO, socket or device skipped
	WarnUnreadable = snapshot.SkipUnreadable // a file or folder skipped for lack of permission
	WarnURITooLong = "uri-too-long"          // a file left out: its URI is too long for a list
	WarnDotfiles   = "dotfiles"              // dotfiles left out at the top of the source
	WarnHTMLHead   = "html-head"             // html_link found no <head> to put the link in
	WarnJSONPatch  = "json-patch"            // an update of a JSON resource that gets no patch
	WarnLost       = "lost"                  // something that cannot be made again was lost
	WarnClock      = "clock"                 // the build time runs backwards
	WarnState      = "state"                 // the state was rebuilt or could not be
	WarnHosting    = "hosting"               // a hosting file cannot say everything
	WarnSet        = "set"                   // a set that publishes nothing
	WarnBaseURL    = "base-url"              // a base URL Destinations will not find

	// WarnSymlinkRefused is a symbolic link that follow_symlinks does not
	// follow: it points outside the source, loops or is broken.
	WarnSymlinkRefused = snapshot.SkipSymlinkRefused
	// WarnUnreadableKept is a file, or a folder of files, that cannot be
	// read, whose last published version is kept (--skip-unreadable).
	WarnUnreadableKept = snapshot.KeptUnreadable
)

func (b *run) warn(code, path, msg string) {
	b.notify(Note{Kind: NoteWarning, Code: code, Path: path, Msg: msg})
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
	b.intact = b.outputIntact()
	reread := b.linker.rereadRewritten()
	foldCase, err := sink.FoldsCase(b.cfg.Out)
	if err != nil {
		return nil, err
	}
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
		SpillDir:       b.spillDir(),
		SpillAfter:     spillAfter,
		Baseline:       b.baseline(),
		FoldCase:       foldCase,
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
		var te *snapshot.TeeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("output folder: write %s: %w", b.sink.Path(te.Path), te.Err)
		}
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("scan %s: %w", filepath.Join(b.cfg.Source, filepath.FromSlash(pe.Path)), pe.Err)
		}
		return nil, fmt.Errorf("scan %s: %w", b.cfg.Source, err)
	}
	if err := reserved.err(); err != nil {
		return nil, err
	}
	b.next = &snapshot.State{LastBuild: b.now, ScanStart: scanStart, BaseURL: b.base, ResourceBaseURL: b.resBase, HTMLLink: b.linker.tagsConfig(), Files: files,
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
	out.overTypeChange = out.typeChanges(events)
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
	b.listEvents()
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
	return &placements{b: b, checkAll: b.opts.Verify || b.recoverer.recovered != nil}
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

// outputIntact reports whether the output looks like the last build's:
// there was one, and its Source Description and the first resource it
// published are there. The parts that trust the output without a stat
// per file (placements, rewritten pages, kept versions) share one answer,
// taken before the scan places anything (b.intact): each judged at a file
// of its own, a page whose copy was lost went unread by the scan, which
// judged the output at the last build's first file, still there, and was
// checked by placements, which judged it at this build's, the page: the
// build failed where it could have read the page.
func (b *run) outputIntact() bool {
	if b.prev.LastBuild == 0 {
		return false
	}
	if _, err := os.Lstat(b.sink.Path(layout.SourceDescription)); err != nil {
		return false
	}
	for r, err := range b.prev.Records() {
		if err != nil {
			return false
		}
		_, err := os.Lstat(b.sink.Path(r.Path))
		return err == nil
	}
	return false
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
