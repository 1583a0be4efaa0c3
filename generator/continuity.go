package generator

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/snapshot"
)

// Continuity
//
// Destinations know a Source by its URIs. A build with another base URL
// than the one the state published at would move every document, and the
// closed Change Lists, which never change, could not follow; a build
// without a set the state published would take that set's documents away.
// Neither happens by accident: the build refuses, naming what would
// change, unless the user confirms it (Options.Rebase, RemoveSets).
//
// A confirmed rebase starts the Source afresh at the new base URL: the
// first build there publishes every set's Resource List as a new baseline
// with an empty Change List, as a first build does, and the documents,
// closed lists, archives and dump packages of the old base URL leave the
// output and the state folder (their URIs would be wrong, and the lists
// cannot be rewritten). Resources and kept versions stay, published under
// the new base URL.

// ErrDiscontinuity is returned, wrapped with what would change and how to
// confirm it, when a build would change the base URL or remove a set
// without the user's confirmation.
var ErrDiscontinuity = errors.New("this build would change what Destinations follow")

// checkContinuity refuses a new base URL or a removed set unless confirmed,
// and starts the Source of prev afresh for a confirmed rebase: it returns
// the files the state archive kept for the old base URL, which leave it.
func checkContinuity(s *site, prev *snapshot.State) (pruned []string, err error) {
	if prev.BaseURL != s.base {
		warnBasePath(s)
	}
	if prev.BaseURL != "" && prev.BaseURL != s.base {
		if !s.opts.Rebase {
			return nil, fmt.Errorf("%w: the state in %s was published at base_url %s, and this build would publish at %s: every document would move, and the closed Change Lists could not follow. "+
				"Set base_url back to %s, or build with --rebase to start the Source afresh at %s (a new baseline; the closed lists, archives and dump packages of the old base URL are removed). "+
				"To look at the site locally, use rsgen watch --serve, which never writes the published site",
				ErrDiscontinuity, s.cfg.State, prev.BaseURL, s.base, prev.BaseURL, s.base)
		}
		return rebase(s, prev), nil
	}
	var gone []string
	for name := range prev.SetChanged {
		if !slices.ContainsFunc(s.sets, func(st *set) bool { return st.Name == name }) {
			gone = append(gone, name)
		}
	}
	slices.Sort(gone)
	if len(gone) > 0 && !s.opts.RemoveSets {
		var dirs []string
		for _, name := range gone {
			dirs = append(dirs, layout.SetDir(name)+"/")
		}
		return nil, fmt.Errorf("%w: the state published the set%s %s, which this configuration does not have: its Capability List, Resource List, Change Lists and dumps (%s) would be removed, and Destinations that follow it would lose it%s. "+
			"Run the build with --remove-sets to confirm, or configure the set%s again",
			ErrDiscontinuity, plural(len(gone)), strings.Join(gone, ", "), strings.Join(dirs, ", "), defaultSetNote(gone), plural(len(gone)))
	}
	return nil, nil
}

// defaultSetNote explains where the set "default" went.
func defaultSetNote(gone []string) string {
	if slices.Contains(gone, "default") {
		return " (the set default stands for the whole source only while no [[set]] is configured)"
	}
	return ""
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// rebase makes the previous state that of a Source starting afresh: it
// keeps the files (so nothing is read again) and the kept versions, and
// forgets the journals, archives and packages, whose kept files it
// returns: they leave the state folder once the build is saved.
func rebase(s *site, prev *snapshot.State) (pruned []string) {
	for _, segs := range prev.Journals {
		for _, seg := range segs {
			for _, k := range seg.Kept {
				pruned = append(pruned, k.Path)
			}
		}
	}
	for _, a := range prev.Archived {
		for _, k := range a.Docs {
			pruned = append(pruned, k.Path)
		}
		for _, p := range a.Packages {
			pruned = append(pruned, p.Path)
		}
	}
	for _, p := range prev.Packages {
		pruned = append(pruned, p.Path)
	}
	s.notify(Note{Kind: NoteInfo, Msg: fmt.Sprintf("rebase: the Source starts afresh at %s (it was published at %s)", s.base, prev.BaseURL)})
	prev.BaseURL, prev.Journals, prev.Shared, prev.Packages, prev.Archived = "", nil, nil, nil, nil
	prev.SetChanged = map[string]int64{}
	return pruned
}

// warnBasePath warns, once per base URL, when it has a path: Destinations
// look for the Source Description at the root of a host (§8, RFC 8615),
// where this output is not.
func warnBasePath(s *site) {
	u := &s.baseURL
	if u.Path == "/" || u.Path == "" {
		return
	}
	root := u.Scheme + "://" + u.Host + "/.well-known/resourcesync"
	s.warn(WarnBaseURL, "", fmt.Sprintf("base_url %s has a path: Destinations look for the Source Description at %s, the root of the host, and will not find %s%s by themselves. "+
		"Serve the output at the root of a host, or publish a copy of %s (or a redirect to it) there, or tell Destinations the full URL (rsgen help hosting)",
		s.base, root, s.base, layout.SourceDescription, layout.SourceDescription))
}
