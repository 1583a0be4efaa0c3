package destination

import (
	"archive/zip"
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rsgen/rsgen/rs"
)

// Dumps seed DIR: the files of a Resource Dump's or Change Dumps'
// packages are placed, each verified against its manifest entry, and the
// Resource List or the Change Lists then decide as always, finding those
// files right and fetching only what the packages lacked or had older.
// So a dump never makes DIR other than the lists say, only cheaper to
// reach.

// requestCost is what one request is taken to cost, in bytes, when a
// sync weighs fetching resources one by one against fetching packages:
// a round trip, headers, and a file opened on each side.
const requestCost = 16 << 10

// packageRef is a dump package as a dump document lists it.
type packageRef struct {
	url  string
	fix  fixity
	from time.Time // Change Dumps: the interval the package covers
}

// packagesFile lists, in the state, the packages whose files a sync in
// progress has placed, so that a resumed sync does not fetch them again.
const packagesFile = "packages"

// resourceDump reads the packages the Resource Dump at u lists.
func (rd *reader) resourceDump(ctx context.Context, u string) ([]packageRef, error) {
	var pkgs []packageRef
	err := rd.readList(ctx, u, rs.CapResourceDump, func(*rs.Head) {}, func(e *rs.Entry) error {
		fix, err := fixityOf(&e.MD, e.Lastmod)
		if err != nil {
			return fmt.Errorf("package %s: %w", e.Loc, err)
		}
		pkgs = append(pkgs, packageRef{url: e.Loc, fix: fix})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the Resource Dump: %w", err)
	}
	return pkgs, nil
}

// changeDumps reads the packages the Change Dumps list from since on.
func (rd *reader) changeDumps(ctx context.Context, since time.Time) ([]packageRef, error) {
	refs, err := rd.refs(ctx, rs.CapChangeDump, rs.CapChangeDumpArchive)
	if err != nil {
		return nil, fmt.Errorf("read the Change Dumps: %w", err)
	}
	var pkgs []packageRef
	for _, ref := range covering(refs, since) {
		err := rd.readList(ctx, ref.url, rs.CapChangeDump, func(*rs.Head) {}, func(e *rs.Entry) error {
			if !e.MD.Until.IsZero() && e.MD.Until.Before(since) {
				return nil
			}
			fix, err := fixityOf(&e.MD, e.Lastmod)
			if err != nil {
				return fmt.Errorf("package %s: %w", e.Loc, err)
			}
			pkgs = append(pkgs, packageRef{url: e.Loc, fix: fix, from: e.MD.From})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read the Change Dump %s: %w", ref.url, err)
		}
	}
	return pkgs, nil
}

// worthIt decides whether fetching pkgs costs less than the fetches n
// plans: always with the policy DumpsAlways; with DumpsAuto, when every
// package's length is listed and their sum is below the bytes and
// requests planned.
func worthIt(policy DumpPolicy, pkgs []packageRef, n planCounts) bool {
	if policy == DumpsAlways {
		return true
	}
	var total int64
	for _, p := range pkgs {
		if p.fix.length < 0 {
			return false
		}
		total += p.fix.length
	}
	return total < n.bytes+n.fetch*requestCost
}

// applyPackages fetches each package, verifies it, and places its
// files; packages placed by a sync that a kill cut short are passed over.
func (ap *applier) applyPackages(ctx context.Context, pkgs []packageRef, manifestCap string, since time.Time) error {
	done, err := readDone(filepath.Join(ap.state, packagesFile))
	if err != nil {
		return err
	}
	for _, p := range pkgs {
		if done[p.url] {
			continue
		}
		if err := ap.applyPackage(ctx, p, manifestCap, since); err != nil {
			return err
		}
		if err := appendDone(filepath.Join(ap.state, packagesFile), p.url); err != nil {
			return err
		}
	}
	return nil
}

// applyPackage fetches one package into the work folder and places the
// files of its manifest. A package that cannot be fetched or verified is
// reported and passed over: the lists fetch its files one by one.
func (ap *applier) applyPackage(ctx context.Context, p packageRef, manifestCap string, since time.Time) error {
	name := filepath.Join(ap.work, "package.zip")
	defer os.Remove(name)
	err := ap.c.retry(ctx, func() error { return ap.download(ctx, p, name) })
	if err == nil {
		err = ap.placePackage(ctx, name, p, manifestCap, since)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		ap.rep.warning(fmt.Sprintf("package %s: %v; its resources are fetched one by one", p.url, err))
	}
	return nil
}

// download fetches a package into the file name, verified against its
// listing.
func (ap *applier) download(ctx context.Context, p packageRef, name string) error {
	resp, err := ap.c.get(ctx, p.url, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	v, err := hashReader(io.TeeReader(resp.Body, f), &p.fix)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return v.check(p.url, &p.fix)
}

// placePackage places the files of the package in the file name: every
// manifest entry with a bitstream, its bytes verified against the
// entry's length and digests; entries that lack either are left to the
// lists. A ZIP entry that declares another size than its manifest entry
// is not read, so that no entry decompresses to more than the manifest
// says (archive/zip fails a read past the declared size).
func (ap *applier) placePackage(ctx context.Context, name string, p packageRef, manifestCap string, since time.Time) error {
	zr, err := zip.OpenReader(name)
	if err != nil {
		return fmt.Errorf("open the package: %w", err)
	}
	defer zr.Close()
	files := make(map[string]*zip.File, len(zr.File))
	for _, f := range zr.File {
		files[f.Name] = f
	}
	mf := files["manifest.xml"]
	if mf == nil {
		return fmt.Errorf("no manifest.xml in the package")
	}
	mr, err := mf.Open()
	if err != nil {
		return fmt.Errorf("open manifest.xml: %w", err)
	}
	defer mr.Close()
	r := rs.NewReader(bufio.NewReader(mr))
	h, err := r.Head()
	if err == nil && h.MD.Capability != manifestCap {
		err = fmt.Errorf("its capability is %q, not %q", h.MD.Capability, manifestCap)
	}
	if err != nil {
		return fmt.Errorf("read manifest.xml: %w", err)
	}
	return r.Entries(func(e *rs.Entry) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return ap.placeEntry(e, files, p.url, manifestCap == rs.CapChangeDumpManifest, since)
	})
}

// placeEntry places the file of one manifest entry. Deletions, and
// changes older than since, are left to the Change Lists.
func (ap *applier) placeEntry(e *rs.Entry, files map[string]*zip.File, pkg string, change bool, since time.Time) error {
	at := e.MD.Datetime
	if e.MD.Change == rs.ChangeDeleted || change && !at.IsZero() && at.Before(since) {
		return nil
	}
	path, err := ap.m.path(e.Loc)
	if err != nil {
		return nil // other hosts and refusals are the lists' to report
	}
	// An entry is taken from the package only with its length, which
	// bounds what its file may decompress to, and a digest to verify it.
	fix, err := fixityOf(&e.MD, e.Lastmod)
	if err != nil || !fix.hasHash() || fix.length < 0 {
		return nil
	}
	if !change {
		if _, present, _ := ap.dir.stat(path); present {
			return nil // the Resource List decides about files there
		}
	}
	replace := change // a change is mostly to a file that is there
	zf := files[strings.TrimPrefix(e.MD.Path, "/")]
	if zf == nil {
		ap.rep.warning(fmt.Sprintf("package %s: manifest entry %s names %q, which the package lacks", pkg, e.Loc, e.MD.Path))
		return nil
	}
	if zf.UncompressedSize64 != uint64(fix.length) {
		ap.rep.warning(fmt.Sprintf("package %s: %s holds %d bytes, its manifest entry %d", pkg, zf.Name, zf.UncompressedSize64, fix.length))
		return nil
	}
	w := want{path: path, loc: e.Loc, fix: fix}
	if change {
		w.change, w.at = e.MD.Change, at
	}
	zr, err := zf.Open()
	if err != nil {
		return fmt.Errorf("open %s in the package: %w", zf.Name, err)
	}
	rec, err := ap.place(&w, io.LimitReader(zr, int64(zf.UncompressedSize64)+1), replace)
	zr.Close()
	if errors.Is(err, errFolderThere) || errors.Is(err, errFileThere) {
		return nil // a path that changed type: the lists delete what is in the way first, then fetch it
	}
	if err != nil {
		ap.rep.warning(fmt.Sprintf("package %s: %s: %v", pkg, zf.Name, err))
		return nil
	}
	if err := ap.inv.put(&rec); err != nil {
		return err
	}
	ap.rep.event(Event{Kind: EventFetched, Path: path, URL: e.Loc, Bytes: rec.length, Dump: true})
	return nil
}

// readDone reads the packages file: one URL per line.
func readDone(name string) (map[string]bool, error) {
	data, err := os.ReadFile(name)
	if os.IsNotExist(err) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	done := map[string]bool{}
	for line := range strings.Lines(string(data)) {
		if u, ok := strings.CutSuffix(line, "\n"); ok {
			done[u] = true
		}
	}
	return done, nil
}

// appendDone adds a package to the packages file.
func appendDone(name, u string) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(u + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
