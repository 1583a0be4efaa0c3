package generator

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
	"github.com/rsgen/rsgen/zippkg"
	"golang.org/x/sync/errgroup"
)

// dumper makes the dump packages the plan decided (packages.go), reading
// their bitstreams from in, publishes them with the copies of their
// manifests, and writes the Resource Dumps that list them (§11); the
// Change Dumps are segment documents (changelists.go). It returns the
// records of the packages it publishes, in order.
type dumper struct {
	d  docWriter
	in sources
}

// packageEntryBound bounds the bytes of one dump document entry beyond its
// two URIs.
const packageEntryBound = 500

// restore makes sure that the output and the state archive both hold the
// packages of earlier builds pkgs, which the plan found whole (see
// publishKept).
func (dm *dumper) restore(pkgs []snapshot.Package) ([]carriedPackage, error) {
	carried := make([]carriedPackage, 0, len(pkgs))
	for _, p := range pkgs {
		_, ok, changed, err := dm.d.k.publishKept(p.Path, sums{size: p.Length, sha256: p.SHA256})
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("dump package %s: lost from the state folder and the output folder during the build", p.Path)
		}
		carried = append(carried, carriedPackage{p, changed})
	}
	return carried, nil
}

// list lists again packages of earlier builds, with the copies of their
// manifests.
func (dm *dumper) list(pkgs []carriedPackage) ([]snapshot.Package, error) {
	var listed []snapshot.Package
	for _, p := range pkgs {
		dm.d.w.Record(p.Path, p.changed)
		listed = append(listed, p.Package)
		if err := dm.ensureManifestCopy(p.Path); err != nil {
			return nil, err
		}
	}
	return listed, nil
}

// writeChangePackages makes the Change Dump packages of this build's
// events in set sp.set, which no later build could make again.
func (dm *dumper) writeChangePackages(ctx context.Context, sp *setPlan) ([]snapshot.Package, error) {
	var made []snapshot.Package
	for _, pp := range sp.changePackages {
		pkg := pp.pkg
		m, scanned := changeManifest(dm.d.s, sp.set, pkg.From, pkg.Until, sp.events[pp.rng.Start:pp.rng.End])
		tmp, err := dm.pack(ctx, &pkg, m, scanned, 0)
		if err != nil {
			return nil, err
		}
		if err := dm.publish(&madePackage{pkg: pkg, m: m, tmp: tmp}); err != nil {
			return nil, err
		}
		made = append(made, pkg)
		dm.d.k.keepPublished(pkg.Path) // it cannot be made again
	}
	return made, nil
}

// madePackage is a package of a Resource Dump, made anew or kept: its
// record, its manifest, and the temporary file it was written to, or ""
// when the last build's package is kept.
type madePackage struct {
	pkg snapshot.Package
	m   *zippkg.Manifest
	tmp string
}

