package destination

import (
	"context"
	"fmt"
	"io"
	"iter"
	"sync"

	"github.com/rsgen/rsgen/rs"
)

// The verified-apply path: every way a sync learns what DIR should hold
// (a Resource List, Change Lists, and later a notification's change set)
// ends in apply, which takes the wanted paths as a sorted stream and
// brings DIR to them, file by file, each verified before it lands.

// applier brings DIR to the wants it is given, keeping the inventory
// with it: it plans, deletes, fetches, verifies and places, and seeds
// DIR from dump packages. It never reads the Source's lists; the reader
// does.
type applier struct {
	dir         *mirrorDir
	inv         *inventory // nil in a dry run
	c           *client
	m           *mapper // maps a package's manifest entries to paths
	rep         *reporter
	sum         *Summary // counts the files found unchanged
	state       string   // the state folder: the inventory, the packages placed
	work        string   // packages being placed
	jobs        int
	keepDeleted bool
	dryRun      bool
}

// newApplier returns the applier of DIR, dir, and its inventory inv,
// fetching with c as o says.
func newApplier(o *Options, c *client, dir *mirrorDir, inv *inventory, m *mapper, rep *reporter, sum *Summary, work string) *applier {
	return &applier{
		dir: dir, inv: inv, c: c, m: m, rep: rep, sum: sum, state: o.State, work: work,
		jobs: o.Jobs, keepDeleted: o.KeepDeleted, dryRun: o.DryRun,
	}
}

// planCounts is what applying a stream of wants would do.
type planCounts struct {
	fetch, deletes int64
	bytes          int64 // of the fetches whose length is listed
}

// count plans without touching DIR: it takes every record's file as
// unchanged, so it is the work of a sync that nothing disturbed. Change
// events are counted as they are, each a fetch or a deletion, without
// reading the inventory.
func (ap *applier) count(wants iter.Seq2[want, error], list bool) (planCounts, error) {
	var n planCounts
	if !list {
		for w, err := range wants {
			if err != nil {
				return n, err
			}
			if w.change == rs.ChangeDeleted {
				n.deletes++
			} else {
				n.fetch++
				n.bytes += max(w.fix.length, 0)
			}
		}
		return n, nil
	}
	err := join(wants, ap.records(), wantPath, storedPath, func(w *want, stored *storedRecord) error {
		r, err := parsed(stored)
		if err != nil {
			return err
		}
		switch decide(w, r, true, r != nil, list, ap.keepDeleted) {
		case actFetch, actCheck:
			n.fetch++
			n.bytes += max(w.fix.length, 0)
		case actDelete:
			n.deletes++
		}
		return nil
	})
	return n, err
}

// parsed returns the record of a stored one, nil for none.
func parsed(stored *storedRecord) (*record, error) {
	if stored == nil {
		return nil, nil
	}
	r, err := stored.record()
	if err != nil {
		return nil, fmt.Errorf("the inventory: %w", err)
	}
	return &r, nil
}

// records yields the inventory's records.
func (ap *applier) records() iter.Seq2[storedRecord, error] { return readInventory(ap.state) }

// apply brings DIR to what wants ask: wants sorted by path with one per
// path, from a Resource List (list: what it lacks is deleted) or change
// events; n is what count planned. Deletions go first, so that a file
// that gives way to a folder, or a folder to a file, is gone before its
// successor lands.
func (ap *applier) apply(ctx context.Context, wants func() iter.Seq2[want, error], list bool, n planCounts) error {
	if n.deletes > 0 {
		if err := ap.pass(ctx, wants(), list, true, n); err != nil {
			return err
		}
	}
	return ap.pass(ctx, wants(), list, false, n)
}

