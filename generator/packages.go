package generator

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/snapshot"
	"github.com/rsgen/rsgen/zippkg"
)

// Dump packages (§11, §13): a Resource Dump packages a set's resources in
// ZIP packages that cover stable ranges of paths, a Change Dump the
// bitstreams of a build's changes. A package is named by a digest of
// everything that goes into it, so that a package whose contents did not
// change since the last build is kept as it is. Here the plan decides what
// the packages are; dumps.go writes them.

// plannedPackage is a dump package this build publishes: its record, as
// far as the plan knows it (the length and digest come once it is made),
// and the range it packages: of the set's members (Resource Dump) or of
// its events (Change Dump).
type plannedPackage struct {
	pkg snapshot.Package
	rng zippkg.Range
	// last is the last build's package of the same name, hence the same
	// contents: kept when the output still holds it whole.
	last *snapshot.Package
}

// planResourceDump plans the packages of set st's Resource Dump, made
// now, from its members in sc; last are the last build's packages. A
// package the last build published under the same name keeps its at: made
// again (an output folder built afresh), it gets its bytes back, as its
// URI, named by its contents, promises to caches.
func planResourceDump(s *site, sc *scanned, st *set, now int64, last map[string]snapshot.Package) ([]plannedPackage, error) {
	members := sc.members[st]
	var readErr error
	items := func(yield func(zippkg.Item) bool) {
		for k := range members.Len() {
			r, err := sc.files.At(members.At(k))
			if err != nil {
				readErr = err
				return
			}
			if !yield(zippkg.Item{Path: r.Path, Size: r.Size}) {
				return
			}
		}
	}
	ranges, err := zippkg.Plan(items, zippkg.Limits{MaxBytes: int64(s.cfg.Dumps.PackageSize)})
	if err = cmp.Or(readErr, err); err != nil {
		return nil, fmt.Errorf("resource dump of set %s: %w", st.Name, err)
	}
	planned := make([]plannedPackage, 0, len(ranges))
	for _, r := range ranges {
		m, err := resourceManifest(s, sc, st, r, unixTime(now))
		if err != nil {
			return nil, err
		}
		pp := plannedPackage{pkg: snapshot.Package{Set: st.Name, Path: layout.ResourceDumpPackage(st.Name, packageID(s, m)), At: now}, rng: r}
		if old, ok := last[pp.pkg.Path]; ok {
			pp.pkg.At, pp.last = old.At, &old
		}
		planned = append(planned, pp)
	}
	return planned, nil
}

// lastPackages returns the last build's packages by output path.
//
// The packages archived Resource Dumps list are among them. The same
// resources may come back into a package after it left the Resource Dump
// (a file deleted and restored, a folder moved back): the package gets
// the same name, and must get the same at, hence the same bytes, or it
// would replace the bytes its archived Resource Dump gives the length and
// hash of. A build killed after placing such a package left an output
// that no later build could recover its state from.
func lastPackages(prev *snapshot.State) map[string]snapshot.Package {
	last := make(map[string]snapshot.Package, len(prev.Packages))
	for _, a := range prev.Archived {
		for _, p := range a.Packages {
			if p.At != 0 { // a state before format 3 recorded only the path
				last[p.Path] = p
			}
		}
	}
	for _, p := range prev.Packages {
		last[p.Path] = p
	}
	return last
}

// planChangeDump plans the Change Dump packages of set st's events of
// this build (§13), from until now: the bitstreams of the resources
// created or updated, and the deletions. Changes beyond what one package
// holds (50,000 entries, package_size bytes) go into further packages
// with the same from and until (see planChanges), with a note in n.
// events come deletions first (see deletionsFirst).
func planChangeDump(s *site, st *set, events []snapshot.Event, from, now int64, n *notes) ([]plannedPackage, error) {
	if len(events) == 0 {
		return nil, nil
	}
	items := make([]zippkg.Item, len(events))
	deletions := 0
	for i, ev := range events {
		items[i] = zippkg.Item{Path: ev.Record.Path}
		if ev.Change != snapshot.Deleted {
			items[i].Size = ev.Record.Size
		} else {
			deletions++
		}
	}
	ranges, err := planChanges(items, deletions, zippkg.Limits{MaxBytes: int64(s.cfg.Dumps.PackageSize)})
	if err != nil {
		return nil, fmt.Errorf("change dump of set %s: %w", st.Name, err)
	}
	if len(ranges) > 1 {
		*n = append(*n, Note{Kind: NoteInfo, Msg: fmt.Sprintf("set %s: %d changes need %d Change Dump packages with the same from and until",
			st.Name, len(events), len(ranges))})
	}
	planned := make([]plannedPackage, 0, len(ranges))
	for _, r := range ranges {
		m, _ := changeManifest(s, st, from, now, events[r.Start:r.End])
		planned = append(planned, plannedPackage{rng: r, pkg: snapshot.Package{Set: st.Name, Change: true,
			From: from, Until: now, Path: layout.ChangeDumpPackage(st.Name, unixTime(now), packageID(s, m))}})
	}
	return planned, nil
}

