package generator

import (
	"fmt"
	"io/fs"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/snapshot"
)

// Excluded is a source path left out of the scan, and why.
type Excluded struct {
	Path, Reason string
}

// Explain lists the source paths the scan leaves out, with the reason for
// each; an excluded folder is listed without its contents.
func Explain(cfg *config.Config, opts Options) ([]Excluded, error) {
	ex := newExcluder(cfg, opts.ConfigFile, resourceBase(cfg), opts.Exclude...)
	src, err := snapshot.OpenTree(cfg.Source, false)
	if err != nil {
		return nil, fmt.Errorf("explain %s: %w", cfg.Source, err)
	}
	defer src.Close()
	var list []Excluded
	err = fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if reason, excluded := ex.reason(p, d.IsDir()); excluded {
			list = append(list, Excluded{Path: p, Reason: reason})
			if d.IsDir() {
				return fs.SkipDir
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("explain %s: %w", cfg.Source, err)
	}
	return list, nil
}
