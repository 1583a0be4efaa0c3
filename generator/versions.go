package generator

// Prior versions (§14.6) and patches (§14.4). In a set with keep_versions
// every version of every resource is copied, when the build that first
// sees it runs, to a time-specific URI (layout.Memento); the copy is
// checked against the scan's fingerprint, so it holds exactly the bytes
// whose hash was published. Hard links would not do: an editor that writes
// in place would change the old version too. A static TimeMap per
// resource (RFC 7089, application/link-format) lists its versions
// (timemaps.go).
//
// With patches, each update of a JSON resource also gets an RFC 6902 JSON
// Patch from the previous version, made from the two kept copies. Versions
// and patches stay while their set keeps them: closed Change Lists link to
// them.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// versioner keeps the versions of resources. The versions of a site that
// keeps them grow with every build, so a build never holds them whole: it
// merges the previous build's, read from its state as they are needed,
// with the scan's records, both in walk order, one resource at a time, and
// writes the next build's into a record file as it goes. The output files
// of versions stay out of the sink's list of outputs; the merge says which
// go (obsolete). A resource's TimeMap and patches are written again only
// when its versions changed, or when recheck says the output may not be
// what the state says it is.
type versioner struct {
	*run
	recheck  bool              // write every TimeMap and patch again (see setRecheck)
	trusted  bool              // trust the files of carried versions without a stat (see outputTrusted)
	group    []snapshot.Record // the versions of the resource being merged, reused
	obsolete []string          // output files of versions no longer kept, removed once the build's files are in place
	// watched are the version files that an earlier build listed among
	// its outputs (a state written before format 5) or in its publishing
	// record (a failed build): true once this build publishes them too.
	// Those it does not publish are removed (removeObsolete).
	watched map[string]bool
	// used are the folders of layout.VersionDirs this build publishes
	// into, for the hosting files.
	used map[string]bool
	// sameSecond holds, when this build runs in the same second as the
	// last, the paths of the versions the last build first saw (true) and
	// of their folders (false): their mementos share this build's folder
	// of mementos (see mementoTaken).
	sameSecond map[string]bool
}

// isJSON reports whether r is a JSON resource, which patches cover.
func isJSON(r *snapshot.Record) bool {
	return r.Type() == "application/json" || strings.HasSuffix(r.Type(), "+json")
}

// versioned reports whether the resource at source path p is in a set
// that keeps versions, and whether in one that publishes patches.
func (b *versioner) versioned(p string) (keep, patches bool) {
	for _, s := range b.sets {
		if s.KeepVersions && s.Contains(p) {
			keep, patches = true, patches || s.Patches
		}
	}
	return keep, patches
}

// keepVersions keeps the versions of this build's resources, carries over
// those of earlier builds, writes the TimeMaps and patches, and finds the
// versions the Change Lists of this build link to (those of the events of
// the open segments and of closed, the segments this build closes). It
// runs before the documents that link to them are written.
func (b *versioner) keepVersions(ctx context.Context, closed map[string][]snapshot.Segment) error {
	b.watchVersionFiles()
	if b.prev.NumVersions() == 0 && !slices.ContainsFunc(b.sets, func(s *set) bool { return s.KeepVersions }) {
		return nil
	}
	b.setRecheck()
	b.trusted = b.outputTrusted()
	if err := b.noteSameSecond(); err != nil {
		return err
	}
	b.linker.findEventVersions(b.next.Journals, closed)
	out := b.newRecordFile("the kept versions")
	if err := b.mergeVersions(ctx, out); err != nil {
		out.Close()
		return err
	}
	if err := out.Finish(); err != nil {
		out.Close()
		return err
	}
	b.next.UseVersions(out)
	return nil
}

// watchVersionFiles fills watched with the version files of the previous
// build's outputs and of the publishing record of a failed build.
func (b *versioner) watchVersionFiles() {
	b.watched, b.used = map[string]bool{}, map[string]bool{}
	for _, names := range [][]string{b.prev.Outputs, b.intent.Added} {
		for _, rel := range names {
			if sink.KindOf(rel) == sink.Version {
				b.watched[rel] = false
			}
		}
	}
}

// setRecheck decides whether TimeMaps and patches are written again
// whatever the state says: with --verify, after a failed build (its
// publishing record names version files) or a state of an older format
// (its outputs do), with a state rebuilt from the output, and when the
// base URLs the TimeMaps and patch links name changed.
func (b *versioner) setRecheck() {
	b.recheck = b.opts.Verify || len(b.watched) > 0 || b.recoverer.recovered != nil ||
		b.prev.BaseURL != b.base || b.prev.ResourceBaseURL != b.resBase
}

