package generator

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
	"github.com/rsgen/rsgen/zippkg"
	"github.com/zeebo/blake3"
)

// packageEntryBound bounds the bytes of one dump document entry beyond its
// two URIs.
const packageEntryBound = 500

// zipOptions returns the compression the configuration asks for.
func (b *builder) zipOptions() *zippkg.Options {
	switch b.cfg.Dumps.Compression {
	case "store":
		return &zippkg.Options{Method: func(string) uint16 { return zip.Store }}
	case "deflate":
		return &zippkg.Options{Method: func(string) uint16 { return zip.Deflate }}
	}
	return nil
}

// manifestPath returns the path of a source file inside a dump package.
func manifestPath(p string) string { return "/" + p }

// writeResourceDump writes the set's Resource Dump (§11): its resources in
// ZIP packages that cover stable ranges of paths, and the document listing
// them. A package whose contents did not change since the last build is
// kept as it is: its name is a digest of everything that goes into it.
func (b *builder) writeResourceDump(ctx context.Context, s *set) error {
	members := b.members(s)
	items := make([]zippkg.Item, len(members))
	for k, i := range members {
		items[k] = zippkg.Item{Path: b.next.Files[i].Path, Size: b.next.Files[i].Size}
	}
	ranges, err := zippkg.Plan(items, zippkg.Limits{MaxBytes: int64(b.cfg.Dumps.PackageSize)})
	if err != nil {
		return fmt.Errorf("resource dump of set %s: %w", s.Name, err)
	}
	var pkgs []snapshot.Package
	for _, r := range ranges {
		pkg, err := b.resourcePackage(ctx, s, members[r.Start:r.End])
		if err != nil {
			return err
		}
		pkgs = append(pkgs, pkg)
	}
	md := rs.MD{Capability: rs.CapResourceDump, At: unixTime(b.next.SetChanged[s.Name])}
	size := int64(len(pkgs)) * int64(2*len(b.base)+packageEntryBound+2*len(layout.SetDir(s.Name)))
	entry := func(i int, e *rs.Entry) { *e = b.packageEntry(&pkgs[i]) }
	if err := b.writeSplit(s, layout.ResourceDump(s.Name), md, b.archivesLink(s, rs.CapResourceDump), len(pkgs), size, entry, b.writeDoc); err != nil {
		return err
	}
	paths := make([]string, len(pkgs))
	for i := range pkgs {
		paths[i] = pkgs[i].Path
	}
	return b.snapshot(s, true, md, len(pkgs), size, entry, paths...)
}

// resourcePackage returns the package of the files at the given indexes,
// writing it unless the last build wrote the same one.
func (b *builder) resourcePackage(ctx context.Context, s *set, files []int) (snapshot.Package, error) {
	m := &zippkg.Manifest{Kind: zippkg.ResourceDump, Up: b.docURL(layout.CapabilityList(s.Name)), At: b.sum.Now}
	fromMtime := b.cfg.Lastmod == "mtime"
	for _, i := range files {
		r := &b.next.Files[i]
		e := zippkg.Entry{Loc: b.resURL(r.Path), Lastmod: r.Lastmod(fromMtime), Path: manifestPath(r.Path),
			Length: r.Size, Hash: r.Digests.Hash(b.algs)}
		if schemaSafeType(r.Type) {
			e.Type = r.Type
		}
		m.Entries = append(m.Entries, e)
	}
	rel := layout.ResourceDumpPackage(s.Name, b.packageID(m))
	if old, ok := b.keptPackage(rel); ok {
		m.At = unixTime(old.At) // the copy of the manifest must match the kept package
		return old, b.writeManifestCopy(rel, m)
	}
	pkg := snapshot.Package{Set: s.Name, Path: rel, At: b.now}
	return pkg, b.writePackage(ctx, &pkg, m)
}

// packageID is a digest of everything that makes up a package's bytes
// except its time, so that equal contents keep their package.
func (b *builder) packageID(m *zippkg.Manifest) string {
	h := blake3.New()
	fmt.Fprintf(h, "%d\x00%s\x00%s\x00%s\x00", m.Kind, m.Up, b.cfg.Dumps.Compression, b.cfg.SpecVersion)
	for i := range m.Entries {
		e := &m.Entries[i]
		fmt.Fprintf(h, "%s\x00%d\x00%s\x00%s\x00%d\x00%s\x00%s\x00%d\x00", e.Loc, e.Lastmod.Unix(), e.Change,
			e.Path, e.Length, e.Hash, e.Type, e.Datetime.Unix())
	}
	return hex.EncodeToString(h.Sum(nil)[:10])
}

// keptPackage returns the record of a package the last build published at
// rel, if its file is still there as it was written.
func (b *builder) keptPackage(rel string) (snapshot.Package, bool) {
	i := slices.IndexFunc(b.prev.Packages, func(p snapshot.Package) bool { return p.Path == rel })
	if i < 0 {
		return snapshot.Package{}, false
	}
	old := b.prev.Packages[i]
	info, err := os.Stat(b.outPath(rel))
	if err != nil || info.Size() != old.Length {
		return snapshot.Package{}, false
	}
	b.recordPackage(old, false)
	return old, true
}

