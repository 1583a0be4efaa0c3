package deploy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/rsgen/rsgen/internal/chunked"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/snapshot"
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
	// docs are the writes of documents (isDocument), by step; writes
	// the others, deleted the objects deleted at the end, and cleared
	// those deleted before the first write, which stand in the way of
	// the output's files (see planner.inTheWay), all encoded
	// (encodeTask): lists that move their full blocks into unnamed files
	// of the plan's folder (spillFile).
	docs             [layout.NumSteps][]*task
	writes           [layout.NumSteps]chunked.Strings
	deleted, cleared chunked.Strings
	// pendingDirs are the folders of the keys an interrupted deploy
	// meant to write, where it may have left temporary files (see
	// Store.Tidy); a folder is listed again only after another.
	pendingDirs chunked.Strings
	deferred    int // keys gone from the output, deleted once their grace period is over
	unchanged   int // files the store holds as they are
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
	// inTheWay reports whether a key the output no longer has stands in
	// the way of the output's files: a file where the output has a
	// folder, or a file below one of the output's files (a path that
	// changed between file and folder). A web root cannot hold both, nor
	// can S3-compatible services that keep objects as files; nil: none.
	inTheWay func(key string) bool
	now      time.Time
	grace    time.Duration
}

// makePlan diffs the output's files against the manifest m (nil: the
// store has none), in one pass over both, and puts its files in the
// folder dir: a file whose key is new, whose bytes changed, or that an
// unfinished deploy meant to write is uploaded; one whose headers alone
// changed is re-headed (on a store that keeps headers); the others are
// left alone. A key of m that the output no longer has is deleted, once
// grace has passed since now (retired keys remember when they left), or
// before the first write when inTheWay says it stands in the way.
func makePlan(files *fileListReader, m *manifestReader, policy HeaderPolicy, keepsHeaders bool, inTheWay func(string) bool, now time.Time, grace time.Duration, dir string) (*plan, error) {
	p := &plan{dir: dir}
	for step := range p.writes {
		p.writes[step].Spill = p.spillFile
	}
	p.deleted.Spill, p.cleared.Spill, p.pendingDirs.Spill = p.spillFile, p.spillFile, p.spillFile
	pl := &planner{p: p, policy: policy, keepsHeaders: keepsHeaders, inTheWay: inTheWay, now: now, grace: grace}
	if err := pl.merge(files, m); err != nil {
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
	lastPendingDir := ""
	nextEntry := func() (*entry, error) {
		if m == nil {
			return nil, nil
		}
		e, err := m.next()
		if dir := ""; e != nil && e.status == pending {
			if dir = path.Dir(e.Key); dir != lastPendingDir {
				pl.p.pendingDirs.Append(dir)
				lastPendingDir = dir
			}
		}
		return e, err
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
	pl.p.pending, err = createManifest(filepath.Join(pl.p.dir, "pending.body"))
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
	pl.write(t)
	return pl.record(e, &entry{Object: obj}, &entry{Object: obj, status: pending})
}

// gone plans the key of e, which the output no longer has. A key in the
// way of the output's files is deleted before the first write, whatever
// the grace period: the store cannot hold both.
func (pl *planner) gone(e *entry) error {
	if pl.inTheWay != nil && pl.inTheWay(e.Key) {
		pl.p.cleared.Append(encodeTask(&task{obj: e.Object}))
		return pl.record(e, nil, e)
	}
	since := pl.now.Unix()
	if e.status == retired {
		since = e.since
	}
	if time.Duration(pl.now.Unix()-since)*time.Second >= pl.grace {
		pl.p.deleted.Append(encodeTask(&task{obj: e.Object}))
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
// the step's list for any other file.
func (pl *planner) write(t *task) {
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
	} else {
		pl.p.writes[step].Append(encodeTask(t))
	}
}

// spillFile makes a file the plan's lists move their full blocks into:
// an unnamed file of the plan's folder.
func (p *plan) spillFile() (chunked.File, error) { return snapshot.UnnamedFile(p.dir) }

// encodeTask returns t as a string: its key first, so that the list of
// a step's writes, in the order of their keys, compresses each against the
// one before; then its headers, each after a NUL (no path or header holds
// one); then its SHA-256 and its numbers.
func encodeTask(t *task) string {
	b := append([]byte(t.obj.Key), 0)
	b = append(append(b, t.obj.Headers.ContentType...), 0)
	b = append(append(b, t.obj.Headers.CacheControl...), 0)
	b = append(b, t.obj.SHA256[:]...)
	b = binary.AppendVarint(b, t.obj.Size)
	b = binary.AppendVarint(b, t.file.mtime)
	b = binary.AppendUvarint(b, t.file.ino)
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
	return string(binary.AppendUvarint(b, flags))
}

// decodeTask returns the task encodeTask made s of.
func decodeTask(s string) (*task, error) {
	t := &task{}
	var ok1, ok2, ok3 bool
	t.obj.Key, s, ok1 = strings.Cut(s, "\x00")
	t.obj.Headers.ContentType, s, ok2 = strings.Cut(s, "\x00")
	t.obj.Headers.CacheControl, s, ok3 = strings.Cut(s, "\x00")
	if !ok1 || !ok2 || !ok3 || len(s) < len(t.obj.SHA256) {
		return nil, errors.New("a write of the plan is cut short")
	}
	s = s[copy(t.obj.SHA256[:], s):]
	b := []byte(s)
	var flags uint64
	var n int
	for _, v := range []*int64{&t.obj.Size, &t.file.mtime} {
		if *v, n = binary.Varint(b); n <= 0 {
			return nil, errors.New("a write of the plan is cut short")
		}
		b = b[n:]
	}
	for _, v := range []*uint64{&t.file.ino, &flags} {
		if *v, n = binary.Uvarint(b); n <= 0 {
			return nil, errors.New("a write of the plan is cut short")
		}
		b = b[n:]
	}
	t.file.rel, t.file.size, t.file.sum = t.obj.Key, t.obj.Size, t.obj.SHA256
	t.reheader, t.ifAbsent, t.check = flags&1 != 0, flags&2 != 0, flags&4 != 0
	return t, nil
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
// documents, read back from the plan's list; it stops at the first error,
// which it returns through errp.
func (p *plan) spilledWrites(step layout.Step, errp *error) iter.Seq[*task] {
	return func(yield func(*task) bool) {
		list := &p.writes[step]
		for s := range list.All() {
			t, err := decodeTask(s)
			if err != nil {
				*errp = err
				return
			}
			if !yield(t) {
				return
			}
		}
		*errp = list.Err()
	}
}

// deletedObjects calls fn with the objects of list (deleted or cleared),
// at most batch at a time.
func deletedObjects(list *chunked.Strings, batch int, fn func([]Object) error) error {
	objs := make([]Object, 0, batch)
	for s := range list.All() {
		t, err := decodeTask(s)
		if err != nil {
			return err
		}
		if objs = append(objs, t.obj); len(objs) == batch {
			if err := fn(objs); err != nil {
				return err
			}
			objs = objs[:0]
		}
	}
	if err := list.Err(); err != nil {
		return err
	}
	if len(objs) > 0 {
		return fn(objs)
	}
	return nil
}

// deletes counts the keys the plan deletes.
func (p *plan) deletes() int { return p.deleted.Len() + p.cleared.Len() }

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
	for step := range p.writes {
		p.writes[step].Close()
	}
	p.deleted.Close()
	p.cleared.Close()
	p.pendingDirs.Close()
	os.RemoveAll(p.dir)
}
