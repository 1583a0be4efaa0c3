package generator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"path"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
)

// versionsWriter publishes the kept versions of resources (versionplan.go
// says what they are): their mementos, copied from in and checked against
// the scan's fingerprint, so that a memento holds exactly the bytes whose
// hash was published (hard links would not do: an editor that writes in
// place would change the old version too), their TimeMaps and patches
// (timemaps.go). A resource's TimeMap and patches are written again only
// when its versions changed, or when the plan's recheck says the output
// may not be what the state says it is. The output files of versions stay
// out of the sink's list of outputs; what goes is in obsolete.
type versionsWriter struct {
	d   docWriter
	in  sources
	vp  *versionPlan
	now int64 // the build's time
	// sameSecond holds, when this build runs in the same second as the
	// last, the paths of the versions the last build first saw (true) and
	// of their folders (false): their mementos share this build's folder
	// of mementos (see mementoTaken).
	sameSecond map[string]bool
	// done is what the writer did, for the stages after it.
	done versionsWritten
	// whole and kept are reused from resource to resource.
	whole []bool
	kept  []snapshot.Record
}

// versionsWritten is what the versions writer did: the versions kept, the
// files that go, and what the documents and hosting files need to know.
type versionsWritten struct {
	file     *snapshot.RecordFile // the next state's versions; nil when none are kept
	obsolete []string             // output files of versions no longer kept, removed once the build's files are in place
	pruned   []string             // their copies in the state archive
	// watched are the version files of the plan's watched list: true once
	// this build publishes them. Those it does not publish are removed.
	watched map[string]bool
	// used are the folders of layout.VersionDirs this build publishes
	// into, for the hosting files.
	used  map[string]bool
	links versionLinks
}

// write keeps the versions of the resources of the scan's files, carries
// over those of the previous state prev, and writes the TimeMaps and
// patches. It runs before the documents that link to them are written.
func (vw *versionsWriter) write(ctx context.Context, prev *snapshot.State, files *snapshot.Records) (*versionsWritten, error) {
	vw.done = versionsWritten{watched: map[string]bool{}, used: map[string]bool{},
		links: versionLinks{kept: map[string][]int64{}, first: map[string]int64{}, patches: map[string]*rs.Link{}}}
	for _, rel := range vw.vp.watched {
		vw.done.watched[rel] = false
	}
	if !vw.vp.on {
		return &vw.done, nil
	}
	if err := vw.noteSameSecond(prev); err != nil {
		return nil, err
	}
	out := newRecordFile(vw.d.s, "the kept versions")
	if err := vw.merge(ctx, prev, files, out); err != nil {
		out.Close()
		return nil, err
	}
	if err := out.Finish(); err != nil {
		out.Close()
		return nil, err
	}
	vw.done.file = out
	return &vw.done, nil
}

