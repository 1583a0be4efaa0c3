package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rsgen/rsgen/internal/chunked"
	"github.com/rsgen/rsgen/layout"
)

// readManifest reads the store's manifest through the copy cached in the
// state folder: when the store's is still the cached one (by its entity
// tag), the read costs one request and no bytes. A store without one has
// nothing rsgen published.
func (d *deployer) readManifest(ctx context.Context) error {
	cached := filepath.Join(d.dir, manifestName)
	tag := ""
	if _, err := os.Stat(cached); err == nil {
		data, err := readFileIfExists(filepath.Join(d.dir, "etag"))
		if err != nil {
			return fmt.Errorf("state folder: %w", err)
		}
		tag = strings.TrimSpace(string(data))
	}
	tmp, err := os.CreateTemp(d.dir, layout.TempPrefix+"manifest-*")
	if err != nil {
		return fmt.Errorf("state folder: %w", err)
	}
	newTag, err := d.store.ReadMeta(ctx, manifestName, tag, tmp)
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("state folder: %w", cerr)
	}
	switch {
	case errors.Is(err, ErrNotModified):
		d.manifest, d.etag = cached, newTag
	case errors.Is(err, ErrNotExist):
		d.manifest, d.etag = "", ""
	case err != nil:
		os.Remove(tmp.Name())
		return err
	default:
		if err := os.Rename(tmp.Name(), cached); err != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("state folder: %w", err)
		}
		d.cacheTag(newTag)
		d.manifest, d.etag = cached, newTag
	}
	os.Remove(tmp.Name())
	return nil
}

// cacheTag records the entity tag of the manifest cached in the state
// folder. It is written after the manifest, so that a failure between
// the two leaves an older tag, which costs the next deploy the manifest's
// bytes and nothing else.
func (d *deployer) cacheTag(tag string) {
	writeAtomic(filepath.Join(d.dir, "etag"), func(w io.Writer) error { _, err := io.WriteString(w, tag+"\n"); return err })
}

// saveManifest writes the manifest at path to the store, and makes it the
// cached one.
func (d *deployer) saveManifest(ctx context.Context, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("state folder: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("state folder: %w", err)
	}
	tag, err := d.store.WriteMeta(ctx, manifestName, f, info.Size())
	if err != nil {
		return err
	}
	// The old tag goes first: a tag that fails to be written must not be
	// left beside a manifest that is not its own, or a store whose
	// manifest came back to the old bytes (an S3 entity tag is their MD5)
	// would answer "not modified" to the wrong cached manifest.
	os.Remove(filepath.Join(d.dir, "etag"))
	if os.Rename(path, filepath.Join(d.dir, manifestName)) == nil {
		d.cacheTag(tag)
	}
	return nil
}

// publish runs the plan under the store's lock: it reads the manifest
// again (another deploy may have finished since it was read), removes
// what killed deploys left, skips what an interrupted deploy wrote
// already, records what it is about to write as pending, writes step by
// step, deletes, and records the result.
func (d *deployer) publish(ctx context.Context, p *plan) error {
	tag := d.etag
	if err := d.readManifest(ctx); err != nil {
		return err
	}
	if d.etag != tag {
		var err error
		if p, err = d.plan(); err != nil {
			return err
		}
		defer p.close()
		if err := d.checkDeletes(p); err != nil {
			return err
		}
	}
	d.tidy(ctx, p)
	if p.tasks() > 0 {
		path, err := p.manifestFile(p.pending, "pending")
		if err != nil {
			return fmt.Errorf("state folder: %w", err)
		}
		if err := d.saveManifest(ctx, path); err != nil {
			return err
		}
	}
	// A path that changed between file and folder: the old file, or the
	// old folder's files, go first, the least time before the new take
	// their place; a Destination meanwhile finds the old resource gone
	// while the lists still name it, as it would a moment later.
	if err := d.delete(ctx, &p.cleared); err != nil {
		return fmt.Errorf("clear the way for the files whose paths changed between file and folder: %w (nothing else was written; the next deploy completes this one)", err)
	}
	for step := range layout.NumSteps {
		if err := d.runStep(ctx, p, step); err != nil {
			return fmt.Errorf("step %q: %w (later steps were not started; the next deploy completes this one)", step, err)
		}
	}
	if err := d.delete(ctx, &p.deleted); err != nil {
		return fmt.Errorf("deletes: %w (the next deploy completes them)", err)
	}
	path, err := p.manifestFile(p.final, "final")
	if err != nil {
		return fmt.Errorf("state folder: %w", err)
	}
	return d.saveManifest(ctx, path)
}

// tidy removes what the interrupted deploys whose keys the manifest has
// pending left on the store, under its lock. A failure costs nothing but
// files that servers configured by rsgen never serve: it is a warning.
func (d *deployer) tidy(ctx context.Context, p *plan) {
	err := d.store.Tidy(ctx, p.pendingDirs.All())
	if err == nil {
		err = p.pendingDirs.Err()
	}
	if err != nil {
		d.opts.Notify(Event{Kind: EventWarning, Msg: err.Error()})
	}
}

// delete deletes the objects of list (of the plan), reporting those the
// store kept as warnings.
func (d *deployer) delete(ctx context.Context, list *chunked.Strings) error {
	if list.Len() == 0 {
		return nil
	}
	kept := 0
	keep := func(key, why string) {
		kept++
		d.opts.Notify(Event{Kind: EventWarning, Path: key, Msg: why})
	}
	if err := deletedObjects(list, deleteBatch, func(objs []Object) error { return d.store.Delete(ctx, objs, keep) }); err != nil {
		return err
	}
	d.sum.Deletes -= kept
	d.opts.Notify(Event{Kind: EventDeleted, Count: list.Len() - kept})
	return nil
}

