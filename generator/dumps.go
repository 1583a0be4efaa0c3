package generator

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
	"github.com/rsgen/rsgen/zippkg"
	"github.com/zeebo/blake3"
)

// dumper writes Resource Dumps and Change Dumps.
type dumper struct {
	*run
	lostPackages map[string]int64            // per set, the until of its newest lost Change Dump package
	carried      map[string][]carriedPackage // per set, the Change Dump packages of earlier builds
	prevPackages map[string]snapshot.Package // the previous build's packages by output path, once needed
}

// packageEntryBound bounds the bytes of one dump document entry beyond its
// two URIs.
const packageEntryBound = 500

// zipOptions returns the compression the configuration asks for, and the
// share of the cores of a package written beside others (0: every core).
func (b *dumper) zipOptions(workers int) *zippkg.Options {
	o := &zippkg.Options{Workers: workers}
	switch b.cfg.Dumps.Compression {
	case config.CompressStore:
		o.Method = func(string) uint16 { return zip.Store }
	case config.CompressDeflate:
		o.Method = func(string) uint16 { return zip.Deflate }
	}
	return o
}

// writeResourceDump writes the set's Resource Dump (§11): its resources in
// ZIP packages that cover stable ranges of paths, and the document listing
// them. A package whose contents did not change since the last build is
// kept as it is: its name is a digest of everything that goes into it.
func (b *dumper) writeResourceDump(ctx context.Context, s *set) error {
	members := b.lister.members(s)
	if members.Len() == 0 {
		return nil // a set without files has no Resource Dump (see writeResourceList)
	}
	items := func(yield func(zippkg.Item) bool) {
		for k := range members.Len() {
			r := b.next.Files.At(members.At(k))
			if !yield(zippkg.Item{Path: r.Path, Size: r.Size}) {
				return
			}
		}
	}
	ranges, err := zippkg.Plan(items, zippkg.Limits{MaxBytes: int64(b.cfg.Dumps.PackageSize)})
	if err != nil {
		return fmt.Errorf("resource dump of set %s: %w", s.Name, err)
	}
	pkgs, err := b.resourcePackages(ctx, s, members, ranges)
	if err != nil {
		return err
	}
	md := rs.MD{Capability: rs.CapResourceDump, At: unixTime(b.next.SetChanged[s.Name])}
	size := int64(len(pkgs)) * int64(2*len(b.base)+packageEntryBound+2*len(layout.SetDir(s.Name)))
	entry := func(i int, e *rs.Entry) { *e = b.packageEntry(&pkgs[i]) }
	archives, err := b.archiver.archivesLink(s, rs.CapResourceDump)
	if err != nil {
		return err
	}
	if err := b.lister.writeSplit(s, layout.ResourceDump(s.Name), md, archives, len(pkgs), size, entry, b.writeDoc); err != nil {
		return err
	}
	return b.archiver.archiveSnapshot(s, true, md, len(pkgs), size, entry, pkgs...)
}

// madePackage is a package made by makeResourcePackage: its record, its
// manifest, and the temporary file it was written to, or "" when the last
// build's package is kept.
type madePackage struct {
	pkg snapshot.Package
	m   *zippkg.Manifest
	tmp string
}

// resourcePackages returns the packages of the ranges of the set's
// members, in order. Those the last build did not write are written on
// every core, a batch of one per core at a time (deflating takes a core),
// and published in order, so that the output and the state do not depend
// on which finished first; a batch holds one manifest per core.
func (b *dumper) resourcePackages(ctx context.Context, s *set, members *memberList, ranges []zippkg.Range) ([]snapshot.Package, error) {
	b.indexPreviousPackages()
	pkgs := make([]snapshot.Package, 0, len(ranges))
	batch := make([]madePackage, runtime.GOMAXPROCS(0))
	for start := 0; start < len(ranges); start += len(batch) {
		made := batch[:min(len(batch), len(ranges)-start)]
		err := b.makePackages(ctx, s, members, ranges[start:], made)
		for i := range made {
			if err == nil {
				err = b.publishPackage(&made[i])
			} else if made[i].tmp != "" {
				os.Remove(made[i].tmp)
			}
			pkgs = append(pkgs, made[i].pkg)
			made[i] = madePackage{}
		}
		if err != nil {
			return nil, err
		}
	}
	return pkgs, nil
}