// pass applies the deletions of wants, or all but them. Change events,
// when they are few beside the inventory, find their records by lookup;
// otherwise wants and records are joined as two sorted streams.
func (ap *applier) pass(ctx context.Context, wants iter.Seq2[want, error], list, deletions bool, n planCounts) error {
	p := newPool(ctx, ap.jobs)
	visit := func(w *want, stored *storedRecord) error {
		if w == nil && !list || (w == nil || w.change == rs.ChangeDeleted) != deletions {
			return nil
		}
		if err := p.err(); err != nil {
			return err
		}
		r, err := parsed(stored)
		if err != nil {
			return err
		}
		path := pathOf(w, r)
		st, present, err := ap.dir.stat(path)
		if err != nil {
			return fmt.Errorf("stat %s: %w", ap.dir.join(path), err)
		}
		trusted := r != nil && present && st == r.stamp
		ap.act(p, decide(w, r, trusted, present, list, ap.keepDeleted), w, r, present)
		return nil
	}
	var err error
	if !list && (n.fetch+n.deletes)*lookupCost < inventorySize(ap.state) {
		err = ap.lookupEach(wants, visit)
	} else {
		err = join(wants, ap.records(), wantPath, storedPath, visit)
	}
	if werr := p.wait(); err == nil {
		err = werr
	}
	return err
}

// lookupCost is what finding one record by bisecting the inventory costs,
// in bytes of the inventory scanned instead: some twenty probes, each
// about as dear as reading one line (some 150 bytes) of a scan.
const lookupCost = 20 * 150

// lookupEach calls visit with each want and its record, found by lookup.
func (ap *applier) lookupEach(wants iter.Seq2[want, error], visit func(*want, *storedRecord) error) error {
	f, err := openFinder(ap.state)
	if err != nil {
		return err
	}
	defer f.Close()
	for w, err := range wants {
		if err != nil {
			return err
		}
		stored, err := f.find(w.path)
		if err != nil {
			return err
		}
		if err := visit(&w, stored); err != nil {
			return err
		}
	}
	return nil
}

// act carries out one decision; fetches go to the pool's workers.
// present says whether a file is at the path.
func (ap *applier) act(p *pool, a action, w *want, r *record, present bool) {
	if ap.dryRun {
		ap.reportDryRun(a, w, r)
		return
	}
	switch a {
	case actKeep:
		if w != nil {
			ap.rep.count(&ap.sum.Unchanged)
		}
	case actRecord:
		rec := *r
		rec.lastmod = w.fix.lastmod
		if w.change != "" {
			rec.changed = w.at
		}
		ap.rep.count(&ap.sum.Unchanged)
		p.fatal(ap.inv.put(&rec))
	case actDelete:
		path := pathOf(w, r)
		if err := ap.dir.remove(path); err != nil {
			ap.rep.event(Event{Kind: EventFailed, Path: path, Err: fmt.Errorf("remove %s: %w", ap.dir.join(path), err)})
			return
		}
		p.fatal(ap.inv.del(path))
		ap.rep.event(Event{Kind: EventDeleted, Path: path})
	case actForget:
		p.fatal(ap.inv.del(r.path))
	case actFetch, actCheck:
		w := *w
		check := a == actCheck
		p.run(func(ctx context.Context) error { return ap.land(ctx, &w, check, present) })
	}
}

// reportDryRun reports what act would do.
func (ap *applier) reportDryRun(a action, w *want, r *record) {
	switch a {
	case actKeep, actRecord:
		if w != nil {
			ap.rep.count(&ap.sum.Unchanged)
		}
	case actDelete:
		ap.rep.event(Event{Kind: EventDeleted, Path: pathOf(w, r)})
	case actFetch, actCheck:
		ap.rep.event(Event{Kind: EventFetched, Path: w.path, URL: w.loc, Bytes: max(w.fix.length, 0)})
	}
}

// land makes the file of w right: with check, the file there is kept when
// its bytes match w's digests; else it is fetched. A resource that cannot
// be fetched and verified is reported, and the sync goes on; only an
// error of the state stops it.
func (ap *applier) land(ctx context.Context, w *want, check, replace bool) error {
	if check {
		if rec, ok := ap.adopt(w); ok {
			ap.rep.count(&ap.sum.Unchanged)
			return ap.inv.put(&rec)
		}
	}
	rec, err := ap.fetch(ctx, w, replace)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		ap.rep.event(Event{Kind: EventFailed, Path: w.path, URL: w.loc, Err: err})
		return nil
	}
	if err := ap.inv.put(&rec); err != nil {
		return err
	}
	ap.rep.event(Event{Kind: EventFetched, Path: w.path, URL: w.loc, Bytes: rec.length})
	return nil
}