// writeResourcePackages publishes the packages of set sp.set's Resource
// Dump, in order, from the members of the scan sc. Those the last build
// did not write are written on every core, a batch of one per core at a
// time (deflating takes a core), and published in order, so that the
// output and the state do not depend on which finished first; a batch
// holds one manifest per core.
func (dm *dumper) writeResourcePackages(ctx context.Context, sc *scanned, sp *setPlan) ([]snapshot.Package, error) {
	planned := sp.resourcePackages
	pkgs := make([]snapshot.Package, 0, len(planned))
	batch := make([]madePackage, runtime.GOMAXPROCS(0))
	for start := 0; start < len(planned); start += len(batch) {
		made := batch[:min(len(batch), len(planned)-start)]
		err := dm.makePackages(ctx, sc, sp.set, planned[start:], made)
		for i := range made {
			if err == nil {
				err = dm.publish(&made[i])
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

// makePackages makes the first len(made) packages of planned, all at
// once, and returns the error of the first that failed, which stops the
// others.
func (dm *dumper) makePackages(ctx context.Context, sc *scanned, st *set, planned []plannedPackage, made []madePackage) error {
	g, ctx := errgroup.WithContext(ctx)
	for i := range made {
		g.Go(func() error {
			var err error
			made[i], err = dm.makeResourcePackage(ctx, sc, st, &planned[i], max(1, runtime.GOMAXPROCS(0)/len(made)))
			return err
		})
	}
	return g.Wait()
}

// makeResourcePackage makes the planned package pp of set st's members in
// sc: the last build's, when the output still holds it, else a new one,
// written to a temporary file with workers goroutines compressing ahead.
func (dm *dumper) makeResourcePackage(ctx context.Context, sc *scanned, st *set, pp *plannedPackage, workers int) (madePackage, error) {
	m, err := resourceManifest(dm.d.s, sc, st, pp.rng, unixTime(pp.pkg.At))
	if err != nil {
		return madePackage{}, err
	}
	if pp.last != nil {
		if info, err := os.Stat(dm.d.w.Path(pp.pkg.Path)); err == nil && info.Size() == pp.last.Length {
			return madePackage{pkg: *pp.last, m: m}, nil
		}
	}
	// The stats are gathered only for a package made anew: most of a
	// rebuild's packages are kept.
	members := sc.members[st]
	scanned := make(bitstreams, pp.rng.End-pp.rng.Start)
	for k := pp.rng.Start; k < pp.rng.End; k++ {
		rec, err := sc.files.At(members.At(k))
		if err != nil {
			return madePackage{}, err
		}
		scanned[m.Entries[k-pp.rng.Start].Path] = bitstream{src: rec.Path, stat: rec.Stat()}
	}
	made := madePackage{pkg: pp.pkg, m: m}
	made.tmp, err = dm.pack(ctx, &made.pkg, made.m, scanned, workers)
	return made, err
}

// pack writes the package of manifest m for pkg.Path into a temporary
// file, reading each bitstream from the source and checking it against
// the manifest (see openBitstream), fills in pkg's length and digest, and
// returns the file. It is safe for concurrent use; workers goroutines (0:
// one per core) compress ahead (see zippkg.Options).
func (dm *dumper) pack(ctx context.Context, pkg *snapshot.Package, m *zippkg.Manifest, scanned bitstreams, workers int) (string, error) {
	dst := dm.d.w.Path(pkg.Path)
	sum := sha256.New()
	size := &countingWriter{}
	open := func(e *zippkg.Entry) (io.ReadCloser, error) { return dm.in.openBitstream(e, scanned) }
	tmp, err := dm.d.w.WriteTemp(pkg.Path, func(w io.Writer) error {
		return zippkg.Write(ctx, io.MultiWriter(w, sum, size), m, zipOptions(dm.d.s.cfg, workers), open)
	})
	var changed *zippkg.ChangedError
	if errors.As(err, &changed) {
		return "", fmt.Errorf("dump package %s: %s changed since it was scanned (%v); build again", dst,
			filepath.Join(dm.d.s.cfg.Source, filepath.FromSlash(scanned[changed.Path].src)), err)
	}
	if err != nil {
		return "", fmt.Errorf("dump package %s: %w", dst, err)
	}
	pkg.Length = size.n
	copy(pkg.SHA256[:], sum.Sum(nil))
	return tmp, nil
}

// zipOptions returns the compression the configuration asks for, and the
// share of the cores of a package written beside others (0: every core).
func zipOptions(cfg *config.Config, workers int) *zippkg.Options {
	o := &zippkg.Options{Workers: workers}
	switch cfg.Dumps.Compression {
	case config.CompressStore:
		o.Method = func(string) uint16 { return zip.Store }
	case config.CompressDeflate:
		o.Method = func(string) uint16 { return zip.Deflate }
	}
	return o
}

// publish stages a package made anew, records the package as published by
// this build, and publishes its manifest's copy.
func (dm *dumper) publish(made *madePackage) error {
	if made.tmp != "" {
		dm.d.w.StageNew(made.pkg.Path, made.tmp)
	}
	dm.d.w.Record(made.pkg.Path, made.tmp != "")
	return dm.writeManifestCopy(made.pkg.Path, made.m)
}

// writeManifestCopy publishes the copy of a package's manifest that the
// dump document links to with rel="contents"; it is byte-equal to the
// packaged manifest.xml because both come from zippkg.WriteManifest.
func (dm *dumper) writeManifestCopy(pkg string, m *zippkg.Manifest) error {
	return dm.d.w.Write(layout.ManifestCopy(pkg), func(w io.Writer) error { return zippkg.WriteManifest(w, m) })
}

// ensureManifestCopy keeps the published copy of a kept package's
// manifest, or writes it again from the manifest.xml inside the package
// (the two are byte-equal) when the output lost it.
func (dm *dumper) ensureManifestCopy(pkg string) error {
	w := dm.d.w
	rel := layout.ManifestCopy(pkg)
	if _, err := os.Stat(w.Path(rel)); err == nil {
		w.Record(rel, false)
		return nil
	}
	zr, err := zip.OpenReader(w.Current(w.Path(pkg)))
	if err != nil {
		return fmt.Errorf("manifest of %s: %w", pkg, err)
	}
	defer zr.Close()
	return w.Write(rel, func(w io.Writer) error {
		f, err := zr.Open(zippkg.ManifestName)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, io.LimitReader(f, rs.MaxBytes+rs.ReadSlack))
		return err
	})
}

// resourceDumpListing returns what set st's Resource Dump lists: its packages,
// at the time the set last changed.
func resourceDumpListing(s *site, st *set, pkgs []snapshot.Package, at int64) listing {
	return listing{md: rs.MD{Capability: rs.CapResourceDump, At: unixTime(at)}, n: len(pkgs),
		size:  int64(len(pkgs)) * int64(2*len(s.base)+packageEntryBound+2*len(layout.SetDir(st.Name))),
		entry: func(i int, e *rs.Entry) error { *e = packageEntry(s, &pkgs[i]); return nil }}
}

// writeResourceDump writes set st's Resource Dump, l; archived says
// whether its archive is published.
func writeResourceDump(d docWriter, st *set, l listing, archived bool) error {
	return writeSplit(d.s, st, layout.ResourceDump(st.Name), l, d.s.archivesLink(st, rs.CapResourceDump, archived), d.writeDoc, nil)
}