// deleteBatch is how many keys a deploy hands the store to delete at a
// time: as many as S3 deletes in one request.
const deleteBatch = 1000

// landedBefore reports whether an interrupted deploy made the write t
// already, asking the store (one HEAD) when the plan says it may have:
// the deploy that resumes it then leaves the object alone, and counts it
// as found rather than written.
func (d *deployer) landedBefore(ctx context.Context, step layout.Step, t *task) (bool, error) {
	if !t.check {
		return false, nil
	}
	got, err := d.store.Stat(ctx, t.obj.Key)
	if errors.Is(err, ErrNotExist) {
		return false, nil
	}
	if err != nil || !d.holds(got, &t.obj) {
		return false, err
	}
	d.sumMu.Lock()
	st := &d.sum.Steps[step]
	if t.reheader {
		st.Reheaders--
	} else {
		st.Uploads--
		st.Bytes -= t.obj.Size
	}
	d.sum.Resumed++
	d.sum.Unchanged++
	d.sumMu.Unlock()
	found := Event{Kind: EventFound, Step: step, Path: t.obj.Key}
	if !t.reheader {
		found.Bytes = t.obj.Size
	}
	d.opts.Notify(found)
	return true, nil
}

// holds reports whether the object the store has is want. An object
// published with no Content-Type has the store's default one.
func (d *deployer) holds(got, want *Object) bool {
	if got.Size != want.Size || got.SHA256 != want.SHA256 {
		return false
	}
	if !d.store.KeepsHeaders() {
		return true
	}
	return got.Headers.CacheControl == want.Headers.CacheControl &&
		(want.Headers.ContentType == "" || got.Headers.ContentType == want.Headers.ContentType)
}

// runStep writes the tasks of one step, and stops at the first failure:
// first the files that are not documents, streamed from the plan's list
// (none of them waits for anything, and documents may wait for them),
// then the documents in waves (see waves).
func (d *deployer) runStep(ctx context.Context, p *plan, step layout.Step) error {
	st := p.steps[step]
	if st.Uploads+st.Reheaders == 0 {
		return nil
	}
	d.opts.Notify(Event{Kind: EventStep, Step: step, Count: st.Uploads + st.Reheaders, Bytes: st.Bytes})
	write := func(ctx context.Context, t *task) error { return d.write(ctx, step, t) }
	var readErr error
	if err := parallel(ctx, p.spilledWrites(step, &readErr), write); err != nil {
		return err
	}
	if readErr != nil {
		return fmt.Errorf("state folder: %w", readErr)
	}
	ws, cyclic, err := waves(d.out, d.opts.BaseURL, p.docs[step])
	if err != nil {
		return err
	}
	if len(cyclic) > 0 {
		d.opts.Notify(Event{Kind: EventWarning, Msg: fmt.Sprintf("%d documents of step %q reference each other in a cycle, and are written together: %s",
			len(cyclic), step, strings.Join(cyclic, ", "))})
	}
	for _, w := range ws {
		if err := parallel(ctx, slices.Values(w), write); err != nil {
			return err
		}
	}
	return nil
}

// write makes the store hold one task's object.
func (d *deployer) write(ctx context.Context, step layout.Step, t *task) error {
	if done, err := d.landedBefore(ctx, step, t); done || err != nil {
		return err
	}
	if t.reheader {
		if err := d.store.Reheader(ctx, &t.obj); err != nil {
			return err
		}
		d.opts.Notify(Event{Kind: EventWritten, Step: step, Path: t.obj.Key})
		return nil
	}
	f, err := d.openScanned(&t.file)
	if err != nil {
		return err
	}
	defer f.Close()
	err = d.store.Put(ctx, &t.obj, f, t.ifAbsent)
	if errors.Is(err, ErrExists) {
		err = d.alreadyThere(ctx, &t.obj)
	}
	if err != nil {
		return err
	}
	d.opts.Notify(Event{Kind: EventWritten, Step: step, Path: t.obj.Key, Bytes: t.obj.Size})
	return nil
}

// openScanned opens an output file for upload, and checks that it is the
// file the deploy read: a build that replaced it since fails the deploy
// rather than publish bytes that disagree with the plan.
func (d *deployer) openScanned(lf *localFile) (*os.File, error) {
	f, err := openRegular(d.out, lf.rel)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read %s: %w", lf.rel, err)
	}
	now := localFile{rel: lf.rel}
	now.setStat(info)
	if now.size != lf.size || now.mtime != lf.mtime || now.ino != lf.ino {
		f.Close()
		return nil, fmt.Errorf("read %s: %w", lf.rel, errChanged)
	}
	return f, nil
}

// alreadyThere handles an immutable object found where the manifest had
// none: an interrupted deploy wrote it, or the manifest was lost. The
// same object is fine; other bytes are never replaced.
func (d *deployer) alreadyThere(ctx context.Context, want *Object) error {
	got, err := d.store.Stat(ctx, want.Key)
	if err != nil {
		return err
	}
	if !d.holds(got, want) {
		return fmt.Errorf("%s is on %s with other bytes or headers, and immutable: rsgen never replaces it (delete it from the store if that is meant)", want.Key, d.store)
	}
	return nil
}
