package generator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/internal/chunked"
	"github.com/rsgen/rsgen/internal/sysfile"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
	"golang.org/x/sync/errgroup"
)

// placer places the resources in the output folder and removes what
// is obsolete.
type placer struct {
	dir     string
	src     *snapshot.Tree // the source, read only through it
	enabled bool           // copy_resources: resources are placed in the output
	link    bool           // resources = "link", and source and output share a file system: hard-link
	clone   bool           // resources = "reflink": clone, until a clone fails (see cloneTemp)
	noClone atomic.Bool    // a clone failed: the file system does not clone, copy
	placed  atomic.Int64   // resources written by this build
	dirs    sync.Map       // folders known to exist, the last few thousand (see mkdirs)
	ndirs   atomic.Int32   // how many dirs holds
	pending sync.Map       // source path -> temporary copy made by the scan
	copies  atomic.Int64   // how many copies the scan made (stored in pending)
	mu      sync.Mutex
	// added lists, by source path, the resources this build placed where
	// nothing was published, until keepAdded: a failed build removes them.
	// A cold build adds every resource: the paths are held compressed
	// against the one before (chunked.Strings), not as strings, which
	// would keep the paths of all the scan's records, and past a block,
	// in an unnamed file in the state folder, as the scan's records are.
	added chunked.Strings
	// rewrites reports whether a resource is published with other bytes
	// than its source file's (see htmllink.go); rewrite returns the writer
	// of those bytes, and the function that completes it.
	rewrites func(path string) bool
	rewrite  func(r *snapshot.Record, dst io.Writer) (io.Writer, func() error)
	// sink stages a replacement of a published file until the build's
	// documents are written.
	sink *sink.Sink
	// overTypeChange holds the paths of new resources that stand where
	// an earlier build published a resource of the other type: they are
	// staged, never placed at once (typechanges.go).
	overTypeChange map[string]bool
}

// openOutput opens the output folder of site s, into which resources are
// placed from the source src, rewritten by rw, and through the sink w.
func openOutput(s *site, src *snapshot.Tree, w *sink.Sink, rw *rewriter) (*placer, error) {
	o := &placer{dir: s.cfg.Out, src: src, enabled: s.cfg.CopyResources, rewrites: s.rewrites, rewrite: rw.rewrite, sink: w}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	o.link = s.cfg.Publish.Resources == config.PlaceLink && sysfile.SameDevice(s.cfg.Source, o.dir)
	o.clone = s.cfg.Publish.Resources == config.PlaceReflink
	o.added = pathList(s.cfg.State)
	w.SpillInto(spillInto(s.cfg.State), spillBlockSize)
	return o, nil
}

func (o *placer) path(rel string) string { return filepath.Join(o.dir, filepath.FromSlash(rel)) }

// tee returns the scan's tee when resources are placed in the output:
// each file the scan reads is copied into the output by the same read,
// unless it is hard-linked there, and a rewritten resource is written in
// its published form. The copy is compared with the one already there
// while it streams, so an unchanged resource is not rewritten, and a new
// copy stays pending, as a temporary file, until placeAll, after the whole
// scan succeeded: a failed scan publishes nothing.
//
// A file new to the state is hard-linked as soon as it is read, so that
// the links of a cold build cost no pass of their own after the scan; a
// failed scan takes them back (discard). Each read job of the scan (the
// files of one folder one worker reads) has a tee of its own (jobPlacer).
func (o *placer) tee() snapshot.Tees {
	if !o.enabled {
		return nil
	}
	return func() (snapshot.Tee, func()) {
		job := &jobPlacer{o: o}
		return o.jobTee(job), job.end
	}
}

// jobPlacer is what one read job of the scan places in the output: it
// lists the resources the job placed where nothing was published, added
// to the placer's list once the job is done (one lock per job, not per
// file), and links the job's new files into their output folder opened
// once (snapshot.FolderLinker), where linking each by its path would look
// up every folder on the way again.
type jobPlacer struct {
	o       *placer
	added   []string
	dirPath string   // the output folder of the files linked last
	dir     *os.File // it, opened
	dirErr  error    // why it could not be opened
}

