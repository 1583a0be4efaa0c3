package generator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// Build runs one build, stage by stage (see the package comment): resolve
// the site, load the previous state, scan the source, plan every document,
// write them, and commit. A source file removed between the scan and its
// use makes it start again, under the same lock (rescan.go).
func Build(ctx context.Context, cfg *config.Config, opts Options) (*Summary, error) {
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

// buildOnce runs one build under the state's lock; interrupted tells
// prepare that the last build may not have finished.
func buildOnce(ctx context.Context, cfg *config.Config, opts Options, interrupted bool) (*Summary, error) {
	s, err := resolve(cfg, opts)
	if err != nil {
		return nil, err
	}
	src, err := openSourceTree(cfg)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	prev, err := loadContinued(s)
	if err != nil {
		return nil, err
	}
	defer prev.close()
	if err := prepare(s, prev, interrupted); err != nil {
		return nil, err
	}
	if prev.kept, err = survey(s, prev.state); err != nil {
		return nil, err
	}
	return runStages(ctx, s, src, prev, interrupted)
}

// runStages runs the stages of a build after the load: scan, plan, write,
// commit; or, after a scan that shows the build publishes what the last
// one did (unchanged.go), none but the record that it ran, or the state
// saved with the stats the scan found. interrupted says that the last build
// may not have finished.
func runStages(ctx context.Context, s *site, src *snapshot.Tree, prev *loaded, interrupted bool) (_ *Summary, err error) {
	sum := &Summary{Now: time.Unix(prev.now, 0).UTC()}
	w := sink.New(s.cfg.Out, func(rel string) { s.notify(Note{Kind: NoteWritten, Path: rel}) })
	rw := &rewriter{s: s}
	out, err := openOutput(s, src, w, rw)
	if err != nil {
		return nil, err
	}
	defer func() {
		if derr := out.discard(); derr != nil {
			err = errors.Join(err, derr)
		}
	}()
	defer w.Discard()
	sc, err := scan(ctx, s, src, prev, out.tee(), rw, sum)
	if err != nil {
		return nil, err
	}
	defer sc.close()
	switch unchanged(s, prev, sc, interrupted) {
	case publishAsIs:
		err = publishedAsIs(s, prev, sc, sum)
	case publishRestated:
		err = publishedRestated(ctx, s, prev, sc, out, w, sum)
	default:
		return writeAndCommit(ctx, s, src, prev, sc, out, w, sum)
	}
	if err != nil {
		return nil, err
	}
	return sum, nil
}

// writeAndCommit runs the stages of a full build after the scan sc: plan,
// write and commit, placing the resources through out and the documents
// through the sink w, and counting what they did in sum.
func writeAndCommit(ctx context.Context, s *site, src *snapshot.Tree, prev *loaded, sc *scanned, out *placer, w *sink.Sink, sum *Summary) (*Summary, error) {
	p, err := plan(s, prev, sc)
	if err != nil {
		return nil, err
	}
	for _, n := range p.notes {
		s.notify(n)
	}
	k := newKeeper(s.cfg.State, w)
	wr, err := writeBuild(ctx, prev, sc, p, out, docWriter{s: s, w: w, k: k}, sources{s: s, w: w, src: src, scanStart: sc.start})
	if err != nil {
		return nil, err
	}
	defer wr.next.Close()
	sum.ResourcesPlaced = int(out.placed.Load())
	if err := commit(s, prev, sc.events, w, k, out, wr, p.prune, sum); err != nil {
		return nil, err
	}
	if err := listEvents(s, prev, sc, sum); err != nil {
		return nil, err
	}
	return sum, nil
}

// Plan scans and diffs like Build but writes nothing: its Summary holds the
// events the next build would publish.
func Plan(ctx context.Context, cfg *config.Config, opts Options) (*Summary, error) {
	s, err := resolve(cfg, opts)
	if err != nil {
		return nil, err
	}
	src, err := openSourceTree(cfg)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	prev, err := loadContinued(s)
	if err != nil {
		return nil, err
	}
	defer prev.close()
	sum := &Summary{Now: time.Unix(prev.now, 0).UTC()}
	rw := &rewriter{s: s}
	sc, err := scan(ctx, s, src, prev, rw.measuringTee(), rw, sum)
	if err != nil {
		return nil, err
	}
	defer sc.close()
	if err := listEvents(s, prev, sc, sum); err != nil {
		return nil, err
	}
	return sum, nil
}

// loadContinued loads the previous state of site s (load), and refuses a
// discontinuity the user did not confirm, or starts the Source afresh on
// a confirmed rebase (checkContinuity).
func loadContinued(s *site) (*loaded, error) {
	prev, err := load(s)
	if err != nil {
		return nil, err
	}
	if prev.pruned, err = checkContinuity(s, prev.state); err != nil {
		prev.close()
		return nil, err
	}
	return prev, nil
}

// openSourceTree opens the source folder of cfg, read only through the Tree.
func openSourceTree(cfg *config.Config) (*snapshot.Tree, error) {
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
	return src, nil
}

// listEvents fills Summary.Events with every event of a first build, when
// Options.ListEvents asks: the creations, which the scan left out of its
// events, from the records, and the scan's events, in walk order.
func listEvents(s *site, prev *loaded, sc *scanned, sum *Summary) error {
	if !s.opts.ListEvents || !prev.baseline() {
		return nil
	}
	events := sum.Events
	all := make([]snapshot.Event, 0, sum.Created+len(events))
	for r, err := range sc.files.All() {
		if err != nil {
			return err
		}
		for len(events) > 0 && layout.ComparePaths(events[0].Record.Path, r.Path) < 0 {
			all, events = append(all, events[0]), events[1:]
		}
		if r.Change == snapshot.Created {
			all = append(all, snapshot.Event{Change: snapshot.Created, Time: prev.now, Record: r})
		}
	}
	sum.Events = append(all, events...)
	return nil
}
