package generator

import (
	"errors"
	"fmt"
	"io/fs"

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