func (j *jobPlacer) add(rel string) {
	j.o.placed.Add(1)
	j.added = append(j.added, rel)
}

// end adds the resources the job placed to the placer's list, and closes
// the folder it linked into.
func (j *jobPlacer) end() {
	if j.dir != nil {
		j.dir.Close()
	}
	j.o.mu.Lock()
	defer j.o.mu.Unlock()
	for _, rel := range j.added {
		j.o.added.Append(rel)
	}
	j.added = nil
}

// linkFresh is the placer's linkFresh for the file the job read, through
// the job's output folder when the file can be linked into one.
func (j *jobPlacer) linkFresh(r *snapshot.Record, src snapshot.Linker) bool {
	dst := j.o.path(r.Path)
	l, ok := src.(snapshot.FolderLinker)
	if !ok {
		return j.o.linkFresh(r, src, dst, j.add)
	}
	dir, err := j.folder(filepath.Dir(dst))
	if err != nil || l.LinkInto(dir, filepath.Base(dst)) != nil {
		return false
	}
	j.add(r.Path)
	return true
}

// folder returns the output folder dir, created if need be and opened
// once for the job.
func (j *jobPlacer) folder(dir string) (*os.File, error) {
	if dir == j.dirPath {
		return j.dir, j.dirErr
	}
	if j.dir != nil {
		j.dir.Close()
	}
	j.dirPath, j.dir = dir, nil
	if j.dirErr = j.o.mkdirs(dir); j.dirErr == nil {
		j.dir, j.dirErr = os.Open(dir)
	}
	return j.dir, j.dirErr
}

// jobTee is the tee of one read job, job.
func (o *placer) jobTee(job *jobPlacer) snapshot.Tee {
	return func(r *snapshot.Record, isNew bool, src fs.File) (io.Writer, func(bool) error, error) {
		rewritten := o.rewrites(r.Path)
		if !rewritten && o.link {
			return nil, func(ok bool) error {
				switch l, linkable := src.(snapshot.Linker); {
				case !ok:
				case isNew && linkable:
					r.Placed = job.linkFresh(r, l)
				case !isNew:
					// Looked at here, on the reading worker: most
					// outputs of a file read again are the file itself
					// (a hard link), and placeAll would look at each
					// after decoding its record once more.
					r.Placed = o.isCurrent(r)
				}
				return nil
			}, nil
		}
		dst := o.path(r.Path)
		if err := o.mkdirs(filepath.Dir(dst)); err != nil && !errors.Is(err, syscall.ENOTDIR) {
			return nil, nil, err // ENOTDIR: a type change, the copy waits above (sink.TempName)
		}
		if !rewritten {
			if done, cloned, err := o.cloneTee(r, isNew, src, dst, job.add); err != nil || cloned {
				return nil, done, err
			}
		}
		f, err := sink.CreateLazy(dst)
		if err != nil {
			return nil, nil, err
		}
		var w io.Writer = f
		var finish func() error
		if rewritten {
			w, finish = o.rewrite(r, f)
		}
		done := func(ok bool) error {
			defer f.Abort()
			if !ok {
				return nil
			}
			if finish != nil {
				if err := finish(); err != nil {
					return err
				}
			}
			tmp, err := f.Finish(false)
			if err != nil {
				return err
			}
			if tmp == "" {
				return o.restamp(r, dst)
			}
			if err := sink.Stamp(tmp, r.ModTime); err != nil {
				os.Remove(tmp)
				return err
			}
			if r.Placed = isNew && o.placeFresh(r, tmp, dst, job.add); r.Placed {
				return nil
			}
			o.pending.Store(r.Path, tmp)
			o.copies.Add(1)
			return nil
		}
		return w, done, nil
	}
}

