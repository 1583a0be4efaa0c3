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

// Reading back what rsgen published, for a recovery (recover.go): the
// documents, the records they give of resources and packages, and the
// kept files that go back into the state archive.

// recoverer rebuilds a lost or stale state from the output of site s
// (recover*.go).
type recoverer struct{ s *site }

// recovery is a state rebuilt from the output, and what the build must do
// with it before writing anything.
type recovery struct {
	state   *snapshot.State
	archive []string // output paths of closed Change Lists and Change Dumps to copy into the state archive
	lists   int      // Change Lists read
	bad     string   // "corrupt" or "newer": the state file to keep aside
}

// recoverKept returns the record of a file kept in the state archive, as
// its copy in the output has it, and puts that copy back into the state
// archive (see restoreRecovered).
func (rc *recoverer) recoverKept(rel string, rec *recovery) (snapshot.Kept, error) {
	sum, err := measure(rc.s.outPath(rel))
	if err != nil {
		return snapshot.Kept{}, fmt.Errorf("recover %s: %w", rel, err)
	}
	rec.archive = append(rec.archive, rel)
	return snapshot.Kept{Path: rel, Size: sum.size, SHA256: sum.sha256}, nil
}

// pubRecord returns the recovered record of a published resource entry.
func (rc *recoverer) pubRecord(e *rs.Entry) (snapshot.Record, error) {
	p, ok := layout.PathFromURL(rc.s.resBase, e.Loc)
	if !ok {
		return snapshot.Record{}, fmt.Errorf("resource %s is not under %s", e.Loc, rc.s.resBase)
	}
	r := snapshot.Record{Path: p}
	r.SetType(e.MD.Type)
	if e.MD.Change == rs.ChangeDeleted {
		return r, nil
	}
	var err error
	if r.Digests, err = snapshot.ParseHash(e.MD.Hash); err != nil {
		return r, fmt.Errorf("%s: %w", e.Loc, err)
	}
	if !e.MD.HasLength || e.MD.Length < 0 {
		return r, fmt.Errorf("%s: no length", e.Loc)
	}
	r.Size = e.MD.Length
	return r, nil
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
// the plan checks it, and drops the archived Resource Dump with a warning
// when it is lost or damaged, as for a build that kept its state, so that
// a damaged archive does not keep every later build from recovering its
// state.
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

// readPublished streams the document rsgen published at path through
// rs.Reader (bounded, as every document rsgen writes is), calling entry,
// when not nil, for each entry with the document's head; with a nil entry
// it reads only the head.
func readPublished(path string, entry func(*rs.Head, *rs.Entry) error) (*rs.Head, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := rs.NewReader(f)
	head, err := r.Head()
	if err == nil && entry != nil {
		err = r.Entries(func(e *rs.Entry) error { return entry(head, e) })
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return head, nil
}
