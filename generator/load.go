package generator

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/snapshot"
)

// loaded is what a build goes on from, as the load stage found it: the
// previous state, loaded from the state folder or rebuilt from the output
// (recover.go), and what the load learnt about the folders on the way.
type loaded struct {
	state     *snapshot.State
	recovered *recovery       // the state rebuilt from the output, nil if it was not
	intent    snapshot.Intent // what a failed build was publishing (intent.go)
	// now is the build's time in whole seconds, never before the previous
	// build's (clampedNow).
	now int64
	// intact says that the output looks like the last build's
	// (outputIntact), judged before the scan places anything.
	intact bool
	// pruned are the kept files of a Source that starts afresh at a new
	// base URL (see checkContinuity), which leave the state archive once
	// the build is saved.
	pruned []string
	// kept is what the state archive and the output hold of the files
	// kept for the state, surveyed by a build once the folders are
	// prepared (see prepare).
	kept *keptSurvey
}

// load loads the previous state of site s, or rebuilds it from the
// output; turns the journals of a state written before format 3 into one
// per set; and reads the publishing record of a failed build. The caller
// then holds the state against the site (checkContinuity).
func load(s *site) (_ *loaded, err error) {
	st, rec, err := loadState(&recoverer{s})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			st.Close()
		}
	}()
	migrateShared(s.sets, st)
	prev := &loaded{state: st, recovered: rec}
	if prev.intent, err = snapshot.LoadIntent(s.cfg.State); err != nil {
		return nil, err
	}
	prev.now = clampedNow(s, st)
	prev.intact = outputIntact(s, st)
	return prev, nil
}

// close lets go of the previous state's file.
func (p *loaded) close() { p.state.Close() }

// baseline reports whether this is a first build, whose Resource List is
// the baseline: no Change List publishes its events (§12.1).
func (p *loaded) baseline() bool { return p.state.LastBuild == 0 }

// loadState loads the previous state, or rebuilds it from the output when
// it is missing, unusable or --state-from-output asks for it; the
// recovery is nil when it was not rebuilt.
func loadState(rc *recoverer) (*snapshot.State, *recovery, error) {
	statePath := filepath.Join(rc.s.cfg.State, snapshot.FileName)
	_, statErr := os.Stat(statePath)
	missing := errors.Is(statErr, fs.ErrNotExist)
	st, err := snapshot.Load(rc.s.cfg.State)
	var why string
	killed := false // the state is a killed build's predecessor
	switch {
	case errors.Is(err, snapshot.ErrCorrupt), errors.Is(err, snapshot.ErrNewerVersion):
		rec, rerr := rc.recoverFromOutput()
		if errors.Is(rerr, errNotRsgenOutput) {
			rc.s.warn(WarnState, "", fmt.Sprintf("%v; the output folder %s holds no previous build to rebuild it from, so this build starts afresh", err, rc.s.cfg.Out))
			return &snapshot.State{SetChanged: map[string]int64{}}, &recovery{bad: badKind(err)}, nil
		}
		if rerr != nil {
			return nil, nil, fmt.Errorf("%w; rebuilding it from the output folder failed: %v", err, rerr)
		}
		rec.bad = badKind(err)
		rc.s.warn(WarnState, "", fmt.Sprintf("%v; rebuilt it from the build published in %s (%d resources, %d Change Lists); the bad file is kept as %s.%s",
			err, rc.s.cfg.Out, rec.state.NumFiles(), rec.lists, statePath, rec.bad))
		return rec.state, rec, nil
	case err != nil:
		return nil, nil, err
	case rc.s.opts.StateFromOutput:
		why = "--state-from-output"
	case missing:
		why = "no state in " + rc.s.cfg.State
	default:
		if why = rc.outputNewer(st); why == "" {
			return st, nil, nil
		}
		killed = true
	}
	rec, err := rc.recoverFromOutput()
	if errors.Is(err, errNotRsgenOutput) && !rc.s.opts.StateFromOutput {
		return st, nil, nil // a first build
	}
	if err != nil && killed {
		rc.s.warn(WarnState, "", fmt.Sprintf("%s, but rebuilding the state from the output folder %s failed (%v); this build goes on from the state", why, rc.s.cfg.Out, err))
		return st, nil, nil
	}
	if err != nil {
		st.Close()
		return nil, nil, fmt.Errorf("%s: cannot rebuild the state from the output folder %s: %w", why, rc.s.cfg.Out, err)
	}
	if killed {
		// What the output does not hold, the loaded state still knows:
		// it is the one a build after a kill goes on from otherwise.
		rec.state.Archived = st.Archived
		if err := rec.state.TakeVersions(st); err != nil {
			st.Close()
			return nil, nil, err
		}
		rec.state.Outputs = sortedPaths(append(rec.state.Outputs, st.Outputs...))
	}
	// The loaded state gives way to the recovered one; its file records
	// are not read.
	st.Close()
	rc.s.notify(Note{Kind: NoteInfo, Msg: fmt.Sprintf("%s: rebuilt the state from the build published in %s (%d resources, %d Change Lists); every file is read once",
		why, rc.s.cfg.Out, rec.state.NumFiles(), rec.lists)})
	return rec.state, rec, nil
}

// migrateShared turns the segments of a state written before format 3,
// shared by all sets, into one journal per set that state published, each
// with the events of its own resources: the journals every later build
// keeps. The closed documents stay as they were written, in the state's
// archive; their checksums are learnt the first time they are published.
func migrateShared(sets []*set, st *snapshot.State) {
	if st.Shared == nil {
		return
	}
	st.Journals = map[string][]snapshot.Segment{}
	for _, s := range sets {
		if _, published := st.SetChanged[s.Name]; !published {
			continue
		}
		journal := make([]snapshot.Segment, len(st.Shared))
		for i, seg := range st.Shared {
			seg.Events = setEvents(s, seg.Events)
			journal[i] = seg
		}
		st.Journals[s.Name] = journal
	}
	st.Shared = nil
}

// clampedNow returns the build time in whole seconds, never before the
// previous build, so that Change Lists stay in chronological order when a
// clock runs backwards.
func clampedNow(s *site, prev *snapshot.State) int64 {
	now := s.opts.Now.Unix()
	if now < prev.LastBuild {
		s.warn(WarnClock, "", fmt.Sprintf("build time %s is before the previous build (%s); using the previous build's time",
			s.opts.Now.UTC().Format(time.RFC3339), time.Unix(prev.LastBuild, 0).UTC().Format(time.RFC3339)))
		return prev.LastBuild
	}
	return now
}

// outputIntact reports whether the output looks like the last build's:
// there was one, and its Source Description and the first resource it
// published are there. The parts that trust the output without a stat
// per file (placements, rewritten pages, kept versions) share one answer,
// taken before the scan places anything (previous.intact): each judged at
// a file of its own, a page whose copy was lost went unread by the scan,
// which judged the output at the last build's first file, still there,
// and was checked by placements, which judged it at this build's, the
// page: the build failed where it could have read the page.
func outputIntact(s *site, prev *snapshot.State) bool {
	if prev.LastBuild == 0 {
		return false
	}
	if _, err := os.Lstat(s.outPath(layout.SourceDescription)); err != nil {
		return false
	}
	for r, err := range prev.Records() {
		if err != nil {
			return false
		}
		_, err := os.Lstat(s.outPath(r.Path))
		return err == nil
	}
	return false
}