// cloneTee is the tee's work for a resource placed by a clone (resources
// = "reflink"): the open file src is cloned before the scan reads it (the
// stat after the read proves it unchanged across the clone), and the
// clone waits, as a copy does (see tee), unless the copy at dst already
// holds r. cloned is false where the file system does not clone: the tee
// copies instead.
func (o *placer) cloneTee(r *snapshot.Record, isNew bool, src fs.File, dst string, added func(rel string)) (done func(bool) error, cloned bool, err error) {
	tmp, cloned, err := o.cloneTemp(src, dst, r)
	if err != nil || !cloned {
		return nil, false, err
	}
	return func(ok bool) error {
		if !ok || o.isCurrent(r) {
			os.Remove(tmp)
			r.Placed = ok
			return nil
		}
		if r.Placed = isNew && o.placeFresh(r, tmp, dst, added); r.Placed {
			return nil
		}
		o.pending.Store(r.Path, tmp)
		o.copies.Add(1)
		return nil
	}, true, nil
}

// cloneTemp clones the open source file src of r into a temporary file for
// dst, when resources = "reflink" and the file system clones; cloned is
// false otherwise, and the first clone that fails makes every later
// resource of the build a copy without trying.
func (o *placer) cloneTemp(src fs.File, dst string, r *snapshot.Record) (tmp string, cloned bool, err error) {
	f, ok := src.(sink.Descriptor)
	if !o.clone || !ok || o.noClone.Load() {
		return "", false, nil
	}
	tmp, cloned, err = sink.CloneTemp(f, dst, r.ModTime)
	if err == nil && !cloned {
		o.noClone.Store(true)
	}
	return tmp, cloned, err
}

// restamp places r, whose copy at dst the scan found equal to the bytes
// it publishes, by giving the copy r's mtime if it has another, by which
// later builds recognise it as current. It is done as the scan reads r, not
// noted for placeAll: a --verify build reads every file, and that note was
// a path per resource (30 MB for 100,000 files copied).
func (o *placer) restamp(r *snapshot.Record, dst string) error {
	info, err := os.Lstat(dst)
	if err == nil && info.ModTime().UnixNano() != r.ModTime {
		t := time.Unix(0, r.ModTime)
		err = os.Chtimes(dst, t, t)
	}
	if err != nil {
		return fmt.Errorf("place %s: %w", dst, err)
	}
	r.Placed = true
	return nil
}

// discard removes the copies still pending and the resources added by a
// build that failed; after a build that published, nothing is left to
// remove. Its error says that the list of the resources added could not
// be read back: those it did not yield stay in the output.
func (o *placer) discard() error {
	o.pending.Range(func(p, tmp any) bool {
		os.Remove(tmp.(string))
		o.pending.Delete(p)
		return true
	})
	o.mu.Lock()
	defer o.mu.Unlock()
	for rel := range o.added.All() {
		o.sink.RemoveFile(rel)
	}
	err := o.added.Err()
	o.added.Close()
	if err != nil {
		return fmt.Errorf("output: take back the resources this build added: %w; some of them may stay in %s", err, o.dir)
	}
	return nil
}

// placedNew counts a resource placed where nothing was published.
func (o *placer) placedNew(rel string) {
	o.placed.Add(1)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.added.Append(rel)
}

// keepAdded makes the resources this build added part of the output, which
// discard then leaves alone: once the documents that list them are
// published.
func (o *placer) keepAdded() {
	o.mu.Lock()
	o.added.Close()
	o.mu.Unlock()
}

