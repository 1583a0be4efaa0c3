package generator

import (
	"slices"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
)

// The lists of a set: its Resource List and Capability List, and the
// Source Description over every set.

// resourceEntryBound bounds the bytes of one Resource List entry beyond its
// URI (markup, lastmod, three digests, length, type).
const resourceEntryBound = 400

// resourceListing returns what set st's Resource List (§10) lists: its
// members in the scan sc, with their links, at the time the set last
// changed.
func resourceListing(s *site, sc *scanned, st *set, links *linkIndex, at int64) listing {
	members := sc.members[st]
	fromMtime := s.cfg.Lastmod == config.LastmodMtime
	// Each goroutine that renders entries reads the records with a reader
	// of its own, and renders the URI and hash of each entry into buffers
	// reused from entry to entry: the writer copies them at once, and a
	// million-entry list then costs no allocation per entry beyond its
	// links.
	newEntry := func() func(i int, e *rs.Entry) error {
		files := sc.files.Reader()
		var loc, hash []byte
		return func(i int, e *rs.Entry) error {
			r, err := files.At(members.At(i))
			if err != nil {
				return err
			}
			ls, err := links.links(st, r, nil)
			if err != nil {
				return err
			}
			loc = layout.AppendURL(loc[:0], s.resBase, r.Path)
			hash = r.Digests.AppendHash(hash[:0], s.algs)
			*e = rs.Entry{LocBytes: loc, Lastmod: r.Lastmod(fromMtime), Links: ls}
			describeContent(&e.MD, r)
			e.MD.HashBytes = hash
			return nil
		}
	}
	l := listing{md: rs.MD{Capability: rs.CapResourceList, At: unixTime(at)}, n: members.Len(),
		size: int64(members.Len())*int64(len(s.resBase)+resourceEntryBound) + 3*sc.pathBytes[st], entry: newEntry()}
	if !st.linksEntries() {
		// A URI is at most three times its path once percent-encoded.
		l.newEntry, l.entryBound = newEntry, int64(len(s.resBase)+resourceEntryBound+3*sc.maxPath[st])
	}
	return l
}

// writeResourceList writes set st's Resource List, l; archived says
// whether its archive is published.
func writeResourceList(d docWriter, st *set, l listing, archived bool) error {
	return writeSplit(d.s, st, layout.ResourceList(st.Name), l, d.s.archivesLink(st, rs.CapResourceList, archived), d.writeDoc, d.writeParts)
}

// writeCapabilityList writes set st's Capability List (§9), listing the
// set's documents this build published: those that would be empty are
// not (a set without files has no Resource List, a set without changes
// yet no Change Dump Index, an archive nothing yet), and are listed once
// they are. The Change List Index always is, so the Capability List never
// changes the URI it points at for Change Lists; without one ([changelist]
// index = false) it points at journal's open Change List, which does.
func writeCapabilityList(d docWriter, st *set, journal []snapshot.Segment) error {
	s := d.s
	links := []rs.Link{{Rel: rs.RelUp, Href: s.docURL(layout.SourceDescription)}}
	if by := s.describedBy(st); by != "" {
		links = append(links, rs.Link{Rel: rs.RelDescribedBy, Href: by})
	}
	caps := []struct{ capability, rel string }{{rs.CapResourceList, layout.ResourceList(st.Name)}}
	if st.resourceDump {
		caps = append(caps, struct{ capability, rel string }{rs.CapResourceDump, layout.ResourceDump(st.Name)})
	}
	for _, kind := range segmentKinds(st) {
		caps = append(caps, struct{ capability, rel string }{kind.capability, capabilityEntry(s, kind, st, journal)})
	}
	// The archives come last, so that a reader that stops at the first
	// way to reach a document meets the live ones first.
	for _, c := range st.archives {
		caps = append(caps, struct{ capability, rel string }{c + "-archive", layout.Archive(st.Name, c)})
	}
	caps = slices.DeleteFunc(caps, func(c struct{ capability, rel string }) bool { return !d.w.Recorded(c.rel) })
	return d.writeDoc(layout.CapabilityList(st.Name), rs.URLSet, rs.MD{Capability: rs.CapCapabilityList}, links, func(w *rs.Writer) error {
		for _, c := range caps {
			if err := w.Entry(&rs.Entry{Loc: s.docURL(c.rel), MD: rs.MD{Capability: c.capability}}); err != nil {
				return err
			}
		}
		return writeChannels(s, w, st)
	})
}

// writeSourceDescription writes the Source Description (§8) at
// /.well-known/resourcesync, listing every set's Capability List. It has
// no lastmod, so it changes only when the sets do.
func writeSourceDescription(d docWriter) error {
	s := d.s
	var links []rs.Link
	if by := s.describedBy(nil); by != "" {
		links = append(links, rs.Link{Rel: rs.RelDescribedBy, Href: by})
	}
	return d.writeDoc(layout.SourceDescription, rs.URLSet, rs.MD{Capability: rs.CapDescription}, links, func(w *rs.Writer) error {
		for _, st := range s.sets {
			e := rs.Entry{Loc: s.docURL(layout.CapabilityList(st.Name)), MD: rs.MD{Capability: rs.CapCapabilityList}}
			if by := s.describedBy(st); by != "" {
				e.Links = []rs.Link{{Rel: rs.RelDescribedBy, Href: by}}
			}
			if err := w.Entry(&e); err != nil {
				return err
			}
		}
		return nil
	})
}
