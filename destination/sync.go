package destination

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/rsgen/rsgen/snapshot"
)

// syncer is one run of a sync: what it fetches with, where it writes,
// and what it has learnt.
type syncer struct {
	o    Options
	c    *client
	docs *docs
	dir  *mirrorDir
	inv  *inventory // nil in a dry run
	m    *mapper
	rep  *reporter
	sum  *Summary
	src  *source
	work string // sorted runs and packages
	// lists reads the set's documents, once discover (or the listener)
	// has found it.
	lists *reader
	// applier applies wants to DIR, once openDir has opened it.
	applier *applier
	// requests0 and bytes0 are the client's counts when the run began:
	// a listener's runs share a client.
	requests0, bytes0 int64
	start             time.Time
}

// newSyncer returns a syncer of one run with o, fetching with c.
func newSyncer(o Options, c *client) *syncer {
	s := &syncer{o: o, c: c, sum: &Summary{}, requests0: c.requests.Load(), bytes0: c.bytes.Load(), start: time.Now()}
	s.rep = &reporter{notify: o.Notify, sum: s.sum}
	return s
}

// countRequests puts the requests and bytes of the run in its summary.
func (s *syncer) countRequests() {
	s.sum.Requests, s.sum.Bytes = s.c.requests.Load()-s.requests0, s.c.bytes.Load()-s.bytes0
}

// Sync mirrors the set of the Source at o.Source into o.Dir, or brings
// the mirror up to date: a baseline from the Resource List the first
// time, and after a gap in the Change Lists; the changes since the last
// sync otherwise. It returns what it did; an error when it could not
// finish, ErrIncomplete (wrapped) when some resources could not be
// mirrored, each reported by an EventFailed.
func Sync(ctx context.Context, o Options) (*Summary, error) {
	o, err := o.resolve()
	if err != nil {
		return nil, err
	}
	s := newSyncer(o, newClient(&o))
	defer s.countRequests()
	if o.DryRun {
		return s.sum, s.dryRunSync(ctx)
	}
	lock, err := lockState(ctx, o.State)
	if err != nil {
		return nil, err
	}
	err = s.run(ctx)
	s.close()
	lock.release(err != nil && s.inv == nil)
	return s.sum, err
}

// stateLock is the lock of a state folder, held while a sync or a listen
// runs, with the folder its creation made, if any.
type stateLock struct {
	lock *snapshot.StateLock
	made string
}

// lockState takes the lock of the state folder state.
func lockState(ctx context.Context, state string) (*stateLock, error) {
	made := firstMissing(state)
	lock, err := snapshot.AcquireLock(ctx, state, false, nil)
	if err != nil {
		var le *snapshot.LockError
		if errors.As(err, &le) {
			return nil, fmt.Errorf("another rsgen sync is running on the state %s (process %d)", state, le.PID)
		}
		return nil, err
	}
	return &stateLock{lock: lock, made: made}, nil
}

// release releases the lock; with undo (a first sync that failed before
// it opened DIR), it removes the state folder it made: such a sync leaves
// nothing.
func (l *stateLock) release(undo bool) {
	l.lock.Release()
	if undo && l.made != "" {
		os.RemoveAll(l.made)
	}
}

// firstMissing returns the outermost folder on the way to dir that is
// not there, or "" when dir is.
func firstMissing(dir string) string {
	missing := ""
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
			return missing
		}
		missing = d
		if filepath.Dir(d) == d {
			return missing
		}
	}
}

