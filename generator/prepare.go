package generator

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// prepare readies the output and state folders before a build writes
// anything, under the state's lock: it finishes a state recovery and, when
// the last build may not have finished (interrupted: its lock file was
// left; or the state is new or recovered), removes the temporary files it
// left behind. That sweep reads every folder of the output, so a build
// after a clean one skips it.
func prepare(s *site, prev *loaded, interrupted bool) error {
	if err := restoreRecovered(s, prev.recovered); err != nil {
		return err
	}
	if err := checkOutputOwned(s, prev.state); err != nil {
		return err
	}
	warnDotfiles(s, prev.state)
	if !interrupted && prev.recovered == nil && !prev.baseline() {
		return nil
	}
	return removeStaleTemps(s)
}

// restoreRecovered finishes a recovery, rec, before the build writes
// anything: it keeps a bad state file aside and copies the closed Change
// Lists and Change Dumps of the output into the state archive, where they
// are missing.
func restoreRecovered(s *site, rec *recovery) error {
	if rec == nil {
		return nil
	}
	if rec.bad != "" {
		p := filepath.Join(s.cfg.State, snapshot.FileName)
		if err := os.Rename(p, p+"."+rec.bad); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("keep the bad state aside: %w", err)
		}
	}
	for _, rel := range rec.archive {
		// The output is the truth the state was rebuilt from: an archived
		// copy that differs (left by a killed build) is replaced.
		dst, src := snapshot.ArchivePath(s.cfg.State, rel), s.outPath(rel)
		si, err := os.Stat(src)
		if err != nil {
			return fmt.Errorf("restore kept file: %w", err)
		}
		if di, err := os.Stat(dst); err == nil && (os.SameFile(si, di) || di.Size() == si.Size() && di.ModTime().Equal(si.ModTime())) {
			continue
		}
		if err := sink.Keep(src, dst); err != nil {
			return fmt.Errorf("restore kept file: %w", err)
		}
	}
	return nil
}

// removeStaleTemps deletes the temporary files of killed builds: files
// named with layout.TempPrefix in the output folder, and temporary state files in
// the state folder. Only rsgen creates such names (source files with them
// are never published, see excluder), and the state's lock guarantees that
// no other build is writing them now.
func removeStaleTemps(s *site) error {
	// .state-*.tmp: the temporary state files of earlier versions.
	oldState := func(name string) bool { return strings.HasPrefix(name, ".state-") && strings.HasSuffix(name, ".tmp") }
	if err := errors.Join(sink.RemoveTemps(s.cfg.Out, nil), sink.RemoveTemps(s.cfg.State, oldState)); err != nil {
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
func checkOutputOwned(s *site, prev *snapshot.State) error {
	if prev.LastBuild != 0 || len(prev.Outputs) > 0 {
		return nil
	}
	marker := filepath.Join(s.cfg.State, snapshot.OutputMarker)
	if data, err := os.ReadFile(marker); err == nil && strings.TrimSpace(string(data)) == s.cfg.Out {
		return nil
	}
	entries, err := os.ReadDir(s.cfg.Out)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("output folder: %w", err)
	}
	if len(entries) > 0 && !s.opts.Force && !(&recoverer{s}).outputHoldsBuild() {
		names := make([]string, 0, 3)
		for _, e := range entries[:min(3, len(entries))] {
			names = append(names, e.Name())
		}
		return fmt.Errorf("%w: %s holds %s%s; empty it, choose another output folder, or pass --force to publish into it anyway",
			ErrForeignOutput, s.cfg.Out, strings.Join(names, ", "), map[bool]string{true: ", ...", false: ""}[len(entries) > 3])
	}
	if err := os.MkdirAll(s.cfg.State, 0o755); err != nil {
		return fmt.Errorf("state folder: %w", err)
	}
	if err := os.WriteFile(marker, []byte(s.cfg.Out+"\n"), 0o644); err != nil {
		return fmt.Errorf("state folder: %w", err)
	}
	return nil
}

// warnDotfiles warns, on a first build, about the dotfiles and dot-folders
// at the top of the source that the default exclusions leave out: nothing
// private is published by surprise, and nothing public is dropped silently.
// A dotfile the configuration also excludes by name was left out on purpose.
func warnDotfiles(s *site, prev *snapshot.State) {
	if prev.LastBuild != 0 {
		return
	}
	entries, err := os.ReadDir(s.cfg.Source)
	if err != nil {
		return
	}
	ex := newExcluder(s.cfg, s.opts.ConfigFile, s.resBase, s.opts.Exclude...)
	var names []string
	for _, e := range entries {
		reason, excluded := ex.reason(e.Name(), e.IsDir())
		if _, named := ex.matchingPattern(e.Name()); excluded && strings.HasPrefix(reason, "dotfile") && !named {
			names = append(names, e.Name())
		}
	}
	if len(names) > 0 {
		s.warn(WarnDotfiles, "", fmt.Sprintf("not published: %s at the top of the source (dotfiles are left out by default; publish them with include_dotfiles, list every exclusion with rsgen status --explain)",
			strings.Join(names, ", ")))
	}
}
