package generator

import (
	"os"
	"slices"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/snapshot"
)

// keptSurvey is what the state archive and the output hold of the files
// kept for the previous state (see kept.go), found by the load stage of a
// build before it writes anything, so that the plan knows which of them
// are lost: by output path, which copy is whole, and the sums.
type keptSurvey struct {
	files map[string]keptFound
	// legacyDocs holds, by archived path, the documents of an archived
	// Resource List or Resource Dump of a state written before format 3,
	// which did not record them: the document, and its parts as far as
	// the state archive has them.
	legacyDocs map[string][]snapshot.Kept
	// legacyWritten holds, by output path, whether a closed segment's
	// document of a state written before format 3, which did not record
	// them, was written: either folder holds it.
	legacyWritten map[string]bool
	// versionsPresent says that the output holds the memento of the first
	// kept version (or that there is none; see versionPlan.trusted).
	versionsPresent bool
}

// keptFound is what checkKept found of a kept file.
type keptFound struct {
	copy keptCopy
	got  sums
}

// survey finds what the state archive and the output hold of the files
// kept for prev (see keptSurvey); it changes nothing.
func survey(s *site, prev *snapshot.State) (*keptSurvey, error) {
	ks := &keptSurvey{files: map[string]keptFound{}, legacyDocs: map[string][]snapshot.Kept{}, legacyWritten: map[string]bool{}}
	for _, a := range prev.Archived {
		if len(a.Docs) == 0 {
			ks.legacyDocs[archivedPath(&a)] = legacyArchivedDocs(s.cfg.State, &a)
		}
	}
	for _, st := range s.sets {
		journal, known := prev.Journals[st.Name]
		for i := range journal {
			if err := ks.checkSegment(s, st, &journal[i]); err != nil {
				return nil, err
			}
		}
		if known && st.changeDump {
			for _, p := range prev.Packages {
				if coveredChangePackage(&p, st, journal) {
					if err := ks.check(s, p.Path, sums{size: p.Length, sha256: p.SHA256}); err != nil {
						return nil, err
					}
				}
			}
		}
		for _, a := range prev.Archived {
			if a.Set == st.Name {
				if err := ks.checkArchived(s, prev, &a); err != nil {
					return nil, err
				}
			}
		}
	}
	ks.versionsPresent = true
	for v, err := range prev.Versions() {
		ks.versionsPresent = err == nil && present(s.outPath(layout.Memento(unixTime(v.Seen), v.Path)), -1)
		break
	}
	return ks, nil
}

// check checks the kept file at output path rel, once.
func (ks *keptSurvey) check(s *site, rel string, want sums) error {
	if _, done := ks.files[rel]; done {
		return nil
	}
	whole, got, err := checkKept(snapshot.ArchivePath(s.cfg.State, rel), s.outPath(rel), want)
	if err != nil {
		return err
	}
	ks.files[rel] = keptFound{whole, got}
	return nil
}

// checkSegment checks the kept documents of a closed segment of set st.
func (ks *keptSurvey) checkSegment(s *site, st *set, seg *snapshot.Segment) error {
	if seg.Until == 0 {
		return nil
	}
	for _, kind := range segmentKinds(st) {
		rel := segmentPath(kind, st.Name, seg)
		if len(seg.Kept) == 0 {
			_, inState := os.Stat(snapshot.ArchivePath(s.cfg.State, rel))
			_, inOutput := os.Stat(s.outPath(rel))
			ks.legacyWritten[rel] = inState == nil || inOutput == nil
		}
		if k, written := ks.segmentDoc(seg, rel); written {
			if err := ks.check(s, rel, keptSums(k)); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkArchived checks the documents and packages of an archived
// Resource List or Resource Dump.
func (ks *keptSurvey) checkArchived(s *site, prev *snapshot.State, a *snapshot.Archived) error {
	for _, k := range ks.archivedDocs(a) {
		if err := ks.check(s, k.Path, keptSums(k)); err != nil {
			return err
		}
	}
	for _, p := range a.Packages {
		if p, known := archivedPackage(prev, p); known {
			if err := ks.check(s, p.Path, sums{size: p.Length, sha256: p.SHA256}); err != nil {
				return err
			}
		}
	}
	return nil
}

// whole returns the sums of the kept file at rel, and whether a copy of
// it is whole.
func (ks *keptSurvey) whole(rel string) (sums, bool) {
	f, ok := ks.files[rel]
	return f.got, ok && f.copy != keptLost
}

// segmentDoc returns the record of a closed segment's kept document at
// rel, and whether the document was written at all. A segment of a state
// written before format 3 has no records: its documents were written if
// either folder holds them, and their sums are unknown.
func (ks *keptSurvey) segmentDoc(seg *snapshot.Segment, rel string) (snapshot.Kept, bool) {
	for _, k := range seg.Kept {
		if k.Path == rel {
			return k, true
		}
	}
	if len(seg.Kept) > 0 {
		return snapshot.Kept{}, false
	}
	return snapshot.Kept{Path: rel}, ks.legacyWritten[rel]
}

// archivedDocs returns the documents of an archived Resource List or
// Resource Dump: as the state records them, or as the state archive holds
// them for a state before format 3.
func (ks *keptSurvey) archivedDocs(a *snapshot.Archived) []snapshot.Kept {
	if len(a.Docs) > 0 {
		return a.Docs
	}
	return ks.legacyDocs[archivedPath(a)]
}

// legacyArchivedDocs returns the documents of an archived Resource List or
// Resource Dump of a state written before format 3, which did not record
// them: the document, and its parts as far as the state archive in the
// state folder state has them.
func legacyArchivedDocs(state string, a *snapshot.Archived) []snapshot.Kept {
	rel := archivedPath(a)
	docs := []snapshot.Kept{{Path: rel}}
	for n := 1; ; n++ {
		part := layout.Part(rel, n)
		if _, err := os.Stat(snapshot.ArchivePath(state, part)); err != nil {
			return docs
		}
		docs = append(docs, snapshot.Kept{Path: part})
	}
}

// archivedPackage returns the whole record of a package an archived
// Resource Dump lists. A package recorded by a state written before
// format 3 has only its path; the rest comes from the state's package
// records, and known is false when they have none.
func archivedPackage(prev *snapshot.State, p snapshot.Package) (_ snapshot.Package, known bool) {
	if p.Length != 0 || p.SHA256 != ([32]byte{}) {
		return p, true
	}
	i := slices.IndexFunc(prev.Packages, func(q snapshot.Package) bool { return q.Path == p.Path })
	if i < 0 {
		return p, false
	}
	return prev.Packages[i], true
}

// coveredChangePackage reports whether p is a Change Dump package of set
// st that its journal, as the previous state left it, still covers: a
// package older than the oldest segment left the archive with its Change
// Dump (see retainSegments).
func coveredChangePackage(p *snapshot.Package, st *set, journal []snapshot.Segment) bool {
	return p.Change && p.Set == st.Name && len(journal) > 0 && p.Until >= journal[0].From
}

// present reports whether a regular file is at path, of size bytes unless
// size is negative.
func present(path string, size int64) bool {
	info, err := os.Lstat(path)
	return err == nil && info.Mode().IsRegular() && (size < 0 || info.Size() == size)
}
