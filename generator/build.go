package generator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/rsgen/rsgen/config"
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
	rw := &rewriter{s: b.site}
	if _, err := b.runScan(ctx, rw.measuringTee(), rw); err != nil {
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

// runScan runs the scan stage and makes the next state of its files.
func (b *builder) runScan(ctx context.Context, tee snapshot.Tee, rw *rewriter) ([]snapshot.Event, error) {
	sc, err := scan(ctx, b.site, b.src, b.loaded, tee, rw, b.sum)
	if err != nil {
		return nil, err
	}
	b.scanned = sc
	b.next = &snapshot.State{LastBuild: b.now, ScanStart: sc.start, BaseURL: b.base, ResourceBaseURL: b.resBase, HTMLLink: b.tags, Files: sc.files,
		SetChanged: map[string]int64{}}
	return sc.events, nil
}

func (b *builder) build(ctx context.Context) (_ *Summary, err error) {
	rw := &rewriter{s: b.site}
	out, err := b.openOutput(rw)
	if err != nil {
		return nil, err
	}
	defer func() {
		if derr := out.discard(); derr != nil {
			err = errors.Join(err, derr)
		}
	}()
	defer b.sink.Discard()
	events, err := b.runScan(ctx, out.tee(), rw)
	if err != nil {
		return nil, err
	}
	if err := out.placeAll(ctx, &b.next.Files, b.scanned.places.list()); err != nil {
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
