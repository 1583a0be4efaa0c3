package destination

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rsgen/rsgen/rs"
)

// listRef is a Change List (or a Change Dump) as an index or an archive
// names it, with the interval it covers as far as known.
type listRef struct {
	url         string
	from, until time.Time // zero: not given
}

// errNoChangeLists is returned when the Source publishes no Change List.
var errNoChangeLists = errors.New("the Source publishes no Change List")

// GapError says where the Change Lists stop reaching back.
type GapError struct {
	Since time.Time // the last sync
	From  time.Time // where the Change Lists start again
}

func (e *GapError) Error() string {
	return fmt.Sprintf("the Source's Change Lists cover nothing from %s, the last sync, to %s: changes may be missing",
		e.Since.Format(time.RFC3339Nano), e.From.Format(time.RFC3339Nano))
}

func (e *GapError) Unwrap() error { return ErrGap }

// changes reads the change events since the last sync, since, into
// wants, and returns the newest time the Change Lists cover. A gap in
// them is a *GapError, and no Change List at all errNoChangeLists.
func (rd *reader) changes(ctx context.Context, since time.Time, wants *sorter[want]) (time.Time, error) {
	refs, err := rd.refs(ctx, rs.CapChangeList, rs.CapChangeListArchive)
	if err != nil {
		return time.Time{}, err
	}
	if len(refs) == 0 {
		return time.Time{}, errNoChangeLists
	}
	refs = covering(refs, since)
	until := since
	for _, ref := range refs {
		if err := rd.readChanges(ctx, ref, since, &until, wants); err != nil {
			return time.Time{}, err
		}
	}
	sortRefs(refs) // by the from each list gave itself
	if err := checkCoverage(refs, since); err != nil {
		return time.Time{}, err
	}
	for _, ref := range refs {
		if ref.from.IsZero() {
			rd.rep.info(fmt.Sprintf("the Change List %s gives no from: nothing tells whether it holds every change since the last sync", ref.url))
			break
		}
	}
	return until, nil
}

