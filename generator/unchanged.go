package generator

import (
	"context"
	"os"
	"slices"

	"github.com/rsgen/rsgen/config"

	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// The build that finds nothing changed
//
// Most builds of a large site change nothing: rsgen watch after an editor
// saved a file with the same bytes, a CI run without commits. Such a build
// publishes, byte for byte, what the last build published, and once the
// scan has shown that, it writes nothing but a run record (snapshot.
// SaveRun): no document is rendered, no list compared with the file on
// disk, no state saved. It is taken only when every input of the output
// is the last build's:
//
//   - the source: the scan read no file, found no event, and trusted every
//     record by its stat;
//   - the configuration and rsgen's output format (the digest of the
//     site, see outputDigest, which the state keeps);
//   - the clock: no Change List is due for rotation, no archived
//     document or closed segment for retention, no snapshot for its
//     archive, decided by the predicates the plan decides them by;
//   - the output: every output the last build recorded has the stat it
//     had once that build put it in place, and every file the state
//     folder keeps is whole in both folders, as the load's survey found;
//   - and no repair is asked for or due: not --verify or another option
//     that changes what a build does, not a recovered state, a build
//     after a killed one, a publishing record, a first build, a rebase,
//     or a site that keeps versions (whose files the versions writer
//     checks resource by resource).
//
// The Summary then counts the last build's outputs as unchanged, as the
// full path would; the warnings of the write stage (the hosting files'
// size, robots.txt under a path) were given by the build that wrote them,
// and are not repeated. A state of a format before 6 has no digest, so the
// first build after an upgrade takes the full path, and saves one. An
// output edited in place, to the same size, with its mtime put back, keeps
// its stat, and is not repaired until a full build: as a source file so
// edited is not read again (snapshot.RaceWindow).
//
// A build whose scan read files and found their bytes unchanged (a file
// touched, a checkout that wrote every file again, a file read again as it
// was written too close to the last scan) publishes the same bytes too,
// unless the site publishes the files' modification times (lastmod =
// "mtime", a via link's modified). It renders nothing either, but it must
// save the state: the next build trusts those files by the stats they have
// now. Before, it puts in place the resources whose copy in the output is
// no longer their source file (a source replaced by a file with the same
// bytes), as a full build's placement would.

// republish says how a build publishes, once its scan is done.
type republish int

const (
	publishAll      republish = iota // the full path: plan, write and commit
	publishAsIs                      // nothing changed: a run record (publishedAsIs)
	publishRestated                  // only stats changed: the state saved with them (publishedRestated)
)

// unchanged says how much of what the last build published this build
// publishes again (see above), from the site s, what the load found (prev;
// interrupted: the last build may not have finished) and the scan sc.
func unchanged(s *site, prev *loaded, sc *scanned, interrupted bool) republish {
	st, o := prev.state, s.opts
	switch {
	case !sc.contentUnchanged || s.digest == "" || st.OutputDigest != s.digest:
	case o.Verify || o.StateFromOutput || o.Rebase || o.RemoveSets:
	case prev.recovered != nil || interrupted || len(prev.intent.Added)+len(prev.intent.Deleted) > 0:
	case prev.baseline() || len(prev.pruned) > 0 || !prev.intact:
	case keepsVersions(s, prev):
	case !sc.sourceUnchanged && publishesStats(s):
	case !clockMovesNothing(s, prev, sc) || !prev.kept.allWhole() || !outputsAsLeft(s, st):
	case sc.sourceUnchanged:
		return publishAsIs
	default:
		return publishRestated
	}
	return publishAll
}

// publishesStats reports whether site s publishes the files' modification
// times: as their lastmod, or as the modified of their via links.
func publishesStats(s *site) bool {
	return s.cfg.Lastmod == config.LastmodMtime || slices.ContainsFunc(s.sets, func(st *set) bool { return st.via != "" })
}

// clockMovesNothing reports whether this build's time makes the plan
// change nothing of what the last build published, in a build without
// events: no Change List due for rotation, no archived document or closed
// segment due for retention, no snapshot due for an archive, and no
// journal or set without what the last build gave it (an open segment,
// the time it last changed). It asks the plan's own questions.
func clockMovesNothing(s *site, prev *loaded, sc *scanned) bool {
	now := prev.now
	archived, pruned := retainArchived(s, prev, now)
	if len(pruned) > 0 {
		return false
	}
	for _, st := range s.sets {
		journal := prev.state.Journals[st.Name]
		open := snapshot.Open(journal)
		changed, known := prev.state.SetChanged[st.Name]
		if open == nil || !known || rotationDue(s, open, now) {
			return false
		}
		if retainsSegments(s) {
			if _, pruned := retainSegments(s.cfg.Archives.Keep, st, journal, archived, now); len(pruned) > 0 {
				return false
			}
		}
		if due := snapshotsDue(s, st, archived, changed, sc.members[st].Len() > 0, now); due[0] || due[1] {
			return false
		}
	}
	return true
}

// allWhole reports whether every file the state folder keeps was found
// whole in both the state archive and the output.
func (ks *keptSurvey) allWhole() bool {
	for _, f := range ks.files {
		if f.copy != keptBoth {
			return false
		}
	}
	return len(ks.legacyDocs) == 0 && len(ks.legacyWritten) == 0
}

// outputsAsLeft reports whether every output the last build recorded in
// st is as it left it: a regular file with the stat it had then.
func outputsAsLeft(s *site, st *snapshot.State) bool {
	if len(st.OutputStats) != len(st.Outputs) {
		return false
	}
	for i, rel := range st.Outputs {
		if outputStat(s, rel) != st.OutputStats[i] {
			return false
		}
	}
	return true
}

// outputStats returns the stats of the outputs at output paths rels, for
// the next state (see outputsAsLeft).
func outputStats(s *site, rels []string) []snapshot.Stat {
	stats := make([]snapshot.Stat, len(rels))
	for i, rel := range rels {
		stats[i] = outputStat(s, rel)
	}
	return stats
}

// outputStat returns the stat of the output file at rel; a size of -1,
// which no file has, when it is not a regular file.
func outputStat(s *site, rel string) snapshot.Stat {
	info, err := os.Lstat(s.outPath(rel))
	if err != nil || !info.Mode().IsRegular() {
		return snapshot.Stat{Size: -1}
	}
	return snapshot.StatOf(info)
}

// publishedAsIs ends a build that publishes what the last one did: it
// records that it ran (snapshot.SaveRun), and counts the last build's
// outputs in sum as unchanged, as writing them again would.
func publishedAsIs(s *site, prev *loaded, sc *scanned, sum *Summary) error {
	if err := snapshot.SaveRun(s.cfg.State, prev.state, prev.now, sc.start); err != nil {
		return err
	}
	countUnchanged(prev.state, sum)
	return nil
}

// publishedRestated ends a build that publishes what the last one did,
// though its scan found stats changed: it places, through out and the
// sink w, the resources whose copy in the output is not their source
// file, saves the state with the scan's records (State.Restated), and
// counts the last build's outputs in sum as unchanged.
func publishedRestated(ctx context.Context, s *site, prev *loaded, sc *scanned, out *placer, w *sink.Sink, sum *Summary) error {
	if err := out.placeAll(ctx, &sc.files, sc.places); err != nil {
		return err
	}
	if err := w.Commit(); err != nil {
		return err
	}
	out.keepAdded()
	next, err := prev.state.Restated(sc.files, prev.now, sc.start)
	if err != nil {
		return err
	}
	if err := snapshot.Save(s.cfg.State, next); err != nil {
		return err
	}
	sum.ResourcesPlaced = int(out.placed.Load())
	countUnchanged(prev.state, sum)
	return nil
}

// countUnchanged counts the outputs of the last build, st's, in sum as
// unchanged.
func countUnchanged(st *snapshot.State, sum *Summary) {
	for _, rel := range st.Outputs {
		sum.Outputs[sink.KindOf(rel)].Unchanged++
	}
}