// makePackages makes the packages of the first len(made) ranges, one
// goroutine each, and returns the error of the first that failed.
func (b *dumper) makePackages(ctx context.Context, s *set, members *memberList, ranges []zippkg.Range, made []madePackage) error {
	errs := make([]error, len(made))
	var wg sync.WaitGroup
	for i := range made {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer snapshot.Catch(&errs[i])
			made[i], errs[i] = b.makeResourcePackage(ctx, s, members, ranges[i], max(1, runtime.GOMAXPROCS(0)/len(made)))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// makeResourcePackage makes the package of the members in range r of the
// set: the last build's, when it wrote the same one, else a new one,
// written to a temporary file with workers goroutines compressing ahead.
func (b *dumper) makeResourcePackage(ctx context.Context, s *set, members *memberList, r zippkg.Range, workers int) (madePackage, error) {
	m := &zippkg.Manifest{Kind: zippkg.ResourceDump, Up: b.docURL(layout.CapabilityList(s.Name)), At: b.sum.Now}
	fromMtime := b.cfg.Lastmod == config.LastmodMtime
	var paths zippkg.Paths
	for k := r.Start; k < r.End; k++ {
		r := b.next.Files.At(members.At(k))
		e := zippkg.Entry{Loc: b.resURL(r.Path), Lastmod: r.Lastmod(fromMtime), Path: paths.Assign(zippkg.PathFor(r.Path)),
			Length: r.Size, Hash: r.Digests.Hash(b.algs)}
		if schemaSafeType(r.Type()) {
			e.Type = r.Type()
		}
		m.Entries = append(m.Entries, e)
	}
	rel := layout.ResourceDumpPackage(s.Name, b.packageID(m))
	made := madePackage{pkg: snapshot.Package{Set: s.Name, Path: rel, At: b.now}, m: m}
	if old, ok := b.previousPackage(rel); ok {
		// A package's bytes depend on its at: kept, or made again with the
		// same at (an output folder built afresh), it keeps its bytes, as
		// its URI, named by its contents, promises to caches.
		m.At, made.pkg.At = unixTime(old.At), old.At
		if info, err := os.Stat(b.sink.Path(rel)); err == nil && info.Size() == old.Length {
			made.pkg = old
			return made, nil
		}
	}
	// The stats are gathered only for a package made anew: most of a
	// rebuild's packages are kept.
	scanned := make(bitstreams, r.End-r.Start)
	for k := r.Start; k < r.End; k++ {
		rec := b.next.Files.At(members.At(k))
		scanned[m.Entries[k-r.Start].Path] = bitstream{src: rec.Path, stat: rec.Stat()}
	}
	var err error
	made.tmp, err = b.packPackage(ctx, &made.pkg, made.m, scanned, workers)
	return made, err
}

// previousPackage returns the record of the package the last build
// published at rel, if any: in its Resource Dump, or in an archived one.
func (b *dumper) previousPackage(rel string) (snapshot.Package, bool) {
	b.indexPreviousPackages()
	p, ok := b.prevPackages[rel]
	return p, ok
}

// indexPreviousPackages makes the map of the last build's packages by
// output path, once: before the workers of resourcePackages read it.
//
// The packages archived Resource Dumps list are in it too. The same
// resources may come back into a package after it left the Resource Dump
// (a file deleted and restored, a folder moved back): the package gets
// the same name, and must get the same at, hence the same bytes, or it
// would replace the bytes its archived Resource Dump gives the length and
// hash of. A build killed after placing such a package left an output
// that no later build could recover its state from.
func (b *dumper) indexPreviousPackages() {
	if b.prevPackages != nil {
		return
	}
	b.prevPackages = make(map[string]snapshot.Package, len(b.prev.Packages))
	for _, a := range b.prev.Archived {
		for _, p := range a.Packages {
			if p.At != 0 { // a state before format 3 recorded only the path
				b.prevPackages[p.Path] = p
			}
		}
	}
	for _, p := range b.prev.Packages {
		b.prevPackages[p.Path] = p
	}
}

// packageID is a digest of everything that makes up a package's bytes
// except its time, so that equal contents keep their package, and other
// bytes (another deflate encoder's) get another name.
func (b *dumper) packageID(m *zippkg.Manifest) string {
	h := blake3.New()
	fmt.Fprintf(h, "%d\x00%s\x00%s\x00%s\x00%s\x00", m.Kind, m.Up, b.cfg.Dumps.Compression, b.cfg.SpecVersion, zippkg.Deflater)
	for i := range m.Entries {
		e := &m.Entries[i]
		fmt.Fprintf(h, "%s\x00%d\x00%s\x00%s\x00%d\x00%s\x00%s\x00%d\x00", e.Loc, e.Lastmod.Unix(), e.Change,
			e.Path, e.Length, e.Hash, e.Type, e.Datetime.Unix())
	}
	return hex.EncodeToString(h.Sum(nil)[:10])
}

// writePackage writes the package of manifest m at pkg.Path, staged (see
// stage), and publishes it with its manifest's copy.
func (b *dumper) writePackage(ctx context.Context, pkg *snapshot.Package, m *zippkg.Manifest, scanned bitstreams) error {
	tmp, err := b.packPackage(ctx, pkg, m, scanned, 0)
	if err != nil {
		return err
	}
	return b.publishPackage(&madePackage{pkg: *pkg, m: m, tmp: tmp})
}

// packPackage writes the package of manifest m for pkg.Path into a
// temporary file, reading each bitstream from the source and checking it
// against the manifest (see openBitstream), fills in pkg's length and
// digest, and returns the file. It is safe for concurrent use; workers
// goroutines (0: one per core) compress ahead (see zippkg.Options).
func (b *dumper) packPackage(ctx context.Context, pkg *snapshot.Package, m *zippkg.Manifest, scanned bitstreams, workers int) (string, error) {
	dst := b.sink.Path(pkg.Path)
	sum := sha256.New()
	size := &countingWriter{}
	open := func(e *zippkg.Entry) (io.ReadCloser, error) { return b.openBitstream(e, scanned) }
	tmp, err := b.sink.WriteTemp(pkg.Path, func(w io.Writer) error {
		return zippkg.Write(ctx, io.MultiWriter(w, sum, size), m, b.zipOptions(workers), open)
	})
	var changed *zippkg.ChangedError
	if errors.As(err, &changed) {
		return "", fmt.Errorf("dump package %s: %s changed since it was scanned (%v); build again", dst,
			filepath.Join(b.cfg.Source, filepath.FromSlash(scanned[changed.Path].src)), err)
	}
	if err != nil {
		return "", fmt.Errorf("dump package %s: %w", dst, err)
	}
	pkg.Length = size.n
	copy(pkg.SHA256[:], sum.Sum(nil))
	return tmp, nil
}

// publishPackage stages a package made anew, records the package as
// published by this build, and publishes its manifest's copy.
func (b *dumper) publishPackage(made *madePackage) error {
	if made.tmp != "" {
		b.sink.StageNew(made.pkg.Path, made.tmp)
	}
	b.recordPackage(made.pkg, made.tmp != "")
	return b.writeManifestCopy(made.pkg.Path, made.m)
}

// openBitstream opens the source file of a manifest entry, or its
// published copy when that differs from the source (see htmllink.go).
//
// A source file whose stat, once opened, is still the one it had when the
// scan took its digests, by the rule the scan trusts a file by
// (Record.Describes), is vouched for (zippkg.Vouched): packaging does not hash it again, and
// checks its stat once more when it closes it, so that a write while it
// was read fails the package. Every other file is hashed again and checked
// against the manifest. Without this, a dump made every byte hashed three
// times: by the scan, by packaging's check, and into the package's digest.
func (b *dumper) openBitstream(e *zippkg.Entry, scanned bitstreams) (io.ReadCloser, error) {
	bs, ok := scanned[e.Path]
	if !ok {
		return nil, fmt.Errorf("no source file for %s in the package", e.Path)
	}
	if b.linker.rewrites(bs.src) {
		return os.Open(b.sink.Current(b.sink.Path(bs.src)))
	}
	f, err := b.src.Open(bs.src)
	if err != nil {
		return nil, goneSinceScan(bs.src, err)
	}
	if _, same, err := isScanned(f, bs.stat, b.next.ScanStart); err != nil || !same {
		if err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
	return zippkg.Vouched(&vouchedFile{File: f, path: e.Path, scanned: bs.stat, scanStart: b.next.ScanStart}), nil
}

// isScanned reports whether the open file f still is the one whose stat,
// want, the scan that started at scanStart took with its digests
// (Record.Describes), and returns its stat: such a file's bytes are the
// ones the scan hashed, and need not be hashed again.
func isScanned(f fs.File, want snapshot.Stat, scanStart int64) (snapshot.Stat, bool, error) {
	info, err := f.Stat()
	if err != nil {
		return snapshot.Stat{}, false, err
	}
	got := snapshot.StatOf(info)
	return got, want.Describes(got, scanStart), nil
}

// bitstreams holds, by manifest path, each bitstream's source file and
// its stat when the scan took its digests (see openBitstream).
type bitstreams map[string]bitstream

type bitstream struct {
	src  string // the path in the source
	stat snapshot.Stat
}

// nanoTime formats a modification time in nanoseconds since the epoch.
func nanoTime(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339Nano) }

// vouchedFile is a source file packaged without being hashed again: Close
// checks that its stat still is the one the scan saw.
type vouchedFile struct {
	fs.File
	path      string // in the manifest
	scanned   snapshot.Stat
	scanStart int64
}

func (f *vouchedFile) Close() error {
	got, same, err := isScanned(f.File, f.scanned, f.scanStart)
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	want := f.scanned
	switch {
	case same:
		return nil
	case got.Size != want.Size:
		return &zippkg.ChangedError{Path: f.path, What: "length", Want: fmt.Sprint(want.Size), Got: fmt.Sprint(got.Size)}
	case got.Inode != want.Inode:
		return &zippkg.ChangedError{Path: f.path, What: "inode", Want: fmt.Sprint(want.Inode), Got: fmt.Sprint(got.Inode)}
	}
	return &zippkg.ChangedError{Path: f.path, What: "modification time", Want: nanoTime(want.ModTime), Got: nanoTime(got.ModTime)}
}

// writeManifestCopy publishes the copy of a package's manifest that the
// dump document links to with rel="contents"; it is byte-equal to the
// packaged manifest.xml because both come from zippkg.WriteManifest.
func (b *dumper) writeManifestCopy(pkg string, m *zippkg.Manifest) error {
	return b.sink.Write(layout.ManifestCopy(pkg), func(w io.Writer) error { return zippkg.WriteManifest(w, m) })
}

// recordPackage notes a package as published by this build.
func (b *dumper) recordPackage(p snapshot.Package, written bool) {
	b.next.Packages = append(b.next.Packages, p)
	b.sink.Record(p.Path, written)
}

// packageEntry returns the dump document entry of a package.
func (b *dumper) packageEntry(p *snapshot.Package) rs.Entry {
	md := rs.MD{Type: layout.TypeZIP, Length: p.Length, HasLength: true, Hash: "sha-256:" + hex.EncodeToString(p.SHA256[:])}
	if p.Change {
		md.From, md.Until = unixTime(p.From), unixTime(p.Until)
	} else {
		md.At = unixTime(p.At)
	}
	return rs.Entry{Loc: b.docURL(p.Path), MD: md,
		Links: []rs.Link{{Rel: rs.RelContents, Href: b.docURL(layout.ManifestCopy(p.Path)), Type: "application/xml"}}}
}

// writeChangePackages writes the Change Dump package of this build's
// events in set s (§13): the bitstreams of the resources created or
// updated, and the deletions, between the previous build and this one.
// Changes beyond what one package holds (50,000 entries, package_size
// bytes) go into further packages with the same from and until (see
// planChanges). events come deletions first (see deletionsFirst).
func (b *dumper) writeChangePackages(ctx context.Context, s *set, events []snapshot.Event) error {
	var mine []*snapshot.Event
	var items []zippkg.Item
	deletions := 0
	for i := range events {
		if ev := &events[i]; s.Contains(ev.Record.Path) {
			mine = append(mine, ev)
			item := zippkg.Item{Path: ev.Record.Path}
			if ev.Change != snapshot.Deleted {
				item.Size = ev.Record.Size
			} else {
				deletions++
			}
			items = append(items, item)
		}
	}
	if len(mine) == 0 {
		return nil
	}
	ranges, err := planChanges(items, deletions, zippkg.Limits{MaxBytes: int64(b.cfg.Dumps.PackageSize)})
	if err != nil {
		return fmt.Errorf("change dump of set %s: %w", s.Name, err)
	}
	if len(ranges) > 1 {
		b.notify(Note{Kind: NoteInfo, Msg: fmt.Sprintf("set %s: %d changes need %d Change Dump packages with the same from and until",
			s.Name, len(mine), len(ranges))})
	}
	for _, r := range ranges {
		if err := b.writeChangePackage(ctx, s, mine[r.Start:r.End]); err != nil {
			return err
		}
	}
	return nil
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

// writeChangePackage writes one Change Dump package of the given events.
func (b *dumper) writeChangePackage(ctx context.Context, s *set, events []*snapshot.Event) error {
	// The package covers the changes since the previous build, but no
	// earlier than the open segment, whose Change Dump lists it.
	journal := b.next.Journals[s.Name]
	from := max(b.prev.LastBuild, journal[len(journal)-1].From)
	m := &zippkg.Manifest{Kind: zippkg.ChangeDump, Up: b.docURL(layout.CapabilityList(s.Name)),
		From: unixTime(from), Until: b.sum.Now}
	var paths zippkg.Paths
	scanned := make(bitstreams, len(events))
	for _, ev := range events {
		t := unixTime(ev.Time)
		e := zippkg.Entry{Loc: b.resURL(ev.Record.Path), Lastmod: b.lister.eventLastmod(ev), Change: ev.Change.String()}
		if b.cfg.SpecVersion != config.Spec10 {
			e.Datetime = t
		}
		if ev.Change != snapshot.Deleted {
			e.Path = paths.Assign(zippkg.PathFor(ev.Record.Path))
			e.Length, e.Hash = ev.Record.Size, ev.Record.Digests.Hash(b.algs)
			scanned[e.Path] = bitstream{src: ev.Record.Path, stat: ev.Record.Stat()}
			if schemaSafeType(ev.Record.Type()) {
				e.Type = ev.Record.Type()
			}
		}
		m.Entries = append(m.Entries, e)
	}
	pkg := snapshot.Package{Set: s.Name, Change: true, From: from, Until: b.now,
		Path: layout.ChangeDumpPackage(s.Name, b.sum.Now, b.packageID(m))}
	if err := b.writePackage(ctx, &pkg, m, scanned); err != nil {
		return err
	}
	b.keeper.keepPublished(pkg.Path) // it cannot be made again
	return nil
}

// carriedPackage is a Change Dump package of an earlier build that this
// build found whole and lists again.
type carriedPackage struct {
	snapshot.Package
	changed bool // its output copy was restored from the state's
}

// carryChangePackages finds the Change Dump packages of earlier builds of
// set s that its journal still covers, whole in the output or the state
// archive (see publishKept), and returns the until of the newest one that
// is lost, or 0.
func (b *dumper) carryChangePackages(s *set, journal []snapshot.Segment) (lost int64, err error) {
	for _, p := range b.prev.Packages {
		// A package older than the oldest segment left the archive with
		// its Change Dump (see retain).
		if !p.Change || p.Set != s.Name || len(journal) == 0 || p.Until < journal[0].From {
			continue
		}
		_, ok, changed, err := b.keeper.publishKept(p.Path, sums{size: p.Length, sha256: p.SHA256})
		if err != nil {
			return 0, err
		}
		if !ok {
			b.warn(WarnLost, p.Path, "Change Dump package lost or damaged in both the state folder and the output folder; it cannot be made again")
			lost = max(lost, p.Until)
			continue
		}
		b.carried[s.Name] = append(b.carried[s.Name], carriedPackage{p, changed})
	}
	return lost, nil
}

// listCarriedPackages lists again the carried Change Dump packages of set
// s that its journal still covers after retention, with the copies of
// their manifests.
func (b *dumper) listCarriedPackages(s *set) error {
	journal := b.next.Journals[s.Name]
	for _, p := range b.carried[s.Name] {
		if p.Until < journal[0].From {
			continue // left with its segment
		}
		b.recordPackage(p.Package, p.changed)
		if err := b.ensureManifestCopy(p.Path); err != nil {
			return err
		}
	}
	return nil
}

// ensureManifestCopy keeps the published copy of a kept package's
// manifest, or writes it again from the manifest.xml inside the package
// (the two are byte-equal) when the output lost it.
func (b *dumper) ensureManifestCopy(pkg string) error {
	rel := layout.ManifestCopy(pkg)
	if _, err := os.Stat(b.sink.Path(rel)); err == nil {
		b.sink.Record(rel, false)
		return nil
	}
	zr, err := zip.OpenReader(b.sink.Current(b.sink.Path(pkg)))
	if err != nil {
		return fmt.Errorf("manifest of %s: %w", pkg, err)
	}
	defer zr.Close()
	return b.sink.Write(rel, func(w io.Writer) error {
		f, err := zr.Open(zippkg.ManifestName)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, io.LimitReader(f, rs.MaxBytes+rs.ReadSlack))
		return err
	})
}

// changePackagesOf returns the set's Change Dump packages written while
// segment seg was open.
func (b *dumper) changePackagesOf(s *set, seg *snapshot.Segment) []snapshot.Package {
	var pkgs []snapshot.Package
	for _, p := range b.next.Packages {
		if p.Change && p.Set == s.Name && p.Until >= seg.From && (seg.Until == 0 || p.Until < seg.Until) {
			pkgs = append(pkgs, p)
		}
	}
	return pkgs
}

// writeChangeDump writes the Change Dump document of set s for segment seg
// at path.
func (b *dumper) writeChangeDump(path string, s *set, seg *snapshot.Segment) (bool, error) {
	md := rs.MD{Capability: rs.CapChangeDump, From: unixTime(seg.From), Until: unixTime(seg.Until)}
	links := []rs.Link{b.upLink(s), {Rel: rs.RelIndex, Href: b.docURL(layout.ChangeDumpIndex(s.Name))}}
	pkgs := b.changePackagesOf(s, seg)
	return b.writeXML(path, rs.URLSet, md, links, func(w *rs.Writer) error {
		for i := range pkgs {
			e := b.packageEntry(&pkgs[i])
			if err := w.Entry(&e); err != nil {
				return err
			}
		}
		return nil
	})
}

// countingWriter counts the bytes written to it.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}
