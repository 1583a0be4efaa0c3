package deploy

import (
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"time"

	"github.com/rsgen/rsgen/layout"
)

// task is one write of a deploy.
type task struct {
	obj  Object
	file localFile // as the scan found it, for openScanned
	// reheader: the store holds the bytes already; only the headers
	// change, and are applied without sending the bytes again.
	reheader bool
	// ifAbsent: the key is new and the object immutable, so it is written
	// with If-None-Match: * and never replaces anything.
	ifAbsent bool
	// check: an interrupted deploy may have made this write already (the
	// manifest has the key pending with this very object): the store is
	// asked first, and the write is skipped when it holds the object.
	check bool
}

// plan is what a deploy does: writes by step of publication, then deletes.
// It is made by one pass over the output's file list and the manifest,
// both sorted by path, and keeps in memory only counts and the writes of
// documents (a step's waves need them all; they are few): the writes of
// other files, the keys to delete and the next manifests are in files of
// its folder, removed by close.
type plan struct {
	dir   string
	steps [layout.NumSteps]StepSummary
	// docs are the writes of documents (isDocument), by step; the
	// others are in the step's spill file (spillName), and spilled
	// counts them.
	docs      [layout.NumSteps][]*task
	spilled   [layout.NumSteps]int
	deletes   int // keys deleted at the end, in the deletes file
	deferred  int // keys gone from the output, deleted once their grace period is over
	unchanged int // files the store holds as they are
	// changed: the next manifest differs from the one read. Every write
	// and every delete changes it; so may a change of headers alone on a
	// store that keeps none, or a key that came back.
	changed bool
	// checks counts the writes an interrupted deploy may have made
	// already (task.check), which the steps ask the store about as they
	// come to them.
	checks int
	// final is the manifest after the deploy; pending, the one stored
	// before the first write, with the keys the plan writes pending. Both
	// are finished into the plan's folder when needed.
	final, pending *manifestWriter
}

// maxCopySize is the largest object S3 copies in one request; the headers
// of a larger one are re-applied by uploading it again.
const maxCopySize = 5 << 30

// planner makes a plan.
type planner struct {
	p            *plan
	policy       HeaderPolicy
	keepsHeaders bool
	now          time.Time
	grace        time.Duration
	writes       [layout.NumSteps]*spillWriter
	deletes      *spillWriter
}

// makePlan diffs the output's files against the manifest m (nil: the
// store has none), in one pass over both, and puts its files in the
// folder dir: a file whose key is new, whose bytes changed, or that an
// unfinished deploy meant to write is uploaded; one whose headers alone
// changed is re-headed (on a store that keeps headers); the others are
// left alone. A key of m that the output no longer has is deleted, once
// grace has passed since now (retired keys remember when they left).
func makePlan(files *fileListReader, m *manifestReader, policy HeaderPolicy, keepsHeaders bool, now time.Time, grace time.Duration, dir string) (*plan, error) {
	pl := &planner{p: &plan{dir: dir}, policy: policy, keepsHeaders: keepsHeaders, now: now, grace: grace}
	err := pl.merge(files, m)
	if cerr := pl.closeSpills(); err == nil {
		err = cerr
	}
	if err != nil {
		pl.p.close()
		return nil, err
	}
	return pl.p, nil
}

// merge reads the files and the entries in step, in the order of their
// paths, and plans each path.
func (pl *planner) merge(files *fileListReader, m *manifestReader) error {
	if err := pl.create(); err != nil {
		return err
	}
	nextEntry := func() (*entry, error) {
		if m == nil {
			return nil, nil
		}
		return m.next()
	}
	f, ferr := files.next()
	e, merr := nextEntry()
	for {
		if ferr != nil {
			return fmt.Errorf("read the output's file list: %w", ferr)
		}
		if merr != nil {
			return merr
		}
		var err error
		switch {
		case f == nil && e == nil:
			return nil
		case e == nil || f != nil && f.rel < e.Key:
			err = pl.file(f, nil)
			f, ferr = files.next()
		case f == nil || e.Key < f.rel:
			err = pl.gone(e)
			e, merr = nextEntry()
		default:
			err = pl.file(f, e)
			f, ferr = files.next()
			e, merr = nextEntry()
		}
		if err != nil {
			return err
		}
	}
}

// create starts the files of the plan that every plan has.
func (pl *planner) create() error {
	var err error
	if pl.p.final, err = createManifest(filepath.Join(pl.p.dir, "final.body")); err != nil {
		return err
	}
	if pl.p.pending, err = createManifest(filepath.Join(pl.p.dir, "pending.body")); err != nil {
		return err
	}
	pl.deletes, err = createSpill(filepath.Join(pl.p.dir, "deletes"))
	return err
}

// file plans the output file f, which the manifest has as e (nil: new).
func (pl *planner) file(f *localFile, e *entry) error {
	obj := f.object(pl.policy)
	t := &task{obj: obj, file: *f}
	switch {
	case e == nil:
		t.ifAbsent = obj.Headers.Immutable()
	case e.status == pending || e.Size != obj.Size || e.SHA256 != obj.SHA256:
	case e.Headers != obj.Headers && pl.keepsHeaders:
		t.reheader = obj.Size <= maxCopySize
	default:
		pl.p.unchanged++
		return pl.record(e, &entry{Object: obj}, e)
	}
	if e != nil && e.status == pending && e.Object.same(&obj) {
		t.check = true
		pl.p.checks++
	}
	if err := pl.write(t); err != nil {
		return err
	}
	return pl.record(e, &entry{Object: obj}, &entry{Object: obj, status: pending})
}