// merge merges the previous build's versions with the scan's records,
// path by path in walk order, and appends the next build's versions to
// out.
func (vw *versionsWriter) merge(ctx context.Context, prev *snapshot.State, files *snapshot.Records, out *snapshot.RecordFile) error {
	next, stop := iter.Pull2(prev.Versions())
	defer stop()
	old := versionCursor{next: next}
	old.advance()
	nextFile, stopFiles := iter.Pull2(files.All())
	defer stopFiles()
	// file returns the next record whose versions are kept, or nil.
	file := func() (*snapshot.Record, error) {
		for {
			r, err, ok := nextFile()
			if !ok || err != nil {
				return r, err
			}
			if keep, _ := vw.d.s.versioned(r.Path); keep {
				return r, nil
			}
		}
	}
	cur, err := file()
	var group []snapshot.Record
	for {
		if err != nil {
			return err
		}
		if cur == nil && !old.ok {
			return old.failure()
		}
		p := old.head.Path
		if !old.ok || cur != nil && layout.ComparePaths(cur.Path, p) <= 0 {
			p = cur.Path
		}
		// A resource's versions are all read before any is acted on: one
		// missing would be taken for one no longer kept.
		if group = old.group(p, group[:0]); old.err != nil {
			return old.failure()
		}
		this := cur
		if cur != nil && cur.Path == p {
			cur, err = file()
		} else {
			this = nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := vw.keepResource(p, group, this, out); err != nil {
			return err
		}
	}
}

// versionCursor reads a state's versions one at a time.
type versionCursor struct {
	next func() (snapshot.Record, error, bool)
	head snapshot.Record // the next version, when ok
	ok   bool
	err  error
}

// errVersionsOrder: versions out of walk order, which no state rsgen
// writes holds.
var errVersionsOrder = errors.New("the state's versions are not in walk order")

func (c *versionCursor) advance() {
	last := c.head.Path
	var err error
	c.head, err, c.ok = c.next()
	switch {
	case err != nil:
		c.err, c.ok = err, false
	case c.ok && last != "" && layout.ComparePaths(c.head.Path, last) < 0:
		c.err, c.ok = errVersionsOrder, false
	}
}

// failure returns the error that stopped the reading, if any.
func (c *versionCursor) failure() error {
	if c.err != nil {
		return fmt.Errorf("kept versions: %w", c.err)
	}
	return nil
}

// group appends to vs the versions of the resource at p, which are next
// if it has any, and moves past them.
func (c *versionCursor) group(p string, vs []snapshot.Record) []snapshot.Record {
	for c.ok && c.head.Path == p {
		vs = append(vs, c.head)
		c.advance()
	}
	return vs
}

// keepResource keeps the versions of the resource at p: old, those of the
// previous build, and cur's, its record in this build, if it has one, as
// versionPlan.resource decides. It publishes them, its TimeMap and its
// patches, and appends them to out.
func (vw *versionsWriter) keepResource(p string, old []snapshot.Record, cur *snapshot.Record, out *snapshot.RecordFile) error {
	vw.d.w.ForgetVersions() // those of the resource before
	keep, patches := vw.d.s.versioned(p)
	whole, err := vw.carry(old, keep)
	if err != nil {
		return err
	}
	rv := vw.vp.resource(p, keep, patches, old, whole, cur, vw.kept[:0])
	vw.kept = rv.kept
	if rv.added >= 0 {
		if err := vw.writeMemento(&rv.kept[rv.added]); err != nil {
			return err
		}
	}
	vw.done.obsolete = append(vw.done.obsolete, rv.obsolete...)
	vw.done.pruned = append(vw.done.pruned, rv.pruned...)
	if len(rv.kept) == 0 {
		return nil
	}
	if err := vw.writeTimeMap(rv.kept, rv.timeMapStep); err != nil {
		return err
	}
	if err := vw.keepPatches(&rv); err != nil {
		return err
	}
	vw.done.links.note(vw.vp.eventSeen, rv.kept)
	for i := range rv.kept {
		out.Append(&rv.kept[i])
	}
	return nil
}

// carry publishes the versions of old, a resource's of the previous
// build, when keep says its set keeps them: trusted as they are, or whole
// in the output or the state archive. It reports which are whole; the
// others are lost, with a warning.
func (vw *versionsWriter) carry(old []snapshot.Record, keep bool) ([]bool, error) {
	vw.whole = vw.whole[:0]
	for _, v := range old {
		rel := layout.Memento(unixTime(v.Seen), v.Path)
		switch {
		case !keep:
			vw.whole = append(vw.whole, false)
			continue
		case vw.vp.trusted:
			vw.publish(rel, false)
			vw.whole = append(vw.whole, true)
			continue
		}
		_, ok, written, err := vw.d.k.restoreKept(rel, versionSums(&v))
		if err != nil {
			return nil, err
		}
		if !ok {
			vw.d.s.warn(WarnLost, v.Path, "kept version lost or damaged in both the state folder and the output folder; it cannot be made again and is no longer listed")
		} else {
			vw.publish(rel, written)
		}
		vw.whole = append(vw.whole, ok)
	}
	return vw.whole, nil
}

// publish records the version file rel, which this build publishes,
// written or not.
func (vw *versionsWriter) publish(rel string, written bool) {
	vw.d.w.Record(rel, written)
	vw.noteFile(rel)
}

// noteFile notes that this build publishes the version file rel (see
// watched and used).
func (vw *versionsWriter) noteFile(rel string) {
	if _, ok := vw.done.watched[rel]; ok {
		vw.done.watched[rel] = true
	}
	vw.done.used[versionUse(rel)] = true
}

// noteSameSecond fills sameSecond when this build runs in the same second
// as the last, prev (two builds of rsgen watch, a fixed --now).
func (vw *versionsWriter) noteSameSecond(prev *snapshot.State) error {
	if prev.LastBuild != vw.now {
		return nil
	}
	vw.sameSecond = map[string]bool{}
	for v, err := range prev.Versions() {
		if err != nil {
			return fmt.Errorf("kept versions: %w", err)
		}
		if v.Seen != vw.now {
			continue
		}
		vw.sameSecond[v.Path] = true
		for dir := path.Dir(v.Path); dir != "."; dir = path.Dir(dir) {
			if _, done := vw.sameSecond[dir]; done {
				break
			}
			vw.sameSecond[dir] = false
		}
	}
	return nil
}

// mementoTaken reports whether the memento of the version of the resource
// at p that this build first sees cannot be published: a version the last
// build first saw in the same second has its memento in the same folder,
// at a path one of which is a folder of the other (the path changed
// between file and folder). Both are kept, and the two URIs cannot both
// be served; a build a second later publishes the new one at its own.
func (vw *versionsWriter) mementoTaken(p string) bool {
	if isVersion, ok := vw.sameSecond[p]; ok && !isVersion {
		return true
	}
	for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
		if vw.sameSecond[dir] {
			return true
		}
	}
	return false
}

