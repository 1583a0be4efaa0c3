package generator

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
)

// vcsDirs are version-control folders, never published even when dotfiles
// are.
var vcsDirs = []string{".git", ".hg", ".svn", ".bzr", "_darcs", "CVS"}

// excluder decides which source paths are left out of the scan.
type excluder struct {
	patterns   []string // configured excludes
	dotfilesIn []string // dotfile patterns that are published anyway
	ownPaths   []string // the state folder and config file, when inside the source
}

func newExcluder(cfg *config.Config, configFile string) *excluder {
	e := &excluder{patterns: cfg.Exclude, dotfilesIn: cfg.IncludeDotfiles}
	for _, own := range []string{cfg.State, configFile} {
		if own == "" {
			continue
		}
		if rel, err := filepath.Rel(cfg.Source, own); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			e.ownPaths = append(e.ownPaths, filepath.ToSlash(rel))
		}
	}
	return e
}

// Exclude reports whether p is left out, and why.
func (e *excluder) Exclude(p string, isDir bool) bool {
	_, excluded := e.reason(p, isDir)
	return excluded
}

func (e *excluder) reason(p string, isDir bool) (string, bool) {
	name := p[strings.LastIndexByte(p, '/')+1:]
	switch {
	case slices.Contains(e.ownPaths, p):
		return "rsgen's own state or configuration", true
	case strings.HasPrefix(name, layout.TempPrefix):
		return "named like rsgen's temporary files, which builds remove", true
	case isDir && slices.Contains(vcsDirs, name):
		return "version-control folder", true
	case strings.HasPrefix(name, ".") && !e.dotfileIncluded(p):
		return "dotfile (publish it with include_dotfiles)", true
	}
	for _, pat := range e.patterns {
		if layout.MatchGlob(pat, p) {
			return "matches exclude pattern " + pat, true
		}
	}
	return "", false
}

func (e *excluder) dotfileIncluded(p string) bool {
	for _, pat := range e.dotfilesIn {
		if layout.MatchGlob(pat, p) {
			return true
		}
	}
	return false
}

// set is one configured set of resources with its membership test.
type set struct {
	config.Set
	prefix string // "" or the set's folder with a trailing slash
}

func newSets(cfg *config.Config) []*set {
	var sets []*set
	for _, s := range cfg.SetsOrDefault() {
		ns := &set{Set: s}
		if p := strings.Trim(filepath.ToSlash(filepath.Clean(s.Path)), "/"); p != "" && p != "." {
			ns.prefix = p + "/"
		}
		sets = append(sets, ns)
	}
	return sets
}

// Contains reports whether the source path p belongs to the set. The
// set's globs match the path relative to the set's folder.
func (s *set) Contains(p string) bool {
	rel, ok := strings.CutPrefix(p, s.prefix)
	if !ok {
		return false
	}
	matches := func(pat string) bool { return layout.MatchGlob(pat, rel) }
	if len(s.Include) > 0 && !slices.ContainsFunc(s.Include, matches) {
		return false
	}
	return !slices.ContainsFunc(s.Exclude, matches)
}
