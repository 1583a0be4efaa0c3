package generator

// The links of §14 that a set's entries carry in Resource Lists and Change
// Lists, from the set's link rules (config.SetLinks). Every attribute of a
// link to a resource rsgen publishes (hash, length, type, modified) comes
// from that resource's scan, as it stands in the build that writes the
// document; nothing is assumed about resources rsgen does not publish, so
// links to mirrors and collections carry only what the configuration says.
//
// The specification has no attribute for the profile of a metadata record
// (§14.5, Example 28): it is a link of its own, rel="profile" (RFC 6906),
// on the record's entry.

import (
	"path"
	"slices"
	"strings"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
)

// linkIndex gives the entries of a set's Resource List and Change Lists
// their links: to the scan's other files, as files holds them, and to the
// versions this build keeps of them, as the versions writer found them
// (versionLinks).
type linkIndex struct {
	s        *site
	files    *snapshot.Records
	versions *versionLinks
}

// versionLinks are the kept versions and patches the Change Lists of this
// build link to.
type versionLinks struct {
	// kept holds, for the path of each event this build's documents
	// list, the times its records were first seen whose versions are
	// kept, and first the time its oldest kept version was.
	kept  map[string][]int64
	first map[string]int64
	// patches holds the links of the patches written, by output path.
	patches map[string]*rs.Link
}

// note notes, of the kept versions vs of one resource, oldest first,
// those that the events of this build's documents name (eventSeen), and
// the oldest: no more, since a resource changed in every build has as
// many versions as builds.
func (vl *versionLinks) note(eventSeen map[string][]int64, vs []snapshot.Record) {
	p := vs[0].Path
	for _, seen := range eventSeen[p] {
		if slices.ContainsFunc(vs, func(v snapshot.Record) bool { return v.Seen == seen }) {
			vl.kept[p] = append(vl.kept[p], seen)
			vl.first[p] = vs[0].Seen
		}
	}
}

// stemOf returns a path without its last extension: report.html and
// report.pdf share the stem report.
func stemOf(p string) (string, bool) {
	ext := path.Ext(p)
	if ext == "" || len(ext) == len(path.Base(p)) {
		return "", false
	}
	return strings.TrimSuffix(p, ext), true
}

// linksEntries reports whether the entries of set s's lists may carry
// links, whose bytes no bound of an entry's covers (see listing).
func (s *set) linksEntries() bool {
	rules := &s.SetLinks
	return len(s.mirrors) > 0 || len(rules.Metadata) > 0 || rules.Alternates != config.AlternatesOff ||
		len(rules.Collections) > 0 || s.via != "" || rules.KeepVersions
}

// links returns the links of set s's entry for the resource r: in a
// Resource List (ev nil) or for a change event.
func (l *linkIndex) links(s *set, r *snapshot.Record, ev *snapshot.Event) ([]rs.Link, error) {
	if ev != nil && ev.Change == snapshot.Deleted {
		return nil, nil
	}
	rules := &s.SetLinks
	rel := strings.TrimPrefix(r.Path, s.prefix)
	var links []rs.Link
	var err error
	for _, m := range s.mirrors {
		links = append(links, rs.Link{Rel: rs.RelDuplicate, Href: layout.URL(m.base, r.Path), Pri: m.pri})
	}
	for _, m := range rules.Metadata {
		if links, err = l.metadataLinks(links, s, rel, &m); err != nil {
			return nil, err
		}
	}
	if rules.Alternates != config.AlternatesOff {
		if links, err = l.alternateLinks(links, r, rules.Alternates); err != nil {
			return nil, err
		}
	}
	for _, c := range rules.Collections {
		if slices.ContainsFunc(c.Match, func(p string) bool { return layout.MatchGlob(p, rel) }) {
			links = append(links, rs.Link{Rel: rs.RelCollection, Href: c.Href})
		}
	}
	if s.via != "" {
		via := describedLink(l.s, rs.RelVia, layout.URL(s.via, rel), r)
		// The origin's modification time: tools that fetch from it
		// (wget -N, curl -R, rsync -t) give the copy its Last-Modified.
		via.Modified = time.Unix(0, r.ModTime).UTC().Truncate(time.Second)
		links = append(links, via)
	}
	if rules.KeepVersions {
		links = l.versionLinks(links, r, ev, rules.Patches)
	}
	return links, nil
}

