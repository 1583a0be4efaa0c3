package generator

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
)

// recoverArchived adds to st the archived Resource Lists and Resource
// Dumps of set name that its archives in the output list, with their
// documents and, for Resource Dumps, their packages, all of which go back
// into the state archive. It returns the output paths it read.
func (rc *recoverer) recoverArchived(name string, st *snapshot.State, rec *recovery) ([]string, error) {
	var outputs []string
	for _, dump := range []bool{false, true} {
		capability := archivedCapability(&snapshot.Archived{Dump: dump})
		var found []snapshot.Archived
		docs, err := rc.readSplitDoc(layout.Archive(name, capability), capability+"-archive", func(e *rs.Entry) error {
			a := snapshot.Archived{Set: name, Dump: dump}
			if a.At, a.Completed = unixOf(e.MD.At), unixOf(e.MD.Completed); a.At == 0 {
				return fmt.Errorf("%s: archived %s without at", e.Loc, capability)
			}
			if rel, ok := layout.PathFromURL(rc.s.base, e.Loc); !ok || rel != archivedPath(&a) {
				return fmt.Errorf("%s lists %s, not the archived %s rsgen writes", layout.Archive(name, capability), e.Loc, capability)
			}
			found = append(found, a)
			return nil
		})
		if err != nil {
			return nil, err
		}
		outputs = append(outputs, docs...)
		for _, a := range found {
			read, err := rc.readSplitDoc(archivedPath(&a), capability, func(e *rs.Entry) error {
				if !dump {
					return nil
				}
				p, err := rc.packageRecord(name, false, e)
				if err != nil {
					return err
				}
				a.Packages = append(a.Packages, p)
				outputs = append(outputs, p.Path, layout.ManifestCopy(p.Path))
				if _, err := os.Stat(rc.s.outPath(p.Path)); err == nil { // a lost one has nothing to keep
					rec.archive = append(rec.archive, p.Path)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			for _, rel := range read {
				k, err := rc.recoverKept(rel, rec)
				if err != nil {
					return nil, err
				}
				a.Docs = append(a.Docs, k)
			}
			outputs = append(outputs, read...)
			st.Archived = append(st.Archived, a)
		}
	}
	return outputs, nil
}

// recoverVersions adds to st the kept versions the output holds under
// resourcesync/mementos/TIME/PATH, read once as the scan reads a source
// file (fingerprint, published digests, media type), which go back into
// the state archive. Their TimeMaps and patches are derived from them
// again by the build. They are sorted in memory, which only a build that
// recovers its state does.
func (rc *recoverer) recoverVersions(st *snapshot.State, rec *recovery) error {
	dir := filepath.Join(rc.s.cfg.Out, filepath.FromSlash(layout.DocumentsDir), "mementos")
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	mementos, err := snapshot.OpenTree(dir, false)
	if err != nil {
		return fmt.Errorf("recover kept versions: %w", err)
	}
	defer mementos.Close()
	files, _, _, err := snapshot.Scan(context.Background(), &snapshot.State{}, snapshot.ScanOptions{FS: mementos, Algorithms: rc.s.algs})
	if err != nil {
		return fmt.Errorf("recover kept versions: %w", err)
	}
	var vs []snapshot.Record
	for found, err := range files.All() {
		if err != nil {
			return fmt.Errorf("recover kept versions: %w", err)
		}
		r := *found
		stamp, p, ok := strings.Cut(r.Path, "/")
		t, err := time.Parse("20060102150405", stamp)
		if !ok || err != nil {
			return fmt.Errorf("recover kept versions: %s is not a memento rsgen writes", r.Path)
		}
		rel := layout.Memento(t, p)
		r.Path, r.Seen = p, t.Unix()
		vs = append(vs, r)
		rec.archive = append(rec.archive, rel)
	}
	st.SetVersions(vs)
	return nil
}
