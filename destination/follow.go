package destination

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rsgen/rsgen/rs"
)

// How a run follows the Source: the syncer decides between a baseline
// and the changes since the last sync (a gap takes a new baseline), and
// whether the dumps' packages are worth their bytes; the reader reads the
// lists, the applier brings DIR to them.

// follow takes the baseline or the changes, as the state calls for, and
// returns the time up to which DIR then holds the Source.
func (s *syncer) follow(ctx context.Context, st *syncState) (time.Time, error) {
	if st.Baseline && !st.SyncedUntil.IsZero() && !s.o.Baseline {
		s.sum.Mode = "incremental"
		until, err := s.incremental(ctx, st.SyncedUntil)
		var gap *GapError
		switch {
		case errors.As(err, &gap) && s.o.NoRebaseline:
			return time.Time{}, fmt.Errorf("%w; run without --no-rebaseline to take a new baseline", err)
		case errors.As(err, &gap):
			s.rep.info(err.Error() + "; taking a new baseline from the Resource List")
		case errors.Is(err, errNoChangeLists):
			s.rep.info("the Source publishes no Change List; taking a new baseline from the Resource List (only what changed is fetched)")
		default:
			return until, err
		}
	} else if st.Baseline && st.SyncedUntil.IsZero() {
		s.rep.info("the last Resource List gave no time to follow changes from; taking a new baseline")
	}
	s.sum.Mode = "baseline"
	return s.baseline(ctx)
}

// baseline brings DIR to the Source's Resource List, and returns the
// time from which changes are to be followed: the list's at (the
// earliest of its parts').
func (s *syncer) baseline(ctx context.Context) (time.Time, error) {
	wants := newSorter(s.work, wantCodec)
	defer wants.Close()
	at, err := s.lists.readResources(ctx, wants)
	if err != nil {
		return time.Time{}, fmt.Errorf("baseline: %w", err)
	}
	all := sortedWants(wants)
	n, err := s.applier.count(all(), true)
	if err != nil {
		return time.Time{}, err
	}
	s.rep.event(Event{Kind: EventPlanned, Files: n.fetch, Bytes: n.bytes})
	if err := s.resourceDump(ctx, n); err != nil {
		return time.Time{}, err
	}
	return at, s.applier.apply(ctx, all, true, n)
}

// incremental applies the changes since the last sync, since, and
// returns the time up to which DIR then holds them. A gap in the Change
// Lists is a *GapError, and no Change List at all errNoChangeLists: both
// call for a baseline.
func (s *syncer) incremental(ctx context.Context, since time.Time) (time.Time, error) {
	wants := newSorter(s.work, wantCodec)
	defer wants.Close()
	until, err := s.lists.changes(ctx, since, wants)
	if err != nil {
		return time.Time{}, err
	}
	all := sortedWants(wants)
	n, err := s.applier.count(all(), false)
	if err != nil {
		return time.Time{}, err
	}
	s.rep.event(Event{Kind: EventPlanned, Files: n.fetch, Bytes: n.bytes})
	if err := s.changeDumps(ctx, since, n); err != nil {
		return time.Time{}, err
	}
	return until, s.applier.apply(ctx, all, false, n)
}

// resourceDump seeds DIR from the Resource Dump when the policy and the
// work planned, n, call for it.
func (s *syncer) resourceDump(ctx context.Context, n planCounts) error {
	dumps := s.src.caps[rs.CapResourceDump]
	if s.o.Dumps == DumpsNever || len(dumps) == 0 || n.fetch == 0 || s.o.DryRun {
		return nil
	}
	pkgs, err := s.lists.resourceDump(ctx, dumps[0])
	if err != nil {
		return err
	}
	if !worthIt(s.o.Dumps, pkgs, n) {
		return nil
	}
	s.rep.info(fmt.Sprintf("seeding from the Resource Dump %s (packages: %d)", dumps[0], len(pkgs)))
	return s.applier.applyPackages(ctx, pkgs, rs.CapResourceDumpManifest, time.Time{})
}

// changeDumps seeds DIR from the Change Dumps' packages from since on,
// when the policy and the work planned, n, call for it.
func (s *syncer) changeDumps(ctx context.Context, since time.Time, n planCounts) error {
	if s.o.Dumps == DumpsNever || len(s.src.caps[rs.CapChangeDump]) == 0 || n.fetch == 0 || s.o.DryRun {
		return nil
	}
	pkgs, err := s.lists.changeDumps(ctx, since)
	if err != nil {
		return err
	}
	if len(pkgs) == 0 || !worthIt(s.o.Dumps, pkgs, n) {
		return nil
	}
	s.rep.info(fmt.Sprintf("seeding from the Change Dumps (packages: %d)", len(pkgs)))
	return s.applier.applyPackages(ctx, pkgs, rs.CapChangeDumpManifest, since)
}
