package generator

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// prepare readies the output and state folders before a build writes
// anything, under the state's lock: it finishes a state recovery and, when
// the last build may not have finished (interrupted: its lock file was
// left; or the state is new or recovered), removes the temporary files it
// left behind. That sweep reads every folder of the output, so a build
// after a clean one skips it.
func (b *builder) prepare(interrupted bool) error {
	if err := b.recoverer.restoreRecovered(); err != nil {
		return err
	}
	if err := b.checkOutputOwned(); err != nil {
		return err
	}
	b.warnDotfiles()
	if !interrupted && b.recoverer.recovered == nil && b.prev.LastBuild != 0 {
		return nil
	}
	return b.removeStaleTemps()
}

// removeStaleTemps deletes the temporary files of killed builds: files
// named with layout.TempPrefix in the output folder, and temporary state files in
// the state folder. Only rsgen creates such names (source files with them
// are never published, see excluder), and the state's lock guarantees that
// no other build is writing them now.
func (b *builder) removeStaleTemps() error {
	// .state-*.tmp: the temporary state files of earlier versions.
	oldState := func(name string) bool { return strings.HasPrefix(name, ".state-") && strings.HasSuffix(name, ".tmp") }
	if err := errors.Join(sink.RemoveTemps(b.cfg.Out, nil), sink.RemoveTemps(b.cfg.State, oldState)); err != nil {
		return fmt.Errorf("remove temporary files of an earlier build: %w", err)
	}
	return nil
}

// ErrForeignOutput is returned when a first build would write into a
// non-empty output folder that holds no rsgen build.
var ErrForeignOutput = errors.New("the output folder is not empty and holds no rsgen build")

// checkOutputOwned refuses, for a first build, an output folder that holds
// files rsgen did not write: rsgen deletes from its output the files it
// wrote and no longer publishes, and must never be mistaken about which
// those are. An rsgen output is recognised by its Source Description, or by
// the state's record of a first build into it (snapshot.OutputMarker), so
// that a first build killed before it wrote its Source Description is
// recognised as rsgen's by the next; --force adopts any folder.
func (b *builder) checkOutputOwned() error {
	if b.prev.LastBuild != 0 || len(b.prev.Outputs) > 0 {
		return nil
	}
	marker := filepath.Join(b.cfg.State, snapshot.OutputMarker)
	if data, err := os.ReadFile(marker); err == nil && strings.TrimSpace(string(data)) == b.cfg.Out {
		return nil
	}
	entries, err := os.ReadDir(b.cfg.Out)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("output folder: %w", err)
	}
	if len(entries) > 0 && !b.opts.Force && !b.recoverer.outputHoldsBuild() {
		names := make([]string, 0, 3)
		for _, e := range entries[:min(3, len(entries))] {
			names = append(names, e.Name())
		}
		return fmt.Errorf("%w: %s holds %s%s; empty it, choose another output folder, or pass --force to publish into it anyway",
			ErrForeignOutput, b.cfg.Out, strings.Join(names, ", "), map[bool]string{true: ", ...", false: ""}[len(entries) > 3])
	}
	if err := os.MkdirAll(b.cfg.State, 0o755); err != nil {
		return fmt.Errorf("state folder: %w", err)
	}
	if err := os.WriteFile(marker, []byte(b.cfg.Out+"\n"), 0o644); err != nil {
		return fmt.Errorf("state folder: %w", err)
	}
	return nil
}

// warnDotfiles warns, on a first build, about the dotfiles and dot-folders
// at the top of the source that the default exclusions leave out: nothing
// private is published by surprise, and nothing public is dropped silently.
// A dotfile the configuration also excludes by name was left out on purpose.
func (b *builder) warnDotfiles() {
	if b.prev.LastBuild != 0 {
		return
	}
	entries, err := os.ReadDir(b.cfg.Source)
	if err != nil {
		return
	}
	ex := newExcluder(b.cfg, b.opts.ConfigFile, b.resBase, b.opts.Exclude...)
	var names []string
	for _, e := range entries {
		reason, excluded := ex.reason(e.Name(), e.IsDir())
		if _, named := ex.matchingPattern(e.Name()); excluded && strings.HasPrefix(reason, "dotfile") && !named {
			names = append(names, e.Name())
		}
	}
	if len(names) > 0 {
		b.warn(WarnDotfiles, "", fmt.Sprintf("not published: %s at the top of the source (dotfiles are left out by default; publish them with include_dotfiles, list every exclusion with rsgen status --explain)",
			strings.Join(names, ", ")))
	}
}

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
