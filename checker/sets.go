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
	// listed holds the Resource List's entries, with what the content
	// check compares (Options.VerifyContent) when it keeps fixities. Only
	// those attributes are kept, not an entry's rs:md: a check of a
	// million resources held each one's map of attributes, 314 MB of a
	// peak of 1.25 GB.
	listed  locTable
	hasList bool
	listAt  *time.Time // the Resource List's at, when known
	// dumped holds the Resource Dump manifests' entries.
	dumped     locTable
	hasDump    bool
	dumpBroken bool // a package could not be read: dumped is incomplete
	changes    []changeEvent
}

// newResourceSet returns the set of the Capability List capList, which
// keeps what the content check compares when fixity is set.
func newResourceSet(capList string, fixity bool) *resourceSet {
	s := &resourceSet{capList: capList}
	if fixity {
		s.listed.keepFixities()
	}
	return s
}

// fixityOf returns the fixity of entry e when the set keeps it.
func (s *resourceSet) fixityOf(e *Entry) *fixity {
	if s.listed.keepsFixities() && e.MD != nil {
		return fixityOf(e.MD.Attrs)
	}
	return nil
}

// changeEvent is an entry of a Change List.
type changeEvent struct {
	loc    string
	pos    where
	fix    *fixity
	change string
	at     *time.Time
}

// noteList notes that the set has a Resource List, of which d is a
// document, and the earliest at of its documents.
func (s *resourceSet) noteList(d *Document) {
	s.hasList = true
	if dt, err := parseDateTime(d.MD.Attrs["at"], false); err == nil && (s.listAt == nil || dt.t.Before(*s.listAt)) {
		s.listAt = &dt.t
	}
}

func (s *resourceSet) addChangeList(d *Document) {
	for i, e := range d.Entries {
		ev := changeEvent{loc: e.Loc, pos: at(d, e.Line), fix: s.fixityOf(&d.Entries[i])}
		ev.change, _ = e.MD.Attr("change")
		v, _ := e.MD.Attr("datetime")
		if dt, err := parseDateTime(v, false); err == nil {
			ev.at = &dt.t
		}
		s.changes = append(s.changes, ev)
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
		s.listed.each(func(loc string, k locKey, e locPos, _ *fixity) {
			if _, ok := s.dumped.findKey(k); !ok {
				out = append(out, finding(s.listed.where(e), "set-dump-missing", "%s is in the Resource List but in no Resource Dump package", loc))
			}
		})
		s.dumped.each(func(loc string, k locKey, e locPos, _ *fixity) {
			if _, ok := s.listed.findKey(k); !ok {
				out = append(out, finding(s.dumped.where(e), "set-dump-extra", "%s is in a Resource Dump package but not in the Resource List", loc))
			}
		})
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
		l, listed := s.listed.find(loc)
		switch {
		case ev.change == rs.ChangeDeleted && listed:
			out = append(out, finding(s.listed.where(l), "set-deleted-listed", "%s is listed although the Change List deletes it at %s, before the Resource List's at", loc, ev.at.Format(rs.TimeLayout)))
		case ev.change != rs.ChangeDeleted && !listed:
			out = append(out, finding(ev.pos, "set-change-unknown", "%s changed before the Resource List's at but is not in it", loc))
		}
	}
	return out
}

// lateChanges returns, for each resource a change after the Resource
// List's at (every change, when the list has none) makes other than the
// list says, the index of its last such change.
func (s *resourceSet) lateChanges() map[locKey]int {
	late := map[locKey]int{}
	for i, ev := range s.changes {
		if s.listAt != nil && (ev.at == nil || !ev.at.After(*s.listAt)) {
			continue
		}
		late[keyOf(ev.loc)] = i
	}
	return late
}

// eachExpected calls fn with what each resource should be, as the
// Resource List says and later changes update it: its loc, where that is
// said and the fixity said. Deleted resources are left out.
func (s *resourceSet) eachExpected(late map[locKey]int, fn func(loc string, k locKey, pos where, fix *fixity)) {
	s.listed.each(func(loc string, k locKey, e locPos, fix *fixity) {
		if _, changed := late[k]; !changed {
			fn(loc, k, s.listed.where(e), fix)
		}
	})
	for k, i := range late {
		if ev := &s.changes[i]; ev.change != rs.ChangeDeleted {
			fn(ev.loc, k, ev.pos, ev.fix)
		}
	}
}

// expects reports whether the resource of digest k exists, as the
// Resource List says and the late changes update it.
func (s *resourceSet) expects(late map[locKey]int, k locKey) bool {
	if i, changed := late[k]; changed {
		return s.changes[i].change != rs.ChangeDeleted
	}
	_, listed := s.listed.findKey(k)
	return listed
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