// outputTrusted reports whether the versions carried over from the last
// build, and their TimeMaps and patches, are trusted to be published as it
// left them, without a stat each, as placements trusts the resources: not
// when recheck says so, nor when the output does not look like the last
// build's (its Source Description, first resource or first kept version is
// missing: a fresh or wiped output folder).
func (b *versioner) outputTrusted() bool {
	if b.recheck || !b.intact {
		return false
	}
	for v, err := range b.prev.Versions() {
		return err == nil && b.present(layout.Memento(unixTime(v.Seen), v.Path), -1)
	}
	return true
}

// mergeVersions merges the previous build's versions with the scan's
// records, path by path in walk order, and appends the next build's
// versions to out.
func (b *versioner) mergeVersions(ctx context.Context, out *snapshot.RecordFile) error {
	next, stop := iter.Pull2(b.prev.Versions())
	defer stop()
	prev := versionCursor{next: next}
	prev.advance()
	files := &b.next.Files
	var old []snapshot.Record
	for i := 0; ; {
		for i < files.Len() && !b.keeps(files.At(i).Path) {
			i++
		}
		var cur *snapshot.Record
		if i < files.Len() {
			cur = files.At(i)
		}
		if cur == nil && !prev.ok {
			return prev.failure()
		}
		p := prev.head.Path
		if !prev.ok || cur != nil && layout.ComparePaths(cur.Path, p) <= 0 {
			p = cur.Path
		}
		// A resource's versions are all read before any is acted on: one
		// missing would be taken for one no longer kept.
		if old = prev.group(p, old[:0]); prev.err != nil {
			return prev.failure()
		}
		if cur != nil && cur.Path == p {
			i++
		} else {
			cur = nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := b.keepResource(p, old, cur, out); err != nil {
			return err
		}
	}
}

// keeps reports whether the versions of the resource at p are kept.
func (b *versioner) keeps(p string) bool {
	keep, _ := b.versioned(p)
	return keep
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
// previous build, and cur's, its record in this build, if it has one. It
// publishes them, its TimeMap and its patches, and appends them to out.
func (b *versioner) keepResource(p string, old []snapshot.Record, cur *snapshot.Record, out *snapshot.RecordFile) error {
	b.sink.ForgetVersions() // those of the resource before
	keep, patches := b.versioned(p)
	vs, err := b.carryVersions(old, keep)
	if err != nil {
		return err
	}
	changed := len(vs) < len(old) // the versions of p are not those of the last build
	if cur != nil {
		k, found := slices.BinarySearchFunc(vs, cur.Seen, func(v snapshot.Record, seen int64) int { return cmp.Compare(v.Seen, seen) })
		if !found {
			if err := b.writeMemento(cur); err != nil {
				return err
			}
			vs = slices.Insert(vs, k, *cur)
			changed = true
		}
	}
	b.group = vs
	b.dropVersions(old, vs)
	if len(vs) == 0 {
		if len(old) > 0 {
			b.obsolete = append(b.obsolete, layout.TimeMap(p))
		}
		return nil
	}
	if err := b.writeTimeMap(vs, changed || b.recheck); err != nil {
		return err
	}
	if err := b.keepPatches(vs, patches); err != nil {
		return err
	}
	b.linker.noteVersions(vs)
	for i := range vs {
		out.Append(&vs[i])
	}
	return nil
}

// carryVersions returns the versions of old, a resource's of the previous
// build, that this build keeps: none unless keep says its set keeps them,
// and those whose memento is whole in the output or the state archive
// (unless trusted), which it publishes. The slice is b.group's, reused.
func (b *versioner) carryVersions(old []snapshot.Record, keep bool) ([]snapshot.Record, error) {
	vs := b.group[:0]
	if !keep {
		return vs, nil
	}
	for _, v := range old {
		rel := layout.Memento(unixTime(v.Seen), v.Path)
		if b.trusted {
			b.publish(rel, false)
			vs = append(vs, v)
			continue
		}
		_, ok, written, err := b.keeper.restoreKept(rel, versionSums(&v))
		if err != nil {
			return nil, err
		}
		if !ok {
			b.warn(WarnLost, v.Path, "kept version lost or damaged in both the state folder and the output folder; it cannot be made again and is no longer listed")
			continue
		}
		b.publish(rel, written)
		vs = append(vs, v)
	}
	return vs, nil
}

// dropVersions makes obsolete the files of the versions of old that vs,
// the versions kept, does not hold (both oldest first): their mementos, in
// the output and in the state archive, and their patches.
func (b *versioner) dropVersions(old, vs []snapshot.Record) {
	for _, v := range old {
		for len(vs) > 0 && vs[0].Seen < v.Seen {
			vs = vs[1:]
		}
		if len(vs) > 0 && vs[0].Seen == v.Seen {
			continue
		}
		rel := layout.Memento(unixTime(v.Seen), v.Path)
		b.obsolete = append(b.obsolete, rel)
		b.archiver.arch.prune = append(b.archiver.arch.prune, rel)
		if v.Patched {
			b.obsolete = append(b.obsolete, layout.Patch(unixTime(v.Seen), v.Path))
		}
	}
}

// publish records the version file rel, which this build publishes,
// written or not.
func (b *versioner) publish(rel string, written bool) {
	b.sink.Record(rel, written)
	b.noteVersionFile(rel)
}

// noteVersionFile notes that this build publishes the version file rel
// (see watched and used).
func (b *versioner) noteVersionFile(rel string) {
	if _, ok := b.watched[rel]; ok {
		b.watched[rel] = true
	}
	sub := strings.TrimPrefix(rel, layout.DocumentsDir+"/")
	top, _, _ := strings.Cut(sub, "/")
	b.used[top] = true
}

// obsoleteVersionFile reports whether the version file rel, which an
// earlier build listed (see watched), is not one this build publishes.
func (b *versioner) obsoleteVersionFile(rel string) bool {
	published, watched := b.watched[rel]
	return watched && !published
}

// noteSameSecond fills sameSecond when this build runs in the same second
// as the last (two builds of rsgen watch, a fixed --now).
func (b *versioner) noteSameSecond() error {
	if b.prev.LastBuild != b.now {
		return nil
	}
	b.sameSecond = map[string]bool{}
	for v, err := range b.prev.Versions() {
		if err != nil {
			return fmt.Errorf("kept versions: %w", err)
		}
		if v.Seen != b.now {
			continue
		}
		b.sameSecond[v.Path] = true
		for dir := path.Dir(v.Path); dir != "."; dir = path.Dir(dir) {
			if _, done := b.sameSecond[dir]; done {
				break
			}
			b.sameSecond[dir] = false
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
func (b *versioner) mementoTaken(p string) bool {
	if isVersion, ok := b.sameSecond[p]; ok && !isVersion {
		return true
	}
	for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
		if b.sameSecond[dir] {
			return true
		}
	}
	return false
}

// writeMemento copies the current version of r to its time-specific URI,
// staged (see stage), checking the bytes against what the documents say
// of the version (copyVersion).
func (b *versioner) writeMemento(r *snapshot.Record) error {
	rel := layout.Memento(unixTime(r.Seen), r.Path)
	if b.mementoTaken(r.Path) {
		return fmt.Errorf("keep version %s: the last build, in the same second, kept a version whose memento takes its place (%s changed between file and folder); build again a second later", b.sink.Path(rel), r.Path)
	}
	if err := b.sink.WriteNew(rel, func(w io.Writer) error { return b.copyVersion(w, r) }); err != nil {
		return fmt.Errorf("keep version %s: %w", b.sink.Path(rel), err)
	}
	b.noteVersionFile(rel)
	b.keeper.keepPublished(rel) // it cannot be made again
	return nil
}

// copyVersion copies the current version of r into w: the published form
// of a rewritten resource (html_link), else its source file. A source file
// still the one the scan hashed (isScanned) is copied without being hashed
// again, as packaging copies it, and its stat is checked once more after
// the copy; any other file is hashed and compared with r's length and
// SHA-256. Either way, bytes other than the scanned ones fail the build.
func (b *versioner) copyVersion(w io.Writer, r *snapshot.Record) error {
	changed := fmt.Errorf("%s changed since it was scanned; build again", r.Path)
	var in fs.File
	var err error
	if r.Rewritten {
		in, err = os.Open(b.sink.Current(b.sink.Path(r.Path)))
	} else if in, err = b.src.Open(r.Path); err != nil {
		err = goneSinceScan(r.Path, err)
	}
	if err != nil {
		return err
	}
	defer in.Close()
	same := false
	if !r.Rewritten {
		if _, same, err = isScanned(in, r.Stat(), b.next.ScanStart); err != nil {
			return err
		}
	}
	if same {
		n, err := io.Copy(w, in)
		if err != nil {
			return err
		}
		if _, still, err := isScanned(in, r.Stat(), b.next.ScanStart); err != nil || !still || n != r.Size {
			return errors.Join(err, changed)
		}
		return nil
	}
	got, err := copyMeasured(w, in)
	if err == nil && !versionSums(r).match(got) {
		err = changed
	}
	return err
}

// versionSums returns what identifies the bytes of a kept version: its
// length and the SHA-256 of its published bytes (zero when unknown: a
// rewritten resource without a published SHA-256, or a record migrated
// without one).
func versionSums(v *snapshot.Record) sums {
	s := sums{size: v.Size}
	s.sha256, _ = v.PublishedSHA256()
	return s
}
