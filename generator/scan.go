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

	"github.com/rsgen/rsgen/hosting"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// scanned is what the scan stage found: the files of the source, diffed
// against the previous state, and what the later stages need to know of
// each, gathered as the scan settled it: a large scan's records are
// spilled, and reading them back costs a decoding of each (about 0.3 s at
// a million files).
type scanned struct {
	files  snapshot.Records // in walk order
	events []snapshot.Event // this build's changes, in walk order (a first build's creations left out)
	start  int64            // when the scan started, wall clock in nanoseconds (State.ScanStart)
	// sourceUnchanged says that the scan read no file, found no event, and
	// trusted every record by its stat; contentUnchanged, that it found no
	// event, though it may have read files whose stat changed (a file
	// touched, or written again with the same bytes). See unchanged.go.
	sourceUnchanged, contentUnchanged bool
	// members are, per set, the indexes in files of its members, and
	// pathBytes the sum of their paths' lengths: the Resource List, the
	// Resource Dump and their archives all need them.
	members   map[*set]*memberList
	pathBytes map[*set]int64
	maxPath   map[*set]int // the length of its members' longest path
	places    placements
}

// close lets go of the file of the spilled records.
func (sc *scanned) close() { sc.files.Close() }

// scan walks the source src of site s and diffs it against the previous
// state. tee makes the tee of each read job, which receives the bytes of
// each file the job reads (see placer.tee), and rw
// says which of them html_link rewrites. The counts go into sum.
func scan(ctx context.Context, s *site, src *snapshot.Tree, prev *loaded, tee snapshot.Tees, rw *rewriter, sum *Summary) (*scanned, error) {
	start := time.Now().UnixNano() // wall clock: only for the racy-file check
	sum.Sets = make([]SetSummary, len(s.sets))
	sc := newScanned(s, start)
	sc.places = placements{checkAll: s.opts.Verify || prev.recovered != nil, intact: prev.intact}
	reserved := &reservedPaths{source: s.cfg.Source, hostFiles: hosting.Files(&s.cfg.Publish)}
	visit := func(i int, r *snapshot.Record) error {
		countInSets(s, r, sum)
		warnHeadless(s, rw, r)
		sc.addMember(s, i, r)
		if s.cfg.CopyResources { // else the source files are not in the output
			reserved.add(r)
		}
		return nil
	}
	// Rewritten pages are read again when their tags changed since the
	// last build, or when the output does not look like the last build's
	// (a page whose copy is missing can only be published again by the
	// scan's read).
	reread := prev.state.HTMLLink != s.tags || !prev.intact
	foldCase, err := sink.FoldsCase(s.cfg.Out)
	if err != nil {
		return nil, err
	}
	files, events, stats, err := snapshot.Scan(ctx, prev.state, snapshot.ScanOptions{
		FS:         src,
		Algorithms: s.algs,
		Exclude:    scanExcluder(s, sum).Exclude,
		Verify:     s.opts.Verify,
		Reread:     func(old *snapshot.Record) bool { return reread && (old.Rewritten || s.rewrites(old.Path)) },
		Tee:        tee,
		Notify:     func(n snapshot.Note) { scanNote(s, n) },
		Now:        prev.now,

		FollowSymlinks: s.cfg.FollowSymlinks,
		SkipUnreadable: s.opts.SkipUnreadable,
		SpillDir:       spillDir(s.cfg.State),
		SpillAfter:     spillAfter,
		Baseline:       prev.baseline(),
		FoldCase:       foldCase,
		Visit:          visit,
	})
	if err != nil {
		var pe *snapshot.PathError
		var te *snapshot.TeeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("output folder: write %s: %w", s.outPath(te.Path), te.Err)
		}
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("scan %s: %w", filepath.Join(s.cfg.Source, filepath.FromSlash(pe.Path)), pe.Err)
		}
		return nil, fmt.Errorf("scan %s: %w", s.cfg.Source, err)
	}
	if err := reserved.err(); err != nil {
		files.Close()
		return nil, err
	}
	sc.files, sc.events = files, events
	sc.contentUnchanged = len(events) == 0
	sc.sourceUnchanged = sc.contentUnchanged && stats.Hashed == 0 && stats.Trusted == stats.Files
	summarizeSets(s, events, sum)
	sum.ScanTime = time.Duration(time.Now().UnixNano() - start)
	sum.Files, sum.Hashed, sum.HashedBytes, sum.Skipped = stats.Files, stats.Hashed, stats.HashedBytes, stats.Skipped
	sum.Events = events
	return sc, nil
}

// newScanned returns what a scan of site s that started at start fills
// in: each set's members, none yet.
func newScanned(s *site, start int64) *scanned {
	sc := &scanned{start: start, members: map[*set]*memberList{}, pathBytes: map[*set]int64{}, maxPath: map[*set]int{}}
	for _, st := range s.sets {
		sc.members[st] = &memberList{}
	}
	return sc
}

// addMember adds record i to the members of each set it is in.
func (sc *scanned) addMember(s *site, i int, r *snapshot.Record) {
	for _, st := range s.sets {
		if st.Contains(r.Path) {
			sc.members[st].add(i)
			sc.pathBytes[st] += int64(len(r.Path))
			sc.maxPath[st] = max(sc.maxPath[st], len(r.Path))
		}
	}
}

// scanExcluder returns the scan's excluder, which counts and reports the
// files left out because they cannot be published.
func scanExcluder(s *site, sum *Summary) *excluder {
	ex := newExcluder(s.cfg, s.opts.ConfigFile, s.resBase, s.opts.Exclude...)
	ex.unpublishable = func(p, reason string) {
		sum.LeftOut++
		s.warn(WarnURITooLong, p, reason)
	}
	return ex
}