// writePackage writes the package of manifest m at pkg.Path, staged (see
// stage), reading each bitstream from the source and checking it against the
// manifest, and fills in pkg's length and digest.
func (b *builder) writePackage(ctx context.Context, pkg *snapshot.Package, m *zippkg.Manifest) error {
	dst := b.outPath(pkg.Path)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("dump package %s: %w", dst, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), layout.TempPrefix+"*")
	if err != nil {
		return fmt.Errorf("dump package %s: %w", dst, err)
	}
	sum := sha256.New()
	err = zippkg.Write(ctx, io.MultiWriter(tmp, sum), m, b.zipOptions(), b.openBitstream)
	var info os.FileInfo
	if err == nil {
		info, err = tmp.Stat()
	}
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	var changed *zippkg.ChangedError
	if errors.As(err, &changed) {
		return fmt.Errorf("dump package %s: %s changed since it was scanned (%v); build again", dst,
			filepath.Join(b.cfg.Source, filepath.FromSlash(changed.Path[1:])), err)
	}
	if err != nil {
		return fmt.Errorf("dump package %s: %w", dst, err)
	}
	b.stage(tmp.Name(), dst)
	pkg.Length = info.Size()
	copy(pkg.SHA256[:], sum.Sum(nil))
	b.recordPackage(*pkg, true)
	return b.writeManifestCopy(pkg.Path, m)
}

// openBitstream opens the source file of a manifest entry, or its
// published copy when that differs from the source (see htmllink.go).
func (b *builder) openBitstream(e *zippkg.Entry) (io.ReadCloser, error) {
	if b.rewrites(e.Path[1:]) {
		return os.Open(b.current(b.outPath(e.Path[1:])))
	}
	f, err := snapshot.DirFS(b.cfg.Source).Open(e.Path[1:])
	if err != nil {
		return nil, err
	}
	return f, nil
}

// writeManifestCopy publishes the copy of a package's manifest that the
// dump document links to with rel="contents"; it is byte-equal to the
// packaged manifest.xml because both come from zippkg.WriteManifest.
func (b *builder) writeManifestCopy(pkg string, m *zippkg.Manifest) error {
	return b.writeOutput(layout.ManifestCopy(pkg), func(w io.Writer) error { return zippkg.WriteManifest(w, m) })
}

// recordPackage notes a package as published by this build.
func (b *builder) recordPackage(p snapshot.Package, written bool) {
	b.next.Packages = append(b.next.Packages, p)
	b.recordOutput(p.Path, written)
}

// packageEntry returns the dump document entry of a package.
func (b *builder) packageEntry(p *snapshot.Package) rs.Entry {
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
// bytes) go into further packages with the same from and until, split in
// path order like Resource Dump packages.
func (b *builder) writeChangePackages(ctx context.Context, s *set, events []snapshot.Event) error {
	var mine []*snapshot.Event
	var items []zippkg.Item
	for i := range events {
		if ev := &events[i]; s.Contains(ev.Record.Path) {
			mine = append(mine, ev)
			item := zippkg.Item{Path: ev.Record.Path}
			if ev.Change != snapshot.Deleted {
				item.Size = ev.Record.Size
			}
			items = append(items, item)
		}
	}
	if len(mine) == 0 {
		return nil
	}
	ranges, err := zippkg.Plan(items, zippkg.Limits{MaxBytes: int64(b.cfg.Dumps.PackageSize)})
	if err != nil {
		return fmt.Errorf("change dump of set %s: %w", s.Name, err)
	}
	if len(ranges) > 1 {
		b.warn("", fmt.Sprintf("set %s: %d changes need %d Change Dump packages with the same from and until",
			s.Name, len(mine), len(ranges)))
	}
	for _, r := range ranges {
		if err := b.writeChangePackage(ctx, s, mine[r.Start:r.End]); err != nil {
			return err
		}
	}
	return nil
}

// writeChangePackage writes one Change Dump package of the given events.
func (b *builder) writeChangePackage(ctx context.Context, s *set, events []*snapshot.Event) error {
	m := &zippkg.Manifest{Kind: zippkg.ChangeDump, Up: b.docURL(layout.CapabilityList(s.Name)),
		From: unixTime(b.prev.LastBuild), Until: b.sum.Now}
	var paths zippkg.Paths
	for _, ev := range events {
		t := unixTime(ev.Time)
		e := zippkg.Entry{Loc: b.resURL(ev.Record.Path), Lastmod: b.eventLastmod(ev), Change: ev.Change.String()}
		if b.cfg.SpecVersion != "1.0" {
			e.Datetime = t
		}
		if ev.Change != snapshot.Deleted {
			e.Path = paths.Assign(manifestPath(ev.Record.Path))
			e.Length, e.Hash = ev.Record.Size, ev.Record.Digests.Hash(b.algs)
			if schemaSafeType(ev.Record.Type) {
				e.Type = ev.Record.Type
			}
		}
		m.Entries = append(m.Entries, e)
	}
	pkg := snapshot.Package{Set: s.Name, Change: true, From: b.prev.LastBuild, Until: b.now,
		Path: layout.ChangeDumpPackage(s.Name, b.sum.Now, b.packageID(m))}
	return b.writePackage(ctx, &pkg, m)
}

// carryChangePackages keeps the records of the Change Dump packages of
// earlier builds, which stay published.
func (b *builder) carryChangePackages(s *set) {
	for _, p := range b.prev.Packages {
		// A package older than the oldest segment left the archive with
		// its Change Dump (see retain).
		if p.Change && p.Set == s.Name && p.Until >= b.next.Segments[0].From {
			if _, err := os.Stat(b.outPath(p.Path)); err != nil {
				b.warn(p.Path, "change dump package missing from the output; it cannot be made again and is no longer listed")
				continue
			}
			b.recordPackage(p, false)
			b.recordOutput(layout.ManifestCopy(p.Path), false)
		}
	}
}

// changePackagesOf returns the set's Change Dump packages written while
// segment seg was open.
func (b *builder) changePackagesOf(s *set, seg *snapshot.Segment) []snapshot.Package {
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
func (b *builder) writeChangeDump(path string, s *set, seg *snapshot.Segment) (bool, error) {
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
