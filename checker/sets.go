package checker

import (
	"sort"
	"time"

	"github.com/rsgen/rsgen/rs"
)

// resourceSet is what the capability documents of one Capability List say
// about its set of resources (§9): all of them describe the same set.
type resourceSet struct {
	capList string
	// fixity says whether the listings keep what the content check
	// compares (Options.VerifyContent).
	fixity bool
	// listed holds the Resource List's entries by loc.
	listed  map[string]listing
	hasList bool
	listAt  *time.Time // the Resource List's at, when known
	// dumped holds the Resource Dump manifests' locs.
	dumped     map[string]where
	hasDump    bool
	dumpBroken bool // a package could not be read: dumped is incomplete
	changes    []changeEvent
}

// listing is an entry of a Resource List or Change List: where it is and,
// for the content check, what it says of the resource's bytes. Only those
// attributes are kept, not the entry's rs:md: a check of a million
// resources held each one's map of attributes, 314 MB of a peak of 1.25 GB.
type listing struct {
	pos where
	fix *fixity // nil without an rs:md, or without a content check
}

// listingOf returns the listing of entry e of d, with its fixity when the
// set keeps it.
func (s *resourceSet) listingOf(d *Document, e *Entry) listing {
	l := listing{pos: at(d, e.Line)}
	if s.fixity && e.MD != nil {
		l.fix = fixityOf(e.MD.Attrs)
	}
	return l
}

type changeEvent struct {
	listing
	loc    string
	change string
	at     *time.Time
}

func (s *resourceSet) addResourceList(d *Document) {
	s.hasList = true
	if s.listed == nil {
		s.listed = map[string]listing{}
	}
	if dt, err := parseDateTime(d.MD.Attrs["at"], false); err == nil && (s.listAt == nil || dt.t.Before(*s.listAt)) {
		s.listAt = &dt.t
	}
	for i := range d.Entries {
		s.listed[d.Entries[i].Loc] = s.listingOf(d, &d.Entries[i])
	}
}

func (s *resourceSet) addChangeList(d *Document) {
	for i, e := range d.Entries {
		ev := changeEvent{listing: s.listingOf(d, &d.Entries[i]), loc: e.Loc}
		ev.change, _ = e.MD.Attr("change")
		v, _ := e.MD.Attr("datetime")
		if dt, err := parseDateTime(v, false); err == nil {
			ev.at = &dt.t
		}
		s.changes = append(s.changes, ev)
	}
}

func (s *resourceSet) addDumped(d *Document) {
	if s.dumped == nil {
		s.dumped = map[string]where{}
	}
	for _, e := range d.Entries {
		s.dumped[e.Loc] = at(d, e.Line)
	}
}

// lastChanges returns the last change event of each resource.
func (s *resourceSet) lastChanges() map[string]changeEvent {
	last := map[string]changeEvent{}
	for _, ev := range s.changes {
		last[ev.loc] = ev
	}
	return last
}

// compare reports where the capabilities disagree about the set. The
// specification is soft here (snapshots are taken at different times), so
// every finding is a warning.
func (s *resourceSet) compare() []Finding {
	var out []Finding
	if s.hasList && s.hasDump && !s.dumpBroken {
		for _, loc := range sortedKeys(s.listed) {
			if _, ok := s.dumped[loc]; !ok {
				out = append(out, finding(s.listed[loc].pos, "set-dump-missing", "%s is in the Resource List but in no Resource Dump package", loc))
			}
		}
		for _, loc := range sortedKeys(s.dumped) {
			if _, ok := s.listed[loc]; !ok {
				out = append(out, finding(s.dumped[loc], "set-dump-extra", "%s is in a Resource Dump package but not in the Resource List", loc))
			}
		}
	}
	if !s.hasList || s.listAt == nil {
		return out
	}
	last := s.lastChanges()
	for _, loc := range sortedKeys(last) {
		ev := last[loc]
		if ev.at == nil || ev.at.After(*s.listAt) {
			continue
		}
		l, listed := s.listed[loc]
		switch {
		case ev.change == rs.ChangeDeleted && listed:
			out = append(out, finding(l.pos, "set-deleted-listed", "%s is listed although the Change List deletes it at %s, before the Resource List's at", loc, ev.at.Format(rs.TimeLayout)))
		case ev.change != rs.ChangeDeleted && !listed:
			out = append(out, finding(ev.pos, "set-change-unknown", "%s changed before the Resource List's at but is not in it", loc))
		}
	}
	return out
}

// takeExpected returns what each resource should be, as the Resource List
// says and later changes update it. Deleted resources are left out. It is
// made of listed, which it takes (compare must have run): a copy was one
// more map of every resource.
func (s *resourceSet) takeExpected() map[string]listing {
	out := s.listed
	s.listed = nil
	if out == nil {
		out = map[string]listing{}
	}
	for _, ev := range s.changes {
		if s.listAt != nil && (ev.at == nil || !ev.at.After(*s.listAt)) {
			continue
		}
		if ev.change == rs.ChangeDeleted {
			delete(out, ev.loc)
		} else {
			out[ev.loc] = ev.listing
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// finding builds a finding of rule about the document at pos.
func finding(pos where, rule, format string, args ...any) Finding {
	rep := &reporter{url: pos.url, file: pos.file}
	rep.add(pos.line, rule, format, args...)
	return rep.findings[0]
}
