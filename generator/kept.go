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
	"fmt"
	"os"

	"github.com/rsgen/rsgen/internal/chunked"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// keeper keeps in the state folder what no later build could make again,
// and publishes it from there: the state folder state and the output,
// through the sink w.
type keeper struct {
	state string
	w     *sink.Sink
	// toKeep lists the output paths to keep once published: a first
	// build that keeps versions keeps one per resource, so the list
	// spills (pathList).
	toKeep chunked.Strings
	// published holds what publishKept found of each kept file this
	// build: a file is looked at, and restored, once, though several
	// documents list it (a package that archived dumps list too). A
	// second restore staged a second link under the first one's temporary
	// name, which the first rename took away. It holds the kept documents
	// and packages, never a version per resource: a version is published
	// once, by its resource's pass (the versions writer calls
	// restoreKept).
	published map[string]keptResult
}

// keptResult is what publishKept found of one kept file.
type keptResult struct {
	got         sums
	ok, changed bool
}

func newKeeper(state string, w *sink.Sink) *keeper {
	return &keeper{state: state, w: w, toKeep: pathList(state)}
}

// keptCopy says which copy of a kept file is whole.
type keptCopy uint8

const (
	keptLost     keptCopy = iota // neither
	keptBoth                     // both, trusted by their stats
	keptInState                  // the state archive's: the output's is missing or damaged
	keptInOutput                 // the output's: the state archive's is missing or damaged
)

// checkKept finds which copy of a kept file is whole, as want describes
// it: src in the state archive, or dst in the output. Two copies that are the same file, or have the same
// length and modification time, are trusted without being read, as
// resources are; otherwise each copy is read. It returns the sums of the
// file, its digests known when it was read. It changes nothing: see
// publishKept.
func checkKept(src, dst string, want sums) (keptCopy, sums, error) {
	si, serr := os.Stat(src)
	di, derr := os.Lstat(dst)
	if serr == nil && derr == nil && (want.size < 0 || si.Size() == want.size) &&
		(os.SameFile(si, di) || si.Size() == di.Size() && si.ModTime().Equal(di.ModTime())) {
		want.size = si.Size()
		return keptBoth, want, nil
	}
	if serr == nil {
		got, err := measure(src)
		if err != nil {
			return keptLost, want, fmt.Errorf("kept file %s: %w", src, err)
		}
		if want.match(got) {
			return keptInState, got, nil
		}
	}
	if derr == nil {
		got, err := measure(dst)
		if err != nil {
			return keptLost, want, fmt.Errorf("published file %s: %w", dst, err)
		}
		if want.match(got) {
			return keptInOutput, got, nil
		}
	}
	return keptLost, want, nil
}

// publishKept makes sure that the output and the state archive both hold
// the kept file at output path rel whole, as want describes it (see
// checkKept): a whole copy replaces the other. The caller records rel as
// an output. It returns the sums of the file, whether the output's copy
// changes, and ok false when neither copy is whole.
func (k *keeper) publishKept(rel string, want sums) (got sums, ok, changed bool, err error) {
	if r, done := k.published[rel]; done {
		return r.got, r.ok, r.changed, nil
	}
	got, ok, changed, err = k.restoreKept(rel, want)
	if err == nil {
		if k.published == nil {
			k.published = map[string]keptResult{}
		}
		k.published[rel] = keptResult{got, ok, changed}
	}
	return got, ok, changed, err
}

// restoreKept is publishKept without the memory of what it did: for the
// files a build publishes once, which are too many to remember (kept
// versions).
func (k *keeper) restoreKept(rel string, want sums) (got sums, ok, changed bool, err error) {
	src, dst := snapshot.ArchivePath(k.state, rel), k.w.Path(rel)
	whole, got, err := checkKept(src, dst, want)
	switch {
	case err != nil || whole == keptLost:
		return got, false, false, err
	case whole == keptInState:
		tmp, err := sink.LinkOrCopyTemp(src, dst)
		if err != nil {
			return got, false, false, fmt.Errorf("publish %s: %w", dst, err)
		}
		k.w.Stage(tmp, dst)
		return got, true, true, nil
	case whole == keptInOutput:
		return got, true, false, sink.Keep(dst, src)
	}
	return got, true, false, nil
}

// carriedPackage is a package of an earlier build that this build found
// whole and lists again.
type carriedPackage struct {
	snapshot.Package
	changed bool // its output copy was restored from the state's
}

// keepPublished keeps in the state archive the output file rel that this
// build published (a package, a version), once it is in place: see
// keepCommitted.
func (k *keeper) keepPublished(rel string) {
	k.toKeep.Append(rel)
}

// keepCommitted links into the state archive the files keepPublished
// named, after the build's files were renamed into place. A build killed
// before it leaves them to the next build, which restores the state's copy
// from the output's (publishKept).
func (k *keeper) keepCommitted() error {
	defer k.toKeep.Close()
	for rel := range k.toKeep.All() {
		if _, err := os.Stat(snapshot.ArchivePath(k.state, rel)); err == nil {
			continue
		}
		if err := sink.Keep(k.w.Path(rel), snapshot.ArchivePath(k.state, rel)); err != nil {
			return err
		}
	}
	if err := k.toKeep.Err(); err != nil {
		return fmt.Errorf("keep the files this build published in the state folder: %w", err)
	}
	return nil
}

// unkeptPackages returns the packages the state archive kept for the
// previous state prev and keeps no more in next: a Change Dump package
// whose segment left the journal, a package no archived Resource Dump
// lists any longer. (Documents leave with their segments and archives, see
// retain; versions with the versions writer.)
func unkeptPackages(prev, next *snapshot.State) []string {
	keep := map[string]bool{}
	for _, p := range next.Packages {
		keep[p.Path] = p.Change
	}
	for _, a := range next.Archived {
		for _, p := range a.Packages {
			keep[p.Path] = true
		}
	}
	var kept, unkept []string
	for _, p := range prev.Packages {
		kept = append(kept, p.Path)
	}
	for _, a := range prev.Archived {
		for _, p := range a.Packages {
			kept = append(kept, p.Path)
		}
	}
	for _, rel := range kept {
		if !keep[rel] {
			unkept = append(unkept, rel)
		}
	}
	return unkept
}