// writeMemento copies the current version of r to its time-specific URI,
// staged, checking the bytes against what the documents say of the
// version (copyVersion).
func (vw *versionsWriter) writeMemento(r *snapshot.Record) error {
	rel := layout.Memento(unixTime(r.Seen), r.Path)
	if vw.mementoTaken(r.Path) {
		return fmt.Errorf("keep version %s: the last build, in the same second, kept a version whose memento takes its place (%s changed between file and folder); build again a second later", vw.d.w.Path(rel), r.Path)
	}
	if err := vw.d.w.WriteNew(rel, func(w io.Writer) error { return vw.in.copyVersion(w, r) }); err != nil {
		return fmt.Errorf("keep version %s: %w", vw.d.w.Path(rel), err)
	}
	vw.noteFile(rel)
	vw.d.k.keepPublished(rel) // it cannot be made again
	return nil
}

// obsoleteVersionFile reports whether the version file rel, which an
// earlier build listed (see watched), is not one this build publishes.
func (vd *versionsWritten) obsoleteVersionFile(rel string) bool {
	published, watched := vd.watched[rel]
	return watched && !published
}

// writeTimeMap writes the TimeMap of a resource's versions vs (RFC 7089
// §5.1.1): the original, the TimeMap itself, and every memento with its
// datetime, as step says: the last build's is trusted without being read,
// kept when one of the right length is there, or written again.
func (vw *versionsWriter) writeTimeMap(vs []snapshot.Record, step fileStep) error {
	rel := layout.TimeMap(vs[0].Path)
	if step == stepKeep {
		vw.publish(rel, false)
		return nil
	}
	data := timeMap(vw.d.s, vs)
	if step == stepKeepIfSame && present(vw.d.w.Path(rel), int64(len(data))) {
		vw.publish(rel, false)
		return nil
	}
	if err := vw.d.w.WriteBytes(rel, data); err != nil {
		return err
	}
	vw.noteFile(rel)
	return nil
}

// keepPatches publishes the patches of the versions rv keeps as rv says,
// and marks the versions patched: a patch that cannot be made leaves its
// version unpatched.
func (vw *versionsWriter) keepPatches(rv *resourceVersions) error {
	vs := rv.kept
	for k, step := range rv.patches {
		v := &vs[k]
		rel := layout.Patch(unixTime(v.Seen), v.Path)
		switch {
		case step == stepNone:
			continue
		case step == stepKeep, step == stepKeepIfSame && present(vw.d.w.Path(rel), -1):
			vw.publish(rel, false)
			continue
		}
		ok, err := vw.writePatch(&vs[k-1], v, rv.linked[k])
		if err != nil {
			return err
		}
		if !ok && v.Patched {
			vw.done.obsolete = append(vw.done.obsolete, rel)
		}
		v.Patched = ok
	}
	return nil
}

// writePatch writes the JSON Patch from version prev to version cur and,
// when linked, keeps its link for the Change Lists. A version that is not
// valid JSON gets no patch, with a warning; ok says whether it got one.
func (vw *versionsWriter) writePatch(prev, cur *snapshot.Record, linked bool) (ok bool, err error) {
	rel := layout.Patch(unixTime(cur.Seen), cur.Path)
	patch, invalid, err := readPatch(vw.d.w, prev, cur)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && vw.vp.trusted {
			err = fmt.Errorf("%w (the output lost a kept version since the last build; build with --verify to restore it)", err)
		}
		return false, fmt.Errorf("patch %s: %w", rel, err)
	}
	if invalid != nil {
		// Said once, by the build that found the update: every later
		// build meets the same two versions, and tries them again only
		// because the state does not record that they failed.
		if cur.Seen == vw.now {
			vw.d.s.warn(WarnJSONPatch, cur.Path, fmt.Sprintf("no JSON Patch for this update: %v", invalid))
		}
		return false, nil
	}
	if err := vw.d.w.WriteBytes(rel, patch); err != nil {
		return false, err
	}
	vw.noteFile(rel)
	if linked {
		l := patchLink(vw.d.s, rel, patch)
		vw.done.links.patches[rel] = &l
	}
	return true, nil
}