// placeAll makes sure every file has its current bytes in the output,
// placing those that are missing or stale, on every core, checking each
// as much as places asks of it.
func (o *placer) placeAll(ctx context.Context, files *snapshot.Records, places placements) error {
	if !o.enabled {
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range files.Len() {
		if gctx.Err() != nil {
			break
		}
		place := places.of(files.MarksAt(i))
		// The record is only read when the file may need placing:
		// spilled records are decoded to be read.
		switch {
		case place == placeDone:
			continue
		case place == placeKept && o.copies.Load() == 0:
			continue
		}
		r, err := files.At(i)
		if err != nil {
			g.Go(func() error { return err })
			break
		}
		if r.Placed {
			continue
		}
		if place == placeKept {
			// Unless the scan's tee wrote a new copy: a rewritten
			// resource whose published form changed with the
			// configuration, not with its source (htmllink.go).
			if _, pending := o.pending.Load(r.Path); !pending {
				continue
			}
		}
		g.Go(func() error { return o.place(r, place == placeNew) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// place puts one resource in the output unless it is there already. A
// fresh resource, never published before, is linked without a look first.
func (o *placer) place(r *snapshot.Record, fresh bool) error {
	dst := o.path(r.Path)
	typeChange := o.overTypeChange[r.Path]
	if typeChange {
		fresh = false // staged: the old type leaves first, at Commit
	}
	if tmp, ok := o.pending.LoadAndDelete(r.Path); ok {
		if err := o.replace(tmp.(string), dst, fresh); err != nil {
			os.Remove(tmp.(string))
			return fmt.Errorf("place %s: %w", dst, err)
		}
		o.count(r.Path, fresh)
		return nil
	}
	if fresh && o.link && !o.rewrites(r.Path) && o.linkFreshSource(r, dst) {
		return nil
	}
	info, err := os.Lstat(dst)
	if err == nil && o.current(info, r) {
		return nil
	}
	if o.rewrites(r.Path) {
		// Only the scan's tee writes the published form, and it reads a
		// rewritten resource only when its source changed, the tags did,
		// or the output does not look like the last build's.
		return fmt.Errorf("place %s: the published copy of this page is missing or altered, and its source was not read, as it did not change since the last build; build with --verify to publish it again", dst)
	}
	missing := errors.Is(err, os.ErrNotExist) && !typeChange
	// A type change's folder may be a file still, until Commit: the
	// temporary file waits above it (sink.TempName).
	if err := o.mkdirs(filepath.Dir(dst)); err != nil && !(typeChange && errors.Is(err, syscall.ENOTDIR)) {
		return fmt.Errorf("place %s: %w", dst, err)
	}
	src, err := o.openSource(r)
	if err != nil {
		return fmt.Errorf("place %s: %w", dst, err)
	}
	defer src.Close()
	err = errNoLink
	created := false
	if l, ok := src.(snapshot.Linker); ok && o.link {
		created, err = o.linkInto(l, dst, missing)
	}
	if errors.Is(err, errNoLink) || errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EMLINK) ||
		errors.Is(err, errors.ErrUnsupported) {
		tmp, cloned, cerr := o.cloneTemp(src, dst, r)
		if err = cerr; err == nil && !cloned {
			tmp, err = sink.CopyTemp(src, dst, r.ModTime)
		}
		if err == nil {
			created, err = missing, o.replace(tmp, dst, missing)
		}
	}
	if err != nil {
		return fmt.Errorf("place %s: %w", dst, err)
	}
	o.count(r.Path, created)
	return nil
}

// openSource opens the source file of r through the Tree, which never
// leaves the source, and checks that it is still the file r describes: a
// file changed or replaced since the scan is not placed, and one removed
// makes the build scan again (rescan.go).
func (o *placer) openSource(r *snapshot.Record) (fs.File, error) {
	f, err := o.src.Open(r.Path)
	if err != nil {
		return nil, goneSinceScan(r.Path, err)
	}
	info, err := f.Stat()
	if err == nil && (!info.Mode().IsRegular() || info.Size() != r.Size || info.ModTime().UnixNano() != r.ModTime ||
		r.Inode != 0 && sysfile.Inode(info) != r.Inode) {
		err = fmt.Errorf("%s changed since the scan; build again", r.Path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// count counts a resource placed, added where nothing was published or
// replacing its published copy.
func (o *placer) count(rel string, added bool) {
	if added {
		o.placedNew(rel)
		return
	}
	o.placed.Add(1)
}

// linkFresh tries to hard-link the open source file src of a resource at
// dst, where nothing should be, and lists it with added. It reports false,
// leaving the work to the general path, when anything is there or linking
// is refused.
func (o *placer) linkFresh(r *snapshot.Record, src snapshot.Linker, dst string, added func(rel string)) bool {
	if o.mkdirs(filepath.Dir(dst)) != nil {
		return false
	}
	if src.LinkTo(dst) != nil {
		return false
	}
	added(r.Path)
	return true
}

// placeFresh renames the new copy tmp of a resource new to the state to
// dst, where nothing should be, as linkFresh links it: at once, so that a
// cold build that copies (the source and the output on two file systems)
// does not hold a pending copy per resource until placeAll. It reports
// false, leaving the copy pending, when anything is there or the file
// system cannot rename without replacing.
func (o *placer) placeFresh(r *snapshot.Record, tmp, dst string, added func(rel string)) bool {
	if sysfile.RenameNoReplace(tmp, dst) != nil {
		return false
	}
	added(r.Path)
	return true
}

// linkFreshSource is linkFresh for a resource the scan did not read.
func (o *placer) linkFreshSource(r *snapshot.Record, dst string) bool {
	src, err := o.openSource(r)
	if err != nil {
		return false
	}
	defer src.Close()
	l, ok := src.(snapshot.Linker)
	return ok && o.linkFresh(r, l, dst, o.placedNew)
}

// errNoLink stands for "copy instead" when linking is not tried.
var errNoLink = errors.New("not linked")

// isCurrent reports whether the output file of r already holds r's bytes
// (current).
func (o *placer) isCurrent(r *snapshot.Record) bool {
	info, err := os.Lstat(o.path(r.Path))
	return err == nil && o.current(info, r)
}

// current reports whether the output file info already holds r's bytes: it
// is the same inode (a hard link), or a copy with r's size and mtime.
func (o *placer) current(info os.FileInfo, r *snapshot.Record) bool {
	if !info.Mode().IsRegular() || info.Size() != r.Size {
		return false
	}
	if ino := sysfile.Inode(info); ino != 0 && ino == r.Inode {
		return true
	}
	return info.ModTime().UnixNano() == r.ModTime
}

// mkdirs creates dir and its parents, once per build for most folders:
// resources share their folder with others, and come in walk order. The
// folders known to exist are forgotten every maxKnownDirs, so that a
// build does not hold every folder of the output (at 3,000,000 files,
// 30,000 folders held 3 MB); one forgotten is only looked up again.
func (o *placer) mkdirs(dir string) error {
	if _, done := o.dirs.Load(dir); done {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if o.ndirs.Add(1) > int32(maxKnownDirs) {
		o.dirs.Clear()
		o.ndirs.Store(1)
	}
	o.dirs.Store(dir, true)
	return nil
}

// maxKnownDirs is how many folders mkdirs knows to exist at most: a
// variable for the tests.
var maxKnownDirs = 4096

// linkInto hard-links src at dst. Where dst exists it links a temporary
// name to replace dst with, so that dst is never missing; where it does
// not, one link suffices, and is just as atomic. It reports whether it
// created dst rather than replaced it.
func (o *placer) linkInto(src snapshot.Linker, dst string, missing bool) (created bool, err error) {
	if missing {
		err := src.LinkTo(dst)
		if !errors.Is(err, os.ErrExist) {
			return err == nil, err
		}
	}
	tmp, err := sink.TempName(dst)
	if err != nil {
		return false, err
	}
	os.Remove(tmp)
	if err := src.LinkTo(tmp); err != nil {
		return false, err
	}
	if err := o.replace(tmp, dst, false); err != nil {
		os.Remove(tmp)
		return false, err
	}
	return false, nil
}

// replace puts the temporary file tmp at dst: at once where nothing was
// published (fresh), else staged with the documents (see stage), so that a
// build that fails before its documents are written leaves the published
// bytes of a resource those documents describe as they were.
func (o *placer) replace(tmp, dst string, fresh bool) error {
	if fresh {
		return os.Rename(tmp, dst)
	}
	o.sink.Stage(tmp, dst)
	return nil
}
