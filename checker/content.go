package checker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
)

// verifyContent reads every resource the Source lists and compares it with
// the listing: length, hash and, over HTTP, type. A resource in several
// sets is read once, against the last set that lists it.
func (w *walker) verifyContent(ctx context.Context) {
	type job struct {
		loc string
		pos where
		fix *fixity
	}
	jobs := make(chan job)
	var wg sync.WaitGroup
	for range w.opts.Concurrency {
		wg.Go(func() {
			for j := range jobs {
				w.verify(ctx, j.loc, j.pos, j.fix)
			}
		})
	}
	late := make([]map[locKey]int, len(w.sets))
	for i, s := range w.sets {
		late[i] = s.lateChanges()
	}
	for i, s := range w.sets {
		s.eachExpected(late[i], func(loc string, k locKey, pos where, fix *fixity) {
			if ctx.Err() != nil || expectedLater(w.sets[i+1:], late[i+1:], k) {
				return
			}
			jobs <- job{loc: loc, pos: pos, fix: fix}
		})
	}
	close(jobs)
	wg.Wait()
}

// expectedLater reports whether one of sets expects the resource of
// digest k.
func expectedLater(sets []*resourceSet, late []map[locKey]int, k locKey) bool {
	for i, s := range sets {
		if s.expects(late[i], k) {
			return true
		}
	}
	return false
}

// listedLength returns the length a listing gives a resource, if it
// gives one that can be read past.
func listedLength(fix *fixity) (int64, bool) {
	n, err := strconv.ParseInt(fix.length, 10, 64)
	return n, err == nil && n >= 0 && n < math.MaxInt64
}

// verify reads one resource and compares it with its listing.
func (w *walker) verify(ctx context.Context, loc string, pos where, fix *fixity) {
	f := w.resourceFetcher(loc)
	if f == nil {
		w.skip(loc, pos)
		return
	}
	res, err := f.Fetch(ctx, loc)
	switch {
	case errors.Is(err, ErrNotFound):
		w.report(pos, "content-missing", "%s does not exist", loc)
		return
	case errors.Is(err, ErrNotRegular):
		w.report(pos, "content-missing", "%s cannot be read: %v", loc, err)
		return
	case err != nil:
		w.fetchFailed(loc, pos, err)
		return
	}
	defer res.Body.Close()
	if res.Status != http.StatusOK {
		w.report(pos, "content-missing", "%s answered HTTP %d", loc, res.Status)
		return
	}
	if fix == nil {
		return
	}
	ds, _ := parseHash(fix.hash)
	// A file in a folder ends; a resource over HTTP may stream without
	// end. It is read one byte past its listed length, which shows it is
	// longer, so that it costs what it declared, not --max-bytes.
	var body io.Reader = res.Body
	length, bounded := listedLength(fix)
	if bounded = bounded && res.File == ""; bounded {
		body = io.LimitReader(body, length+1)
	}
	n, sums, err := digestsOf(body, ds)
	if err != nil {
		w.fetchFailed(loc, pos, fmt.Errorf("read %s: %w", loc, err))
		return
	}
	if bounded && n > length { // the digests of a part say nothing
		w.report(pos, "content-length", "%s has more than %d bytes; length says %d", loc, length, length)
	} else {
		w.checkFixity(pos, fix, n, sums, "content-length", "content-hash", loc)
	}
	if typ := fix.typ; fix.hasType && res.File == "" && mediaType(res.ContentType) != typ {
		w.report(pos, "content-type", "%s is served as %q; type says %q", loc, res.ContentType, typ)
	}
}
