package destination

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/rsgen/rsgen/rs"
)

// reader reads the Source's documents of one run: the Resource List,
// the Change Lists and what leads to them, and the dumps' listings. It
// turns their entries into wants, sorted on disk, and their times; what
// DIR holds is the applier's.
type reader struct {
	docs *docs
	src  *source
	m    *mapper
	rep  *reporter
	sum  *Summary // counts the resources on other hosts
	work string   // sorted runs
	seq  int64    // wants read so far
}

// newReader returns the reader of the set src, whose resources m maps,
// reading with docs and sorting in the folder work.
func newReader(docs *docs, src *source, m *mapper, rep *reporter, sum *Summary, work string) *reader {
	return &reader{docs: docs, src: src, m: m, rep: rep, sum: sum, work: work}
}

// readList reads the list at u, of the capability given: its entries, or
// those of its parts when it is an index (a <sitemapindex>). head is
// called with the head of the list and of each part. A part that is an
// index itself, that is the index again, or that comes twice is an error:
// a Source cannot lead a sync round in circles.
func (rd *reader) readList(ctx context.Context, u, capability string, head func(*rs.Head), entry func(*rs.Entry) error) error {
	r, f, err := rd.docs.read(ctx, u)
	if err != nil {
		return err
	}
	defer f.Close()
	h, err := r.Head()
	if err == nil && h.MD.Capability != capability {
		err = fmt.Errorf("its capability is %q, not %q", h.MD.Capability, capability)
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", u, err)
	}
	head(h)
	if h.Root == rs.URLSet {
		if err := r.Entries(entry); err != nil {
			return fmt.Errorf("read %s: %w", u, err)
		}
		return nil
	}
	var parts []string
	seen := map[string]bool{u: true}
	err = r.Entries(func(e *rs.Entry) error {
		if seen[e.Loc] {
			return fmt.Errorf("the index lists %s twice, or itself", e.Loc)
		}
		seen[e.Loc] = true
		parts = append(parts, e.Loc)
		return nil
	})
	if err != nil {
		return fmt.Errorf("read the index %s: %w", u, err)
	}
	for _, p := range parts {
		if err := rd.readPart(ctx, p, u, capability, head, entry); err != nil {
			return err
		}
	}
	return nil
}

// readPart reads a part of the index at index.
func (rd *reader) readPart(ctx context.Context, u, index, capability string, head func(*rs.Head), entry func(*rs.Entry) error) error {
	r, f, err := rd.docs.read(ctx, u)
	if err != nil {
		return err
	}
	defer f.Close()
	h, err := r.Head()
	switch {
	case err != nil:
	case h.Root != rs.URLSet:
		err = errors.New("a part of an index must be a <urlset>, not an index itself")
	case h.MD.Capability != capability:
		err = fmt.Errorf("its capability is %q, not %q", h.MD.Capability, capability)
	}
	if err == nil {
		head(h)
		err = r.Entries(entry)
	}
	if err != nil {
		return fmt.Errorf("read %s, a part of %s: %w", u, index, err)
	}
	return nil
}

// wantOf returns what the entry e of a list asks, or false when the sync
// leaves it out: a resource on another host (counted), or one that cannot
// be mirrored (reported).
func (rd *reader) wantOf(e *rs.Entry, change string, at time.Time) (want, bool) {
	path, err := rd.m.path(e.Loc)
	if errors.Is(err, errOtherHost) {
		rd.rep.count(&rd.sum.OtherHosts)
		return want{}, false
	}
	var fix fixity
	if err == nil {
		fix, err = fixityOf(&e.MD, e.Lastmod)
		if err != nil {
			err = &RefusedError{Loc: e.Loc, Reason: err.Error()}
		}
	}
	if err != nil {
		rd.rep.event(Event{Kind: EventFailed, URL: e.Loc, Err: err})
		return want{}, false
	}
	rd.seq++
	return want{path: path, loc: e.Loc, fix: fix, change: change, at: at, seq: rd.seq}, true
}

// readResources reads the resources of the set's Resource List into
// wants, and returns the list's at (the earliest of its parts'). A
// Capability List that names Change Lists and no Resource List is that
// of a set without resources now (rsgen publishes no empty Resource
// List, which the Sitemap schema refuses): wants stays empty, and the
// time is the newest the Change Lists cover (emptySetTime).
func (rd *reader) readResources(ctx context.Context, wants *sorter[want]) (time.Time, error) {
	lists := rd.src.caps[rs.CapResourceList]
	if len(lists) == 0 {
		return rd.emptySetTime(ctx)
	}
	var at time.Time
	err := rd.readList(ctx, lists[0], rs.CapResourceList, func(h *rs.Head) {
		if t := h.MD.At; !t.IsZero() && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}, func(e *rs.Entry) error {
		if w, ok := rd.wantOf(e, "", time.Time{}); ok {
			return wants.Add(w)
		}
		return nil
	})
	return at, err
}

// sortedWants sorts the wants of a list into one per path: the last read
// of a Resource List's, the newest of change events.
func sortedWants(wants *sorter[want]) func() iter.Seq2[want, error] {
	return func() iter.Seq2[want, error] { return lastOfEach(wants.All(), wantPath) }
}
