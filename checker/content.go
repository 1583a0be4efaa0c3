package checker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
)

// verifyContent reads every resource the Source lists and compares it with
// the listing: length, hash and, over HTTP, type.
func (w *walker) verifyContent(ctx context.Context) {
	var want map[string]listing
	for _, s := range w.sets {
		expected := s.takeExpected()
		if want == nil {
			want = expected
			continue
		}
		for loc, l := range expected {
			want[loc] = l
		}
	}
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range w.opts.Concurrency {
		wg.Go(func() {
			for loc := range jobs {
				w.verify(ctx, loc, want[loc])
			}
		})
	}
	for _, loc := range sortedKeys(want) {
		if ctx.Err() != nil {
			break
		}
		jobs <- loc
	}
	close(jobs)
	wg.Wait()
}

// verify reads one resource and compares it with its listing.
func (w *walker) verify(ctx context.Context, loc string, l listing) {
	f := w.fetcherFor(loc)
	if f == nil {
		w.skip(loc, l.pos)
		return
	}
	res, err := f.Fetch(ctx, loc)
	switch {
	case errors.Is(err, ErrNotFound):
		w.report(l.pos, "content-missing", "%s does not exist", loc)
		return
	case errors.Is(err, ErrNotRegular):
		w.report(l.pos, "content-missing", "%s cannot be read: %v", loc, err)
		return
	case err != nil:
		w.fetchFailed(loc, l.pos, err)
		return
	}
	defer res.Body.Close()
	if res.Status != http.StatusOK {
		w.report(l.pos, "content-missing", "%s answered HTTP %d", loc, res.Status)
		return
	}
	if l.fix == nil {
		return
	}
	ds, _ := parseHash(l.fix.hash)
	n, sums, err := digestsOf(res.Body, ds)
	if err != nil {
		w.fetchFailed(loc, l.pos, fmt.Errorf("read %s: %w", loc, err))
		return
	}
	w.checkFixity(l.pos, l.fix, n, sums, "content-length", "content-hash", loc)
	if typ := l.fix.typ; l.fix.hasType && res.File == "" && mediaType(res.ContentType) != typ {
		w.report(l.pos, "content-type", "%s is served as %q; type says %q", loc, res.ContentType, typ)
	}
}