// gone plans the key of e, which the output no longer has.
func (pl *planner) gone(e *entry) error {
	since := pl.now.Unix()
	if e.status == retired {
		since = e.since
	}
	if time.Duration(pl.now.Unix()-since)*time.Second >= pl.grace {
		pl.p.deletes++
		pl.deletes.putString(e.Key)
		return pl.record(e, nil, e)
	}
	pl.p.deferred++
	return pl.record(e, &entry{Object: e.Object, status: retired, since: since}, e)
}

// record puts a key into the next manifests: old is its entry in the
// manifest read, final and pending its entries after the deploy and during
// it (nil: none).
func (pl *planner) record(old, final, pending *entry) error {
	if old == nil || final == nil || *old != *final {
		pl.p.changed = true
	}
	if final != nil {
		if err := pl.p.final.add(final); err != nil {
			return err
		}
	}
	return pl.p.pending.add(pending)
}

// write adds t to the writes of its step: in memory for a document, in
// the step's spill file for any other file.
func (pl *planner) write(t *task) error {
	step := layout.PublishStep(t.obj.Key)
	st := &pl.p.steps[step]
	if t.reheader {
		st.Reheaders++
	} else {
		st.Uploads++
		st.Bytes += t.obj.Size
	}
	if isDocument(t.obj.Key) {
		pl.p.docs[step] = append(pl.p.docs[step], t)
		return nil
	}
	w := pl.writes[step]
	if w == nil {
		var err error
		if w, err = createSpill(pl.p.spillName(step)); err != nil {
			return err
		}
		pl.writes[step] = w
	}
	pl.p.spilled[step]++
	putTask(w, t)
	return nil
}

// closeSpills closes the spill files the plan wrote.
func (pl *planner) closeSpills() error {
	var err error
	for _, w := range append(pl.writes[:], pl.deletes) {
		if w == nil {
			continue
		}
		if cerr := w.close(); err == nil {
			err = cerr
		}
	}
	return err
}

// spillName is the file of the writes of step that are not documents.
func (p *plan) spillName(step layout.Step) string {
	return filepath.Join(p.dir, fmt.Sprintf("writes-%d", step))
}

// putTask writes t to a spill file.
func putTask(w *spillWriter, t *task) {
	w.putString(t.obj.Key)
	w.putInt(t.obj.Size)
	w.put(t.obj.SHA256[:])
	w.putString(t.obj.Headers.ContentType)
	w.putString(t.obj.Headers.CacheControl)
	w.putInt(t.file.mtime)
	w.putUint(t.file.ino)
	var flags uint64
	if t.reheader {
		flags |= 1
	}
	if t.ifAbsent {
		flags |= 2
	}
	if t.check {
		flags |= 4
	}
	w.putUint(flags)
}

// readTask reads a task putTask wrote.
func readTask(r *spillReader) *task {
	t := &task{}
	t.obj.Key = r.string()
	t.obj.Size = r.int()
	r.bytes(t.obj.SHA256[:])
	t.obj.Headers.ContentType = r.string()
	t.obj.Headers.CacheControl = r.string()
	t.file = localFile{rel: t.obj.Key, size: t.obj.Size, sum: t.obj.SHA256, mtime: r.int(), ino: r.uint()}
	flags := r.uint()
	t.reheader, t.ifAbsent, t.check = flags&1 != 0, flags&2 != 0, flags&4 != 0
	return t
}

// tasks counts the writes of the plan.
func (p *plan) tasks() int {
	n := 0
	for _, st := range p.steps {
		n += st.Uploads + st.Reheaders
	}
	return n
}

// spilledWrites calls yield with the writes of step that are not
// documents, read back from the spill file; it stops at the first error,
// which it returns through errp.
func (p *plan) spilledWrites(step layout.Step, errp *error) iter.Seq[*task] {
	return func(yield func(*task) bool) {
		if p.spilled[step] == 0 {
			return
		}
		r, err := openSpill(p.spillName(step))
		if err != nil {
			*errp = err
			return
		}
		for r.more() {
			t := readTask(r)
			if r.err != nil {
				continue
			}
			if !yield(t) {
				break
			}
		}
		*errp = r.close()
	}
}

// deletedKeys calls fn with the keys to delete, at most batch at a time.
func (p *plan) deletedKeys(batch int, fn func([]string) error) error {
	r, err := openSpill(filepath.Join(p.dir, "deletes"))
	if err != nil {
		return err
	}
	keys := make([]string, 0, batch)
	for r.more() {
		if keys = append(keys, r.string()); len(keys) == batch {
			if err := fn(keys); err != nil {
				r.close()
				return err
			}
			keys = keys[:0]
		}
	}
	if err := r.close(); err != nil {
		return err
	}
	if len(keys) > 0 {
		return fn(keys)
	}
	return nil
}

// manifestFile finishes the manifest w into the plan's folder as name,
// once, and returns its path.
func (p *plan) manifestFile(w *manifestWriter, name string) (string, error) {
	path := filepath.Join(p.dir, name)
	return path, w.finish(path)
}

// close removes the plan's files.
func (p *plan) close() {
	for _, w := range []*manifestWriter{p.final, p.pending} {
		if w != nil {
			w.abort()
		}
	}
	os.RemoveAll(p.dir)
}
