package deploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/rsgen/rsgen/layout"
)

// readManifest reads the store's manifest through the copy cached in the
// state folder: when the store's is still the cached one (by its entity
// tag), the read costs one request and no bytes. A store without one has
// nothing rsgen published.
func (d *deployer) readManifest(ctx context.Context) error {
	cached, err := readFileIfExists(filepath.Join(d.dir, manifestName))
	if err != nil {
		return fmt.Errorf("state folder: %w", err)
	}
	tag := ""
	if cached != nil {
		data, err := readFileIfExists(filepath.Join(d.dir, "etag"))
		if err != nil {
			return fmt.Errorf("state folder: %w", err)
		}
		tag = strings.TrimSpace(string(data))
	}
	var body bytes.Buffer
	newTag, err := d.store.ReadMeta(ctx, manifestName, tag, &body)
	data := body.Bytes()
	switch {
	case errors.Is(err, ErrNotModified):
		data = cached
	case errors.Is(err, ErrNotExist):
		d.manifest, d.etag = newManifest(), ""
		return nil
	case err != nil:
		return err
	default:
		d.cacheManifest(data, newTag)
	}
	m, err := decodeManifest(data)
	if err != nil {
		return fmt.Errorf("%s: %w", d.store, err)
	}
	d.manifest, d.etag = m, newTag
	return nil
}

// cacheManifest keeps the store's manifest and its tag in the state
// folder. A failure costs the next deploy the manifest's bytes, nothing
// else.
func (d *deployer) cacheManifest(data []byte, tag string) {
	if writeAtomic(filepath.Join(d.dir, "etag"), func(w io.Writer) error { _, err := io.WriteString(w, tag+"\n"); return err }) != nil {
		return
	}
	writeAtomic(filepath.Join(d.dir, manifestName), func(w io.Writer) error { _, err := w.Write(data); return err })
}

// saveManifest writes m to the store and the cache.
func (d *deployer) saveManifest(ctx context.Context, m *manifest) error {
	data := m.encode()
	tag, err := d.store.WriteMeta(ctx, manifestName, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return err
	}
	d.cacheManifest(data, tag)
	d.manifest, d.etag = m, tag
	return nil
}

// equalManifests reports whether a and b say the same.
func equalManifests(a, b *manifest) bool {
	if len(a.entries) != len(b.entries) {
		return false
	}
	for k, e := range a.entries {
		if o := b.entries[k]; o == nil || *o != *e {
			return false
		}
	}
	return true
}

// publish runs the plan under the store's lock: it reads the manifest
// again (another deploy may have finished since it was read), skips what
// an interrupted deploy wrote already, records what it is about to write
// as pending, writes step by step, deletes, and records the result.
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
		if err := d.checkDeletes(p); err != nil {
			return err
		}
	}
	if err := d.resume(ctx, p); err != nil {
		return err
	}
	if p.tasks() > 0 {
		if err := d.saveManifest(ctx, p.pendingManifest(d.manifest)); err != nil {
			return err
		}
	}
	for step := range layout.NumSteps {
		if err := d.runStep(ctx, step, p.steps[step]); err != nil {
			return fmt.Errorf("step %q: %w (later steps were not started; the next deploy completes this one)", step, err)
		}
	}
	if len(p.deletes) > 0 {
		if err := d.store.Delete(ctx, p.deletes); err != nil {
			return fmt.Errorf("deletes: %w (the next deploy completes them)", err)
		}
		d.opts.Notify(Event{Kind: EventDeleted, Count: len(p.deletes)})
	}
	return d.saveManifest(ctx, p.final)
}

// resume drops from the plan the writes that an interrupted deploy made
// already: a key the manifest has pending with the very bytes and headers
// planned is asked about (one HEAD), and left alone when it is there.
func (d *deployer) resume(ctx context.Context, p *plan) error {
	var check []*task
	for _, tasks := range p.steps {
		for _, t := range tasks {
			if e := d.manifest.entries[t.obj.Key]; e != nil && e.status == pending && e.Object.same(&t.obj) {
				check = append(check, t)
			}
		}
	}
	var mu sync.Mutex
	landed := map[*task]bool{}
	err := parallel(ctx, slices.Values(check), func(ctx context.Context, t *task) error {
		got, err := d.store.Stat(ctx, t.obj.Key)
		if errors.Is(err, ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if d.holds(got, &t.obj) {
			mu.Lock()
			landed[t] = true
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		return err
	}
	for step, tasks := range p.steps {
		kept := tasks[:0]
		for _, t := range tasks {
			if !landed[t] {
				kept = append(kept, t)
			}
		}
		p.steps[step] = kept
	}
	d.count(p)
	d.sum.Resumed = len(landed)
	d.sum.Unchanged += len(landed)
	return nil
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

// runStep writes the tasks of one step, in waves (see waves), and stops
// at the first failure.
func (d *deployer) runStep(ctx context.Context, step layout.Step, tasks []*task) error {
	if len(tasks) == 0 {
		return nil
	}
	st := d.sum.Steps[step]
	d.opts.Notify(Event{Kind: EventStep, Step: step, Count: len(tasks), Bytes: st.Bytes})
	ws, cyclic, err := waves(d.out, d.opts.BaseURL, tasks)
	if err != nil {
		return err
	}
	if len(cyclic) > 0 {
		d.opts.Notify(Event{Kind: EventWarning, Msg: fmt.Sprintf("%d documents of step %q reference each other in a cycle, and are written together: %s",
			len(cyclic), step, strings.Join(cyclic, ", "))})
	}
	for _, w := range ws {
		err := parallel(ctx, slices.Values(w), func(ctx context.Context, t *task) error { return d.write(ctx, step, t) })
		if err != nil {
			return err
		}
	}
	return nil
}

// write makes the store hold one task's object.
func (d *deployer) write(ctx context.Context, step layout.Step, t *task) error {
	if t.reheader {
		if err := d.store.Reheader(ctx, &t.obj); err != nil {
			return err
		}
		d.opts.Notify(Event{Kind: EventWritten, Step: step, Path: t.obj.Key})
		return nil
	}
	f, err := d.openScanned(t.file)
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
