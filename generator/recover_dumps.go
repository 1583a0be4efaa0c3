package generator

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
)

// recoverDumps adds to st the dump packages the output's Resource Dump and
// Change Dumps of set name list, so that a build after a recovery keeps
// the Resource Dump packages whose contents did not change and goes on
// listing the Change Dump packages of earlier builds, which could not be
// made again. It returns the output paths of the documents, packages and
// manifest copies it read, and adds the closed Change Dumps to the
// recovery's archive. A set without dumps has none of these documents.
func (rc *recoverer) recoverDumps(name string, st *snapshot.State, rec *recovery) ([]string, error) {
	var outputs []string
	docs, err := rc.readSplitDoc(layout.ResourceDump(name), rs.CapResourceDump, func(e *rs.Entry) error {
		p, err := rc.pubPackage(name, false, e)
		if err == nil {
			st.Packages = append(st.Packages, p)
			outputs = append(outputs, p.Path, layout.ManifestCopy(p.Path))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	outputs = append(outputs, docs...)
	var dumps []string
	index := layout.ChangeDumpIndex(name)
	_, err = readPublished(rc.s.outPath(index), func(_ *rs.Head, e *rs.Entry) error {
		rel, ok := layout.PathFromURL(rc.s.base, e.Loc)
		if !ok {
			return fmt.Errorf("%s: change dump %s is not under %s", index, e.Loc, rc.s.base)
		}
		dumps = append(dumps, rel)
		if e.MD.Until.IsZero() {
			return nil
		}
		k, err := rc.recoverKept(rel, rec)
		if err != nil {
			return err
		}
		journal := st.Journals[name]
		for i := range journal {
			if segmentPath(changeDumps, name, &journal[i]) == rel {
				journal[i].Kept = append(journal[i].Kept, k)
			}
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return outputs, nil
	}
	if err != nil {
		return nil, err
	}
	outputs = append(outputs, index)
	for _, rel := range dumps {
		_, err := rc.readSplitDoc(rel, rs.CapChangeDump, func(e *rs.Entry) error {
			p, err := rc.pubPackage(name, true, e)
			if err == nil {
				st.Packages = append(st.Packages, p)
				outputs = append(outputs, p.Path, layout.ManifestCopy(p.Path))
				rec.archive = append(rec.archive, p.Path) // it cannot be made again
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		outputs = append(outputs, rel)
	}
	return outputs, nil
}

// readSplitDoc reads the dump document at rel, or its index and parts,
// calling pkg for each package entry, and returns the documents read; none
// when rel does not exist.
func (rc *recoverer) readSplitDoc(rel, capability string, pkg func(*rs.Entry) error) ([]string, error) {
	var parts []string
	head, err := readPublished(rc.s.outPath(rel), func(head *rs.Head, e *rs.Entry) error {
		if head.Root != rs.SitemapIndex {
			return pkg(e)
		}
		p, ok := layout.PathFromURL(rc.s.base, e.Loc)
		if !ok {
			return fmt.Errorf("%s: part %s is not under %s", rel, e.Loc, rc.s.base)
		}
		parts = append(parts, p)
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if head.MD.Capability != capability {
		return nil, fmt.Errorf("%s: capability %q, want %q", rel, head.MD.Capability, capability)
	}
	for _, p := range parts {
		if _, err := readPublished(rc.s.outPath(p), func(_ *rs.Head, e *rs.Entry) error { return pkg(e) }); err != nil {
			return nil, err
		}
	}
	return append([]string{rel}, parts...), nil
}

// pubPackage returns the record of a package a live dump document lists.
// The package must still be in the output: a record is a promise that it
// is.
func (rc *recoverer) pubPackage(set string, change bool, e *rs.Entry) (snapshot.Package, error) {
	p, err := rc.packageRecord(set, change, e)
	if err != nil {
		return p, err
	}
	info, err := os.Stat(rc.s.outPath(p.Path))
	if err != nil {
		return p, fmt.Errorf("dump package %s: %w", p.Path, err)
	}
	if !e.MD.HasLength || p.Length != info.Size() {
		return p, fmt.Errorf("dump package %s: length %d, but the file has %d bytes", p.Path, e.MD.Length, info.Size())
	}
	return p, nil
}

// packageRecord returns the record of a package as a dump document gives
// it. The package of an archived Resource Dump is recorded so, unchecked:
// the archiver reads it, and drops the archived Resource Dump with a
// warning when it is lost or damaged, as for a build that kept its state,
// so that a damaged archive does not keep every later build from
// recovering its state.
func (rc *recoverer) packageRecord(set string, change bool, e *rs.Entry) (snapshot.Package, error) {
	p := snapshot.Package{Set: set, Change: change, Length: e.MD.Length}
	rel, ok := layout.PathFromURL(rc.s.base, e.Loc)
	if !ok {
		return p, fmt.Errorf("dump package %s is not under %s", e.Loc, rc.s.base)
	}
	p.Path = rel
	p.At, p.From, p.Until = unixOf(e.MD.At), unixOf(e.MD.From), unixOf(e.MD.Until)
	digest, ok := strings.CutPrefix(e.MD.Hash, "sha-256:")
	sum, err := hex.DecodeString(digest)
	if !ok || err != nil || len(sum) != len(p.SHA256) {
		return p, fmt.Errorf("dump package %s: hash %q is not the sha-256 rsgen writes", e.Loc, e.MD.Hash)
	}
	copy(p.SHA256[:], sum)
	return p, nil
}