// readChanges reads the change events of one Change List from since on,
// into wants, and moves until to the newest time the list covers. With
// wants nil it only moves until: no event is taken, refused or reported.
func (rd *reader) readChanges(ctx context.Context, ref *listRef, since time.Time, until *time.Time, wants *sorter[want]) error {
	r, f, err := rd.docs.read(ctx, ref.url)
	if err != nil {
		return err
	}
	defer f.Close()
	h, err := r.Head()
	switch {
	case err != nil:
	case h.MD.Capability != rs.CapChangeList:
		err = fmt.Errorf("its capability is %q, not %q", h.MD.Capability, rs.CapChangeList)
	case h.Root != rs.URLSet:
		err = errors.New("an index where a Change List was expected (an index that lists itself or another index?)")
	}
	if err != nil {
		return fmt.Errorf("read the Change List %s: %w", ref.url, err)
	}
	ref.from = cmp.Or(h.MD.From, ref.from)
	ref.until = cmp.Or(h.MD.Until, ref.until)
	if ref.until.After(*until) {
		*until = ref.until
	}
	last := ref.from
	err = r.Entries(func(e *rs.Entry) error {
		at := changeTime(e, last)
		last = at
		if wants == nil {
			if at.After(*until) {
				*until = at
			}
			return nil
		}
		switch e.MD.Change {
		case rs.ChangeCreated, rs.ChangeUpdated, rs.ChangeDeleted:
		default:
			rd.rep.event(Event{Kind: EventFailed, URL: e.Loc, Err: &RefusedError{Loc: e.Loc, Reason: fmt.Sprintf("change %q is not created, updated or deleted", e.MD.Change)}})
			return nil
		}
		if !at.IsZero() && at.Before(since) {
			return nil
		}
		if at.After(*until) {
			*until = at
		}
		if w, ok := rd.wantOf(e, e.MD.Change, at); ok {
			return wants.Add(w)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read the Change List %s: %w", ref.url, err)
	}
	return nil
}

// changeTime is the time of a change event: its datetime, else its
// lastmod, else last, the time of the event before it (a list's order is
// the order of its events).
func changeTime(e *rs.Entry, last time.Time) time.Time {
	return cmp.Or(e.MD.Datetime, e.Lastmod, last)
}

// refs gathers the lists of a capability (Change Lists or Change Dumps)
// that the Capability List names, directly, through an index, and through
// the archive of that capability: one ref per URL, in the order of their
// from. An index that lists itself is warned of and passed over.
func (rd *reader) refs(ctx context.Context, capability, archive string) ([]*listRef, error) {
	byURL := map[string]*listRef{}
	add := func(u string, md *rs.MD) {
		if r := byURL[u]; r != nil {
			r.from, r.until = cmp.Or(r.from, md.From), cmp.Or(r.until, md.Until)
			return
		}
		byURL[u] = &listRef{url: u, from: md.From, until: md.Until}
	}
	var archives []string
	for _, u := range rd.src.caps[capability] {
		h, err := rd.docs.head(ctx, u)
		if err != nil {
			return nil, err
		}
		if h.Root == rs.URLSet {
			add(u, &h.MD)
			continue
		}
		for _, l := range h.Links {
			if l.Rel == rs.RelArchives {
				archives = append(archives, l.Href)
			}
		}
		if err := rd.indexEntries(ctx, u, capability, add); err != nil {
			return nil, err
		}
	}
	archives = append(archives, rd.src.caps[archive]...)
	seen := map[string]bool{}
	for _, u := range archives {
		if seen[u] {
			continue
		}
		seen[u] = true
		err := rd.readList(ctx, u, archive, func(*rs.Head) {}, func(e *rs.Entry) error {
			add(e.Loc, &e.MD)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	refs := make([]*listRef, 0, len(byURL))
	for _, r := range byURL {
		refs = append(refs, r)
	}
	sortRefs(refs)
	return refs, nil
}

// sortRefs sorts lists by their from, then URL.
func sortRefs(refs []*listRef) {
	slices.SortFunc(refs, func(a, b *listRef) int {
		return cmp.Or(a.from.Compare(b.from), cmp.Compare(a.url, b.url))
	})
}

// indexEntries adds the lists an index names.
func (rd *reader) indexEntries(ctx context.Context, u, capability string, add func(string, *rs.MD)) error {
	r, f, err := rd.docs.read(ctx, u)
	if err != nil {
		return err
	}
	defer f.Close()
	err = r.Entries(func(e *rs.Entry) error {
		if e.Loc == u {
			rd.rep.warning(fmt.Sprintf("the %s index %s lists itself; that entry is passed over", capability, u))
			return nil
		}
		add(e.Loc, &e.MD)
		return nil
	})
	if err != nil {
		return fmt.Errorf("read the index %s: %w", u, err)
	}
	return nil
}

// covering keeps the lists that may hold events from since on: those not
// closed before it.
func covering(refs []*listRef, since time.Time) []*listRef {
	var keep []*listRef
	for _, r := range refs {
		if r.until.IsZero() || !r.until.Before(since) {
			keep = append(keep, r)
		}
	}
	return keep
}

// checkCoverage returns a *GapError when the lists, sorted by from, leave
// a time from since on uncovered. A list that gives no from (resync
// writes none) is taken to cover what precedes it: nothing tells
// otherwise.
func checkCoverage(refs []*listRef, since time.Time) error {
	covered := since
	for _, r := range refs {
		if !r.from.IsZero() && r.from.After(covered) {
			return &GapError{Since: since, From: r.from}
		}
		if r.until.IsZero() {
			return nil // the open list: it covers up to now
		}
		if r.until.After(covered) {
			covered = r.until
		}
	}
	return nil
}

// emptySetTime is readResources' time for a set that publishes Change
// Lists and no Resource List: the newest its Change Lists cover (an
// event's time, a list's from or until), up to which the set held no
// resources, as the Capability List written with them says.
func (rd *reader) emptySetTime(ctx context.Context) (time.Time, error) {
	refs, err := rd.refs(ctx, rs.CapChangeList, rs.CapChangeListArchive)
	if err != nil {
		return time.Time{}, err
	}
	if len(refs) == 0 {
		return time.Time{}, fmt.Errorf("the Capability List %s names no Resource List", rd.src.capList)
	}
	var until time.Time
	for _, ref := range refs {
		if err := rd.readChanges(ctx, ref, time.Time{}, &until, nil); err != nil {
			return time.Time{}, err
		}
		if ref.from.After(until) {
			until = ref.from
		}
	}
	rd.rep.info(fmt.Sprintf("the Capability List %s names Change Lists and no Resource List: the set holds no resources now", rd.src.capList))
	return until, nil
}