// planChanges splits the items of a build's changes, its deletions
// first, into Change Dump packages: one when they fit, whose manifest
// lists the deletions first; else the deletions' packages, then the
// others', each group split in walk order like Resource Dump packages, so
// that a Destination applying the packages in turn deletes before it
// creates, across packages too (see deletionsFirst).
func planChanges(items []zippkg.Item, deletions int, lim zippkg.Limits) ([]zippkg.Range, error) {
	walk := slices.SortedFunc(slices.Values(items), func(x, y zippkg.Item) int { return layout.ComparePaths(x.Path, y.Path) })
	if whole, err := zippkg.Plan(slices.Values(walk), lim); err != nil || len(whole) == 1 {
		return whole, err
	}
	var ranges []zippkg.Range
	for _, group := range [][2]int{{0, deletions}, {deletions, len(items)}} {
		planned, err := zippkg.Plan(slices.Values(items[group[0]:group[1]]), lim)
		if err != nil {
			return nil, err
		}
		for _, r := range planned {
			r.Start, r.End = r.Start+group[0], r.End+group[0]
			ranges = append(ranges, r)
		}
	}
	return ranges, nil
}

// resourceManifest returns the manifest of the package of set st's
// members in range r of the scan sc, written at at.
func resourceManifest(s *site, sc *scanned, st *set, r zippkg.Range, at time.Time) (*zippkg.Manifest, error) {
	m := &zippkg.Manifest{Kind: zippkg.ResourceDump, Up: s.docURL(layout.CapabilityList(st.Name)), At: at}
	fromMtime := s.cfg.Lastmod == config.LastmodMtime
	members := sc.members[st]
	var paths zippkg.Paths
	for k := r.Start; k < r.End; k++ {
		r, err := sc.files.At(members.At(k))
		if err != nil {
			return nil, err
		}
		e := zippkg.Entry{Loc: s.resURL(r.Path), Lastmod: r.Lastmod(fromMtime), Path: paths.Assign(zippkg.PathFor(r.Path)),
			Length: r.Size, Hash: r.Digests.Hash(s.algs)}
		if schemaSafeType(r.Type()) {
			e.Type = r.Type()
		}
		m.Entries = append(m.Entries, e)
	}
	return m, nil
}

// changeManifest returns the manifest of the Change Dump package of set
// st from from until until that holds events, and the source file and
// scanned stat of each of its bitstreams.
func changeManifest(s *site, st *set, from, until int64, events []snapshot.Event) (*zippkg.Manifest, bitstreams) {
	m := &zippkg.Manifest{Kind: zippkg.ChangeDump, Up: s.docURL(layout.CapabilityList(st.Name)), From: unixTime(from), Until: unixTime(until)}
	var paths zippkg.Paths
	scanned := make(bitstreams, len(events))
	for i := range events {
		ev := &events[i]
		e := zippkg.Entry{Loc: s.resURL(ev.Record.Path), Lastmod: eventLastmod(s, ev), Change: ev.Change.String()}
		if s.cfg.SpecVersion != config.Spec10 {
			e.Datetime = unixTime(ev.Time)
		}
		if ev.Change != snapshot.Deleted {
			e.Path = paths.Assign(zippkg.PathFor(ev.Record.Path))
			e.Length, e.Hash = ev.Record.Size, ev.Record.Digests.Hash(s.algs)
			scanned[e.Path] = bitstream{src: ev.Record.Path, stat: ev.Record.Stat()}
			if schemaSafeType(ev.Record.Type()) {
				e.Type = ev.Record.Type()
			}
		}
		m.Entries = append(m.Entries, e)
	}
	return m, scanned
}

// packageID is a digest of everything that makes up a package's bytes
// except its time, so that equal contents keep their package, and other
// bytes (another deflate encoder's) get another name. It is the first 80
// bits of a SHA-256, the digest rsgen computes everywhere else.
func packageID(s *site, m *zippkg.Manifest) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%s\x00%s\x00%s\x00%s\x00", m.Kind, m.Up, s.cfg.Dumps.Compression, s.cfg.SpecVersion, zippkg.Deflater)
	for i := range m.Entries {
		e := &m.Entries[i]
		fmt.Fprintf(h, "%s\x00%d\x00%s\x00%s\x00%d\x00%s\x00%s\x00%d\x00", e.Loc, e.Lastmod.Unix(), e.Change,
			e.Path, e.Length, e.Hash, e.Type, e.Datetime.Unix())
	}
	return hex.EncodeToString(h.Sum(nil)[:10])
}

// bitstreams holds, by manifest path, each bitstream's source file and
// its stat when the scan took its digests (see openBitstream).
type bitstreams map[string]bitstream

type bitstream struct {
	src  string // the path in the source
	stat snapshot.Stat
}
