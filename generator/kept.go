package generator

// Kept files
//
// The state folder keeps, under closed/ at their output paths, the files
// no later build could make again: closed Change Lists and Change Dumps,
// archived Resource Lists and Resource Dumps with their parts, the
// packages of Change Dumps and of archived Resource Dumps, and kept
// versions. Each is kept with its length and a checksum in the state, and
// hard-linked to its published copy where the two folders share a file
// system (copied otherwise). So an output folder built afresh (a CI
// runner) gets them back whole, a damaged or missing copy on either side is
// repaired from the other, and a file whose copies are both lost or
// damaged is never published: the documents that need it leave the
// output, with a warning (see the callers of publishKept).

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/rsgen/rsgen/internal/chunked"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// keeper keeps in the state folder what no later build could make again.
type keeper struct {
	*run
	// toKeep lists the output paths to keep once published: a first
	// build that keeps versions keeps one per resource, so the list
	// spills (pathList).
	toKeep chunked.Strings
	// published holds what publishKept found of each kept file this
	// build: a file is looked at, and restored, once, though several
	// documents list it (a package of the live Resource Dump that
	// archived dumps list too). A second restore staged a second link
	// under the first one's temporary name, which the first rename took
	// away. It holds the kept documents and packages, never a version
	// per resource: a version is published once, by its resource's pass
	// (carryVersions calls restoreKept).
	published map[string]keptResult
}

// keptResult is what publishKept found of one kept file.
type keptResult struct {
	got         sums
	ok, changed bool
}

// archivePath returns the file, in the state archive, of output path rel.
func (b *keeper) archivePath(rel string) string {
	return filepath.Join(b.cfg.State, snapshot.ArchiveDir, filepath.FromSlash(rel))
}

// sums identify the bytes of a kept file: its length (-1: unknown) and
// SHA-256 (zero: unknown, as in states written before format 3).
type sums struct {
	size    int64
	sha256  [32]byte
	checked bool // the bytes were read and found to match
}

// keptSums returns the sums of a kept document or package.
func keptSums(k snapshot.Kept) sums {
	if k.SHA256 == ([32]byte{}) && k.Size == 0 {
		return sums{size: -1}
	}
	return sums{size: k.Size, sha256: k.SHA256}
}

// match reports whether got, measured from a file, has the bytes want
// describes.
func (want sums) match(got sums) bool {
	return (want.size < 0 || want.size == got.size) &&
		(want.sha256 == [32]byte{} || want.sha256 == got.sha256)
}

// measure reads the file at path and returns its sums.
func measure(path string) (sums, error) {
	f, err := os.Open(path)
	if err != nil {
		return sums{}, err
	}
	defer f.Close()
	return copyMeasured(io.Discard, f)
}

// copyMeasured copies src to dst and returns the sums of the bytes.
func copyMeasured(dst io.Writer, src io.Reader) (sums, error) {
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(dst, h), src)
	if err != nil {
		return sums{}, err
	}
	s := sums{size: n, checked: true}
	h.Sum(s.sha256[:0])
	return s, nil
}

// publishKept makes sure that the output and the state archive both hold
// the kept file at output path rel whole, as want describes it; the
// caller records rel as an output (keptOutput). Two copies that are the same
// file, or have the same length and modification time, are trusted
// without being read, as resources are; otherwise each copy is read, and a
// whole one replaces the other. It returns the sums of the file, its
// digests known when it was read, whether the output's copy changes, and
// ok false when neither copy is whole.
func (b *keeper) publishKept(rel string, want sums) (got sums, ok, changed bool, err error) {
	if r, done := b.published[rel]; done {
		return r.got, r.ok, r.changed, nil
	}
	got, ok, changed, err = b.restoreKept(rel, want)
	if err == nil {
		if b.published == nil {
			b.published = map[string]keptResult{}
		}
		b.published[rel] = keptResult{got, ok, changed}
	}
	return got, ok, changed, err
}

// restoreKept is publishKept without the memory of what it did: for the
// files a build publishes once, which are too many to remember (kept
// versions).
func (b *keeper) restoreKept(rel string, want sums) (got sums, ok, changed bool, err error) {
	src, dst := b.archivePath(rel), b.sink.Path(rel)
	si, serr := os.Stat(src)
	di, derr := os.Lstat(dst)
	if serr == nil && derr == nil && (want.size < 0 || si.Size() == want.size) &&
		(os.SameFile(si, di) || si.Size() == di.Size() && si.ModTime().Equal(di.ModTime())) {
		want.size = si.Size()
		return want, true, false, nil
	}
	if serr == nil {
		if got, err = measure(src); err != nil {
			return want, false, false, fmt.Errorf("kept file %s: %w", src, err)
		}
		if want.match(got) {
			tmp, err := sink.LinkOrCopyTemp(src, dst)
			if err != nil {
				return want, false, false, fmt.Errorf("publish %s: %w", dst, err)
			}
			b.sink.Stage(tmp, dst)
			return got, true, true, nil
		}
	}
	if derr == nil {
		if got, err = measure(dst); err != nil {
			return want, false, false, fmt.Errorf("published file %s: %w", dst, err)
		}
		if want.match(got) {
			return got, true, false, sink.Keep(dst, src)
		}
	}
	return want, false, false, nil
}

// keepPublished keeps in the state archive the output file rel that this
// build published (a package, a version), once it is in place: see
// keepCommitted.
func (b *keeper) keepPublished(rel string) {
	b.toKeep.Append(rel)
}

// keepCommitted links into the state archive the files keepPublished
// named, after the build's files were renamed into place. A build killed
// before it leaves them to the next build, which restores the state's copy
// from the output's (publishKept).
func (b *keeper) keepCommitted() error {
	defer b.toKeep.Close()
	for rel := range b.toKeep.All() {
		if _, err := os.Stat(b.archivePath(rel)); err == nil {
			continue
		}
		if err := sink.Keep(b.sink.Path(rel), b.archivePath(rel)); err != nil {
			return err
		}
	}
	if err := b.toKeep.Err(); err != nil {
		return fmt.Errorf("keep the files this build published in the state folder: %w", err)
	}
	return nil
}

// pruneUnkept marks for deletion from the state archive the packages it
// kept for the previous build and keeps no more: a Change Dump package
// whose segment left the journal, a package no archived Resource Dump
// lists any longer. (Documents leave with their segments and archives, see
// retain; versions with keepVersions.)
func (b *keeper) pruneUnkept() {
	keep := map[string]bool{}
	for _, p := range b.next.Packages {
		keep[p.Path] = p.Change
	}
	for _, a := range b.next.Archived {
		for _, p := range a.Packages {
			keep[p.Path] = true
		}
	}
	var kept []string
	for _, p := range b.prev.Packages {
		kept = append(kept, p.Path)
	}
	for _, a := range b.prev.Archived {
		for _, p := range a.Packages {
			kept = append(kept, p.Path)
		}
	}
	for _, rel := range kept {
		if !keep[rel] {
			b.archiver.arch.prune = append(b.archiver.arch.prune, rel)
		}
	}
}