// metadataLinks appends the links of metadata rule m for the resource at
// rel (relative to the set's folder): describedby from an object to its
// record, describes and profile from a record to its object.
func (l *linkIndex) metadataLinks(links []rs.Link, s *set, rel string, m *config.Metadata) ([]rs.Link, error) {
	if stem, ok := matchPair(m.Objects, rel); ok {
		rec, err := l.files.Find(s.prefix + strings.Replace(m.Records, "*", stem, 1))
		if err != nil {
			return nil, err
		}
		if rec != nil {
			links = append(links, describedLink(l.s, rs.RelDescribedBy, l.s.resURL(rec.Path), rec))
		}
	}
	if stem, ok := matchPair(m.Records, rel); ok {
		obj, err := l.files.Find(s.prefix + strings.Replace(m.Objects, "*", stem, 1))
		if err != nil {
			return nil, err
		}
		if obj != nil {
			links = append(links, describedLink(l.s, rs.RelDescribes, l.s.resURL(obj.Path), obj))
			if m.Profile != "" {
				links = append(links, rs.Link{Rel: rs.RelProfile, Href: m.Profile})
			}
		}
	}
	return links, nil
}

// matchPair matches rel against a pattern with one "*" that stands for a
// non-empty part of one path element, and returns that part.
func matchPair(pattern, rel string) (string, bool) {
	prefix, suffix, _ := strings.Cut(pattern, "*")
	if len(rel) <= len(prefix)+len(suffix) || !strings.HasPrefix(rel, prefix) || !strings.HasSuffix(rel, suffix) {
		return "", false
	}
	stem := rel[len(prefix) : len(rel)-len(suffix)]
	return stem, !strings.Contains(stem, "/")
}

// alternateLinks appends the links between the files that share r's stem
// in its folder: to each other file, or to the generic URI.
func (l *linkIndex) alternateLinks(links []rs.Link, r *snapshot.Record, mode config.Alternates) ([]rs.Link, error) {
	stem, ok := stemOf(r.Path)
	if !ok {
		return links, nil
	}
	group, err := sameStem(l.files, stem)
	if err != nil || len(group) < 2 {
		return links, err
	}
	if mode == config.AlternatesCanonical {
		return append(links, rs.Link{Rel: rs.RelCanonical, Href: l.s.resURL(stem)}), nil
	}
	for _, other := range group {
		if other.Path != r.Path {
			links = append(links, describedLink(l.s, rs.RelAlternate, l.s.resURL(other.Path), other))
		}
	}
	return links, nil
}

// sameStem returns the files of files, in walk order, whose stem is stem.
// They are searched, not indexed: maps of every path and stem cost about
// 85 bytes per file. In walk order, the paths that begin with stem+"."
// are one run; within it, a folder whose name begins so (report.d/) is
// skipped whole: its paths have no such stem.
func sameStem(files *snapshot.Records, stem string) ([]*snapshot.Record, error) {
	prefix := stem + "."
	var group []*snapshot.Record
	i, err := files.Search(prefix)
	for err == nil && i < files.Len() {
		var r *snapshot.Record
		if r, err = files.At(i); err != nil || !strings.HasPrefix(r.Path, prefix) {
			break
		}
		p := r.Path
		if slash := strings.IndexByte(p[len(prefix):], '/'); slash >= 0 {
			// Past the folder: '/' orders before every other byte, so the
			// folder's paths end before its name followed by a NUL.
			i, err = files.Search(p[:len(prefix)+slash] + "\x00")
			continue
		}
		if s, ok := stemOf(p); ok && s == stem {
			group = append(group, r)
		}
		i++
	}
	return group, err
}

// versionLinks appends the memento link of r's version and the TimeMap
// link, and for an update of a JSON resource the patch from the previous
// version. The version of a Resource List's entry is the resource's
// current one, which a set that keeps versions always keeps; that of an
// event is looked up among the versions the versions writer kept.
func (l *linkIndex) versionLinks(links []rs.Link, r *snapshot.Record, ev *snapshot.Event, patches bool) []rs.Link {
	first := false
	if ev != nil {
		if !slices.Contains(l.versions.kept[r.Path], r.Seen) {
			return links
		}
		first = r.Seen == l.versions.first[r.Path]
	}
	memento := describedLink(l.s, rs.RelMemento, l.s.docURL(layout.Memento(unixTime(r.Seen), r.Path)), r)
	links = append(links, memento, rs.Link{Rel: rs.RelTimeMap, Href: l.s.docURL(layout.TimeMap(r.Path)), Type: layout.TypeTimeMap})
	if patches && ev != nil && ev.Change == snapshot.Updated && !first && isJSON(r) {
		if patch := l.versions.patches[layout.Patch(unixTime(r.Seen), r.Path)]; patch != nil {
			links = append(links, *patch)
		}
	}
	return links
}