// openState prepares the state folder: a fresh work folder, the cache.
func (s *syncer) openState() error {
	s.work = filepath.Join(s.o.State, workDir)
	if err := os.RemoveAll(s.work); err != nil {
		return fmt.Errorf("clear %s: %w", s.work, err)
	}
	for _, d := range []string{s.work, filepath.Join(s.o.State, documentsDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	s.docs = newDocs(s.c, filepath.Join(s.o.State, documentsDir), true)
	return nil
}

// openDir opens DIR, creating it, and the inventory, tidying what a
// killed sync left: its journal, and its temporary files.
func (s *syncer) openDir() error {
	dir, err := openMirror(s.o.Dir, true)
	if err != nil {
		return fmt.Errorf("open %s: %w", s.o.Dir, err)
	}
	s.dir = dir
	inv, killed, err := openInventory(s.o.State, s.work)
	if err != nil {
		return fmt.Errorf("state %s: %w", s.o.State, err)
	}
	s.inv = inv
	s.applier = newApplier(&s.o, s.c, dir, inv, s.m, s.rep, s.sum, s.work)
	if killed {
		if err := dir.removeTemps(); err != nil {
			return fmt.Errorf("remove the temporary files of the last sync from %s: %w", s.o.Dir, err)
		}
	}
	return nil
}

// close ends the run: the journal merged into the inventory, the work
// folder removed.
func (s *syncer) close() {
	if s.inv != nil {
		if err := s.inv.close(s.work); err != nil {
			s.rep.warning(err.Error())
		}
	}
	if s.dir != nil {
		s.dir.Close()
	}
	os.RemoveAll(s.work)
}

// run discovers the set, then takes a baseline or applies the changes.
func (s *syncer) run(ctx context.Context) error {
	st, err := s.prepare(ctx)
	if err != nil {
		return err
	}
	return s.pull(ctx, st)
}

// prepare opens the state and discovers the set, and returns the state
// of the mirror, checked to be that of a sync of the set into DIR.
func (s *syncer) prepare(ctx context.Context) (*syncState, error) {
	if err := s.openState(); err != nil {
		return nil, err
	}
	st, err := loadState(s.o.State)
	if err != nil {
		return nil, err
	}
	if err := s.discover(ctx); err != nil {
		return nil, err
	}
	if err := st.belongs(s.o.State, s.o.Dir, s.src); err != nil {
		return nil, err
	}
	return st, nil
}

// pull opens DIR and takes the baseline or the changes the state calls
// for, then commits the state.
func (s *syncer) pull(ctx context.Context, st *syncState) error {
	if err := s.openDir(); err != nil {
		return err
	}
	st.Dir, st.CapabilityList, st.Base = s.o.Dir, s.src.capList, s.src.base
	until, err := s.follow(ctx, st)
	s.warnOtherHosts()
	// The files a dump placed were found unchanged by the lists after.
	s.sum.Unchanged = max(0, s.sum.Unchanged-s.sum.FromDumps)
	if err != nil {
		return err
	}
	if err := s.commit(st, until); err != nil {
		return err
	}
	os.Remove(filepath.Join(s.o.State, packagesFile))
	if err := s.docs.prune(); err != nil {
		s.rep.warning(fmt.Sprintf("prune the documents of %s: %v", s.o.State, err))
	}
	if s.sum.Refused > 0 {
		return fmt.Errorf("%w: %d resources cannot be mirrored as files of %s", ErrIncomplete, s.sum.Refused, s.o.Dir)
	}
	return nil
}

// commit ends a complete run: when every resource was mirrored, DIR
// holds the Source up to until, which the state then says.
func (s *syncer) commit(st *syncState, until time.Time) error {
	if s.sum.Failed > 0 {
		return fmt.Errorf("%w: %d resources could not be mirrored; the next sync tries them again", ErrIncomplete, s.sum.Failed)
	}
	if err := s.inv.close(s.work); err != nil {
		return err
	}
	st.Baseline, st.SyncedUntil = true, until
	s.sum.SyncedUntil = until
	return st.save(s.o.State)
}

// discover finds the set and makes its mapper.
func (s *syncer) discover(ctx context.Context) error {
	src, err := discover(ctx, s.docs, s.o.Source, s.o.Set)
	if err != nil {
		return err
	}
	s.src, s.sum.Set, s.sum.CapabilityList = src, src.set, src.capList
	if s.m, err = newMapper(src.base, s.o.OtherHosts); err != nil {
		return err
	}
	s.lists = newReader(s.docs, s.src, s.m, s.rep, s.sum, s.work)
	return nil
}

// warnOtherHosts says, once, how many resources on other hosts were
// skipped.
func (s *syncer) warnOtherHosts() {
	if n := s.sum.OtherHosts; n > 0 {
		s.rep.warning(fmt.Sprintf("%d resources on other hosts than %s were skipped (--other-hosts mirrors them under %s/HOST/)", n, s.src.base, s.o.Dir))
	}
}

// dryRunSync plans the sync and reports what it would do, writing
// nothing: documents and sorts go to a temporary folder, and the journal
// of a killed sync is not taken into account.
func (s *syncer) dryRunSync(ctx context.Context) error {
	tmp, err := os.MkdirTemp("", "rsgen-sync-dry-run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	s.work = tmp
	s.docs = newDocs(s.c, tmp, false)
	dirPath := s.o.Dir
	if _, err := os.Stat(dirPath); os.IsNotExist(err) {
		dirPath = filepath.Join(tmp, "empty") // stands for a DIR not made yet
		if err := os.Mkdir(dirPath, 0o755); err != nil {
			return err
		}
	}
	if s.dir, err = openMirror(dirPath, false); err != nil {
		return fmt.Errorf("open %s: %w", s.o.Dir, err)
	}
	defer s.dir.Close()
	st, err := loadState(s.o.State)
	if err != nil {
		return err
	}
	if err := s.discover(ctx); err != nil {
		return err
	}
	if err := st.belongs(s.o.State, s.o.Dir, s.src); err != nil {
		return err
	}
	s.applier = newApplier(&s.o, s.c, s.dir, nil, s.m, s.rep, s.sum, s.work)
	_, err = s.follow(ctx, st)
	s.warnOtherHosts()
	return err
}
