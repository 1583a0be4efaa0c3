package generator

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
)

// vcsDirs are version-control folders, never published even when dotfiles
// are.
var vcsDirs = []string{".git", ".hg", ".svn", ".bzr", "_darcs", "CVS"}

// excluder decides which source paths are left out of the scan.
type excluder struct {
	patterns   []string // configured excludes
	dotfilesIn []string // dotfile patterns that are published anyway
	ownPaths   []string // the state folder and config file, when inside the source
	resBase    string   // the base URL of the resources, to measure their URIs
	// unpublishable, when set, is told of a path left out because it
	// cannot be published, rather than by the configuration.
	unpublishable func(path, reason string)
}

func newExcluder(cfg *config.Config, configFile, resBase string, also ...string) *excluder {
	e := &excluder{patterns: cfg.Exclude, dotfilesIn: cfg.IncludeDotfiles, resBase: resBase}
	for _, own := range append([]string{cfg.State, configFile}, also...) {
		if own == "" {
			continue
		}
		if rel, err := filepath.Rel(cfg.Source, own); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			e.ownPaths = append(e.ownPaths, filepath.ToSlash(rel))
		}
	}
	return e
}

// Exclude reports whether p is left out.
func (e *excluder) Exclude(p string, isDir bool) bool {
	reason, excluded := e.reason(p, isDir)
	if excluded && reason == uriTooLong && e.unpublishable != nil {
		e.unpublishable(p, reason)
	}
	return excluded
}

// uriTooLong is why a resource whose URI no list can hold is left out.
var uriTooLong = fmt.Sprintf("its URI would be longer than the %d characters a <loc> may have: not published (rename it or a folder above it)", rs.MaxLocLength)

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
	if pat, ok := e.matchingPattern(p); ok {
		return "matches exclude pattern " + pat, true
	}
	// A folder is left out when even its own URI is too long: everything
	// below it is longer still.
	if len(e.resBase)+layout.EscapedPathLen(p) > rs.MaxLocLength {
		return uriTooLong, true
	}
	return "", false
}

// matchingPattern returns the first exclude pattern that matches p.
func (e *excluder) matchingPattern(p string) (string, bool) {
	for _, pat := range e.patterns {
		if layout.MatchGlob(pat, p) {
			return pat, true
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

// set is one configured set of resources with its membership test, and
// its settings resolved once from the set and the configuration.
type set struct {
	config.Set
	prefix       string // "" or the set's folder with a trailing slash
	resourceDump bool   // the set publishes a Resource Dump
	changeDump   bool   // the set publishes a Change Dump
	mirrors      []mirror
	via          string // the via base URL, with a trailing slash; "" for none
	// archives are the capabilities whose archives the set publishes, in
	// the order the Capability List gives them.
	archives []string
}

// mirror is a [[set.mirror]] with its base URL parsed.
type mirror struct {
	base string // with a trailing slash
	pri  int
}

func newSets(cfg *config.Config) []*set {
	var sets []*set
	for _, s := range cfg.SetsOrDefault() {
		ns := &set{Set: s, resourceDump: s.WantsResourceDump(&cfg.Dumps), changeDump: s.WantsChangeDump(&cfg.Dumps)}
		for _, m := range s.Mirrors {
			base, _ := layout.ParseBaseURL(m.BaseURL) // checked by config.Validate
			ns.mirrors = append(ns.mirrors, mirror{base: base, pri: m.Pri})
		}
		if s.Via != "" {
			ns.via, _ = layout.ParseBaseURL(s.Via) // checked by config.Validate
		}
		if p := strings.Trim(filepath.ToSlash(filepath.Clean(s.Path)), "/"); p != "" && p != "." {
			ns.prefix = p + "/"
		}
		ns.archives = archivedCapabilities(&cfg.Archives, ns)
		sets = append(sets, ns)
	}
	return sets
}

// archivedCapabilities returns the capabilities of the documents of set s
// that are archived, in the order the Capability List gives them.
func archivedCapabilities(a *config.Archives, s *set) []string {
	var caps []string
	if a.ResourceLists {
		caps = append(caps, rs.CapResourceList)
	}
	if a.ResourceDumps && s.resourceDump {
		caps = append(caps, rs.CapResourceDump)
	}
	if a.ChangeLists {
		caps = append(caps, rs.CapChangeList)
	}
	if a.ChangeDumps && s.changeDump {
		caps = append(caps, rs.CapChangeDump)
	}
	return caps
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

// resourceBase returns the base URL of the resources, with a trailing
// slash: resource_base_url, else base_url. Validate has checked both.
func resourceBase(cfg *config.Config) string {
	u := cfg.BaseURL
	if cfg.ResourceBaseURL != "" {
		u = cfg.ResourceBaseURL
	}
	base, _ := layout.ParseBaseURL(u)
	return base
}

// setEvents returns the events of set st among events, in their order:
// events itself, capacity clipped, when the set holds them all (a site of
// one set), so that a build's events are held once more at most, however
// many there are; otherwise a copy of exactly the set's events, since it
// lives as long as the set's open segment.
func setEvents(st *set, events []snapshot.Event) []snapshot.Event {
	n := 0
	for i := range events {
		if st.Contains(events[i].Record.Path) {
			n++
		}
	}
	if n == len(events) {
		return events[:n:n]
	}
	mine := make([]snapshot.Event, 0, n)
	for _, ev := range events {
		if st.Contains(ev.Record.Path) {
			mine = append(mine, ev)
		}
	}
	return mine
}