// adopt returns the record of the file at w's path when its bytes match
// w's digests and length.
func (ap *applier) adopt(w *want) (record, bool) {
	f, err := ap.dir.open(w.path)
	if err != nil {
		return record{}, false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return record{}, false
	}
	v, err := hashReader(f, &w.fix)
	if err != nil || v.check(w.loc, &w.fix) != nil {
		return record{}, false
	}
	return ap.recordOf(w, v, stampOf(info)), true
}

// recordOf returns the record of w's file, verified by v.
func (ap *applier) recordOf(w *want, v *verifier, st stamp) record {
	rec := record{path: w.path, length: v.n, sums: v.sums(), lastmod: w.fix.lastmod, stamp: st}
	if w.change != "" {
		rec.changed = w.at
	}
	return rec
}

// fetch fetches w's resource, verifies it and places it, trying again as
// the client allows.
func (ap *applier) fetch(ctx context.Context, w *want, replace bool) (record, error) {
	var rec record
	err := ap.c.retry(ctx, func() error {
		resp, err := ap.c.get(ctx, w.loc, nil)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body := io.Reader(resp.Body)
		if w.fix.length >= 0 {
			if resp.ContentLength >= 0 && resp.ContentLength != w.fix.length {
				return &MismatchError{URL: w.loc, What: "length", Want: fmt.Sprint(w.fix.length), Got: fmt.Sprint(resp.ContentLength)}
			}
			body = io.LimitReader(body, w.fix.length+1) // one byte more tells a longer body
		}
		rec, err = ap.place(w, body, replace)
		return err
	})
	return rec, err
}

// copyBuffers are the buffers bytes are copied through.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// place copies body into a temporary file of DIR, through a verifier of
// w's fixity, and renames it into place only when it matches: bad bytes
// never reach w's path.
func (ap *applier) place(w *want, body io.Reader, replace bool) (record, error) {
	f, err := ap.dir.createTemp(w.path, replace)
	if err != nil {
		return record{}, fmt.Errorf("write %s: %w", ap.dir.join(w.path), err)
	}
	v := newVerifier(&w.fix)
	buf := copyBuffers.Get().(*[]byte)
	_, err = io.CopyBuffer(io.MultiWriter(f, v), body, *buf)
	copyBuffers.Put(buf)
	if err == nil {
		err = v.check(w.loc, &w.fix)
	}
	if err == nil && !w.fix.lastmod.IsZero() {
		err = f.setMtime(w.fix.lastmod)
	}
	if err != nil {
		ap.dir.discard(f)
		return record{}, err
	}
	st, err := ap.dir.place(f, w.path)
	if err != nil {
		return record{}, err
	}
	return ap.recordOf(w, v, st), nil
}

// pool runs jobs on a bounded number of workers. The first error a job
// returns stops the pool: jobs report their resources' failures
// themselves, and return only what must end the sync.
type pool struct {
	ctx    context.Context
	cancel context.CancelFunc
	jobs   chan func(context.Context) error
	wg     sync.WaitGroup

	mu    sync.Mutex
	first error
}

func newPool(ctx context.Context, workers int) *pool {
	ctx, cancel := context.WithCancel(ctx)
	p := &pool{ctx: ctx, cancel: cancel, jobs: make(chan func(context.Context) error)}
	for range workers {
		p.wg.Go(func() {
			for job := range p.jobs {
				if p.ctx.Err() == nil {
					p.fatal(job(p.ctx))
				}
			}
		})
	}
	return p
}

// run hands job to a worker, waiting for one to be free.
func (p *pool) run(job func(context.Context) error) {
	select {
	case p.jobs <- job:
	case <-p.ctx.Done():
	}
}

// fatal stops the pool with err, unless it is nil.
func (p *pool) fatal(err error) {
	if err == nil {
		return
	}
	p.mu.Lock()
	if p.first == nil {
		p.first = err
	}
	p.mu.Unlock()
	p.cancel()
}

// err returns the error that stopped the pool, or the context's.
func (p *pool) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.first != nil {
		return p.first
	}
	return p.ctx.Err()
}

// wait waits for the jobs handed over and returns what stopped the pool.
func (p *pool) wait() error {
	close(p.jobs)
	p.wg.Wait()
	err := p.err()
	p.cancel()
	return err
}