// scanNote passes on a note of the scan.
func scanNote(s *site, n snapshot.Note) {
	switch n.Kind {
	case snapshot.NoteSkipped:
		s.warn(n.Code, n.Path, n.Msg)
	case snapshot.NoteHashed:
		s.notify(Note{Kind: NoteHashed, Path: n.Path, Bytes: n.Bytes})
	case snapshot.NoteFound:
		s.notify(Note{Kind: NoteFound, Path: n.Path, Bytes: n.Bytes, Read: n.Read})
	case snapshot.NoteWalked:
		s.notify(Note{Kind: NoteWalked})
	case snapshot.NoteInfo:
		s.notify(Note{Kind: NoteInfo, Msg: n.Msg})
	}
}

// countInSets counts the record in the resources of each set it is in, or
// in the files in no set, and in the files created or updated: the events
// of a first build do not say (see snapshot.ScanOptions.Baseline).
func countInSets(s *site, r *snapshot.Record, sum *Summary) {
	switch r.Change {
	case snapshot.Created:
		sum.Created++
	case snapshot.Updated:
		sum.Updated++
	}
	inSet := false
	for k, st := range s.sets {
		if st.Contains(r.Path) {
			sum.Sets[k].Resources++
			inSet = true
			switch r.Change {
			case snapshot.Created:
				sum.Sets[k].Created++
			case snapshot.Updated:
				sum.Sets[k].Updated++
			}
		}
	}
	if !inSet {
		sum.Unlisted++
		if s.opts.ListUnlisted {
			sum.UnlistedPaths = append(sum.UnlistedPaths, r.Path)
		}
	}
}

// warnHeadless warns about an HTML resource created or updated by this
// build that has no <head> start tag to put the link in: once per
// version, not on every build that reads it.
func warnHeadless(s *site, rw *rewriter, r *snapshot.Record) {
	if r.Change != 0 && rw.headlessRead(r.Path) {
		s.warn(WarnHTMLHead, r.Path, fmt.Sprintf("html_link: no <head> start tag before the content (within the first %d KiB): published without its <link rel=\"resourcesync\">", headSearchLimit>>10))
	}
}

// summarizeSets counts the deletions, in all and in each set (countInSets
// counts the other changes), and warns about a set that publishes
// nothing: its folder is missing, or nothing matches its globs.
func summarizeSets(s *site, events []snapshot.Event, sum *Summary) {
	for i, st := range s.sets {
		sum.Sets[i].Name = st.Name
	}
	for _, ev := range events {
		if ev.Change != snapshot.Deleted {
			continue
		}
		sum.Deleted++
		for k, st := range s.sets {
			if st.Contains(ev.Record.Path) {
				sum.Sets[k].Deleted++
			}
		}
	}
	for k, st := range s.sets {
		if sum.Sets[k].Resources > 0 {
			continue
		}
		if _, err := os.Stat(filepath.Join(s.cfg.Source, filepath.FromSlash(st.prefix))); st.prefix != "" && err != nil {
			s.warn(WarnSet, "", fmt.Sprintf("set %s publishes nothing: its path %s is not a folder of the source %s", st.Name, strings.TrimSuffix(st.prefix, "/"), s.cfg.Source))
		} else {
			s.warn(WarnSet, "", fmt.Sprintf("set %s publishes nothing: no file of the source matches its path and globs (rsgen status --explain lists what is left out)", st.Name))
		}
	}
}

// reservedPaths finds the source files at paths rsgen writes its own
// files at (when resources are copied into the output): each is refused,
// and all of them are named at once, so that one build lists what to
// rename or exclude.
type reservedPaths struct {
	source    string
	hostFiles []string
	found     []string // messages, the first maxReservedListed
	n         int
}

// maxReservedListed bounds the source files a refusal names.
const maxReservedListed = 10

// add notes r when rsgen writes its own file at its path.
func (rp *reservedPaths) add(r *snapshot.Record) {
	var why string
	switch {
	case layout.IsReserved(r.Path):
		why = "would be overwritten by rsgen's own documents at the same path: rename it or exclude it"
	case slices.Contains(rp.hostFiles, r.Path):
		why = "would be overwritten by the file rsgen writes for [publish] (targets or robots): exclude it, or turn that off and write the file yourself"
	default:
		return
	}
	if rp.n++; len(rp.found) < maxReservedListed {
		rp.found = append(rp.found, fmt.Sprintf("source file %s %s", filepath.Join(rp.source, filepath.FromSlash(r.Path)), why))
	}
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

// placement says how much placeAll must check of one resource's output
// copy.
type placement uint8

const (
	placeCheck placement = iota // stat the copy and place it when stale
	placeKept                   // the previous build placed this very record: trusted
	placeNew                    // never published: link without looking first
	placeDone                   // the scan's tee placed it already
)

// placements tells placeAll what to check of each file, from the marks
// the scan set on its record, which spilled records keep in memory: no
// record is decoded, nor a byte per file held, to learn them. A record
// equal to the one the previous build placed is trusted as the record is,
// without a stat (on a rebuild of a large tree that stat costs as much as
// the scan), unless --verify asks, the state was recovered, or the output
// does not look like the last build's: its Source Description or first
// resource is missing (a fresh or wiped output folder). A file the
// previous build did not have is linked at once: a link fails if anything
// is in the way, and only then is the path looked at.
type placements struct {
	checkAll bool // --verify, or a recovered state
	intact   bool // the output looks like the last build's
}

// of returns the placement of a record with marks m.
func (p placements) of(m snapshot.Marks) placement {
	switch {
	case p.checkAll:
		return placeCheck
	case m.Placed:
		return placeDone
	case m.Change == snapshot.Created:
		return placeNew
	case p.intact && m.Unchanged:
		return placeKept
	}
	return placeCheck
}
