package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rsgen/rsgen/internal/chunked"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"golang.org/x/sync/errgroup"
)

// RaceWindow is how much older than the recording scan's start a file's
// modification time must be for its record to be trusted: coarse file
// system clocks (two seconds on FAT) cannot tell a later write apart.
const RaceWindow = 2 * time.Second

// ScanOptions configures Scan.
type ScanOptions struct {
	// FS is the source tree.
	FS fs.FS
	// Algorithms are the published digests to compute.
	Algorithms []rs.HashAlgorithm
	// Exclude reports whether a path (a file, or a folder with all it
	// holds) is left out of the scan.
	Exclude func(path string, isDir bool) bool
	// Verify re-reads every file, trusting no record.
	Verify bool
	// Reread, when set, names files that are read on every scan, whatever
	// their stat, by their previous record: files whose published bytes
	// are derived from their content by settings the stat cannot see.
	Reread func(old *Record) bool
	// Workers is how many files are read at once; 0 means GOMAXPROCS.
	Workers int
	// Tee, when set, makes the Tee of each read job, which receives the
	// bytes of every file the job reads.
	Tee Tees
	// Notify, when set, receives what the scan does, as it does it.
	Notify func(Note)
	// FollowSymlinks follows symbolic links whose targets lie inside the
	// source folder (see follow.go); FS must be a Tree that follows them.
	FollowSymlinks bool
	// Now is the time of the build, in Unix seconds: the time of the
	// events, and when new content is first seen (Record.Seen).
	Now int64
	// SkipUnreadable turns a file or folder that cannot be read for lack
	// of permission into a skip note instead of a failure.
	SkipUnreadable bool
	// SpillDir, when set, is a folder into which the records of a scan of
	// more than SpillAfter files are spilled as they settle (see
	// Records): the scan then holds a few chunks of them, not all.
	SpillDir string
	// SpillAfter is how many records are held in memory before they are
	// spilled; 0 means DefaultSpillAfter.
	SpillAfter int
	// Visit, when set, is handed each record of the results, with its
	// index, once, in walk order, as it settles: before it is spilled, so
	// that whatever needs every record once is done without reading the
	// spilled records back. The record is valid during the call only; an
	// error ends the scan.
	Visit func(i int, r *Record) error
	// FoldCase refuses two names of a folder that differ only in case:
	// the output's file system folds case, and would hold them as one
	// (see names.go).
	FoldCase bool
	// Baseline leaves the creations out of the events: the scan of a first
	// build, whose events no Change List publishes (its Resource List is
	// the baseline). The records' Change still says which files were
	// created, and a spilled scan keeps no copy of them, which would be
	// all of its records.
	Baseline bool
}

// DefaultSpillAfter is how many records a scan holds in memory before it
// spills them (about 11 MB): below it, reading them back would cost more
// than they take, and a small build (every rebuild of rsgen watch)
// writes nothing but its output and state.
const DefaultSpillAfter = 64 * chunked.Size

// NoteKind says what a Note reports.
type NoteKind int

// The notes a scan sends.
const (
	NoteSkipped NoteKind = iota + 1 // a file left out, with a reason: a warning
	NoteHashed                      // a file was read and fingerprinted
	NoteFound                       // a file was found; Read says whether it will be read
	NoteWalked                      // the walk has found every file; reading may go on
	NoteInfo                        // something that costs only time or memory, in Msg
)

// Note reports one thing a scan did.
type Note struct {
	Kind  NoteKind
	Code  string // NoteSkipped: why, for grouping: one of the Skip codes
	Path  string
	Bytes int64 // NoteFound: -1 when the size is known only once the file is read
	Msg   string
	Read  bool // NoteFound: the file is queued to be read
}

// ScanStats counts what a scan did.
type ScanStats struct {
	Files       int   // files in the result
	Hashed      int   // files read
	HashedBytes int64 // bytes read
	Skipped     int   // files left out with a warning
	// Trusted counts the files whose previous record the scan took,
	// trusted by their stat, without reading them.
	Trusted int
}

// PathError is a scan failure that names the file or folder at fault.
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string { return fmt.Sprintf("%s: %v", e.Path, e.Err) }
func (e *PathError) Unwrap() error { return e.Err }

// Scan walks the source tree and returns its files in walk order, and the
// change events between prev and them, in walk order, stamped with
// opts.Now. Files whose stat matches a trusted record of prev (see the
// package comment) are taken from prev; every other file is read once, in
// parallel. The folders are read in parallel too, ahead of the walk (see
// walk.go). prev's records are read as the walk reaches their paths (a
// merge-join: both are in walk order), so that they need not be held in
// memory with the new ones.
func Scan(ctx context.Context, prev *State, opts ScanOptions) (_ Records, _ []Event, _ ScanStats, err error) {
	next, stop := decodeAhead(prev.Records())
	defer stop()
	s := &scan{opts: opts, prev: prevRecords{next: next}, prevScanStart: prev.ScanStart}
	defer func() {
		if serr := s.finishSettling(); err == nil {
			err = serr // the settler stopped by an error of the walk's
		}
		if err != nil {
			s.out.Close() // a spill's file
		}
	}()
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// A job's error cancels the walk; it, not the cancellation, is the
	// cause errgroup reports.
	g, jobCtx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	s.work, s.hashers = g, make(chan *hasher, workers)
	// A scan without previous records trusts no stat: its reads stat the
	// files they open.
	statFiles := prev.NumFiles() > 0
	s.readers = startFolderReaders(workers, func(dir string) ([]folderEntry, error) { return s.list(dir, statFiles) })
	walkErr := s.walk(jobCtx)
	s.readers.stop()
	if walkErr == nil {
		s.flush(jobCtx)
	}
	if walkErr == nil {
		walkErr = s.prev.rest()
	}
	if walkErr == nil && opts.Notify != nil {
		opts.Notify(Note{Kind: NoteWalked})
	}
	if err = g.Wait(); err != nil {
		return Records{}, nil, ScanStats{}, err
	}
	if walkErr != nil {
		return Records{}, nil, ScanStats{}, walkErr
	}
	if err = ctx.Err(); err != nil {
		return Records{}, nil, ScanStats{}, err
	}
	if err = s.keepSettled(true); err != nil {
		return Records{}, nil, ScanStats{}, err
	}
	if s.out.disk != nil {
		if err = s.out.disk.finish(); err != nil {
			return Records{}, nil, ScanStats{}, err
		}
	}
	return s.out, s.events(), s.counts.stats(s.out.Len()), nil
}

type scan struct {
	opts          ScanOptions
	prev          prevRecords // prev's records, read as the walk reaches their paths
	prevScanStart int64
	// paths holds the paths of new files, which the walk alone adds.
	paths   pathArena
	readers *folderReaders

	// work runs the read jobs, at most Workers at once: each reads a run
	// of files of one folder (batch, while the walk gathers it), so that
	// one worker reads, and links into the output (Tee), a folder's files,
	// and no two workers contend for one folder's lock in the kernel.
	// hashers holds the hashers of the jobs that ended, one per job
	// running at most, each reused for every file it reads.
	work    *errgroup.Group
	hashers chan *hasher
	batch   readJob

	// The walk appends to places, in walk order: the record of a file
	// trusted by its stat, or a place kept for a worker to put the record
	// of the file it reads in (a job holds its files' records only while
	// it waits and runs, so that a cold scan holds each record about once,
	// not once more per queued file). A file that could not be read
	// leaves its place empty (Path ""). open counts, per chunk of places,
	// those not yet filled,
	// with atomic operations: a job holds a pointer to its place and to
	// its chunk's count, and neither the places nor the counts move when
	// the walk appends (chunked.List), so workers take no lock to fill a
	// place. The walk moves the chunks whose places are all filled, in
	// order, into out (keepSettled).
	places chunked.List[Record]
	open   chunked.List[int32]
	counts scanCounts

	// Only the walk's goroutine, and Scan once the workers are done, use
	// these; the settler, out and what keep fills in.
	settled int // the chunks of places handed to the settler
	settler *settler
	out     Records // the result
	// changed holds copies of the records of out that make events, with
	// their paths, when out is spilled: the events point at them.
	changed      chunked.List[Record]
	changedPaths pathArena
	folds        caseFolds // the names of the folders on the way (FoldCase)
}

// scanCounts counts what the walk and the workers did.
type scanCounts struct {
	hashed, hashedBytes, skipped atomic.Int64
	trusted                      int // the walk's alone
}

func (c *scanCounts) stats(files int) ScanStats {
	return ScanStats{Files: files, Hashed: int(c.hashed.Load()), HashedBytes: c.hashedBytes.Load(),
		Skipped: int(c.skipped.Load()), Trusted: c.trusted}
}

// readJob is a run of files of one folder, in walk order, that one worker
// reads one after the other; first is the index in places of the first.
type readJob struct {
	dir   string
	files []hashJob
	first int
}

// A read job holds at most maxBatchFiles files, and none whose place is
// more than maxBatchSpan places after its first's: a job's places stay
// open until it runs, and the walk settles the places in order, so a
// rebuild that finds one file to read among a million trusted ones must
// not keep it waiting for the folder's end. A job that has read
// handOffBytes hands its other files to an idle worker, if there is one:
// a folder of large files is read on every core.
const (
	maxBatchFiles = 256
	maxBatchSpan  = 4 * chunked.Size
)

var handOffBytes int64 = 8 << 20 // a variable for the tests' small files

// hashJob is a file to read, and where its record goes.
type hashJob struct {
	place *Record // the file's place in places
	open  *int32  // the count of open places of place's chunk
	rec   Record
	old   *Record // the file's previous record; nil for a new path
}

// addFile adds the regular file e, whose stat the listing took (when the
// previous state has files), to the results, keeping its place: the
// walk takes its previous record when its stat can be trusted, a worker
// reads it otherwise. A file new to the state is read whatever its stat
// says: the read stats the file it opens.
func (s *scan) addFile(ctx context.Context, e *folderEntry) error {
	p := e.path
	old, err := s.prev.find(p)
	if err != nil {
		return err
	}
	switch {
	case old == nil:
		s.found(p, -1, true)
		rec := Record{Path: s.paths.join(p, nil)}
		rec.SetType(layout.TypeByName(p))
		s.queue(ctx, s.pending(&rec, nil))
	case errors.Is(e.statErr, fs.ErrNotExist):
		s.prev.gone(old) // removed since its folder was read
	case e.statErr != nil:
		return &PathError{Path: p, Err: unwrapPathError(e.statErr)}
	case e.statted && s.trusted(old, e.stat):
		r, _ := s.place(old, false)
		r.Placed, r.Change, r.Unchanged = false, 0, true
		s.counts.trusted++
		s.found(p, e.stat.Size, false)
	default:
		size := int64(-1)
		if e.statted {
			size = e.stat.Size
		}
		s.found(p, size, true)
		rec := Record{Path: old.Path}
		rec.SetType(layout.TypeByName(p))
		s.queue(ctx, s.pending(&rec, old))
	}
	if len(s.batch.files) > 0 && s.places.Len()-s.batch.first >= maxBatchSpan {
		s.flush(ctx)
	}
	return s.keepSettled(false)
}

// queue adds a file to read to the batch of its folder, which the walk
// hands to a worker (flush) when it leaves the folder, or when the batch
// is full.
func (s *scan) queue(ctx context.Context, job hashJob) {
	if len(s.batch.files) == 0 {
		s.batch = readJob{dir: path.Dir(job.rec.Path), files: make([]hashJob, 0, 8), first: s.places.Len() - 1}
	}
	s.batch.files = append(s.batch.files, job)
	if len(s.batch.files) == maxBatchFiles {
		s.flush(ctx)
	}
}

// flush hands the batch to a worker, once fewer than Workers run. The
// first error of a job cancels ctx, and so the walk.
func (s *scan) flush(ctx context.Context) {
	if len(s.batch.files) == 0 {
		return
	}
	job := s.batch
	s.batch = readJob{}
	s.work.Go(func() error { return s.readAll(ctx, job) })
}

// place keeps the next place in the results for a file, holding r; a
// pending place is open until a worker fills it (filled). It returns the
// place and its chunk's count of open places.
func (s *scan) place(r *Record, pending bool) (*Record, *int32) {
	i := s.places.Append(*r)
	if i%chunked.Size == 0 {
		s.open.Append(0)
	}
	open := s.open.At(i / chunked.Size)
	if pending {
		atomic.AddInt32(open, 1)
	}
	return s.places.At(i), open
}

// pending keeps a place for the file of rec, whose previous record is
// old, and returns the job that reads it into the place.
func (s *scan) pending(rec, old *Record) hashJob {
	place, open := s.place(rec, true)
	return hashJob{place: place, open: open, rec: *rec, old: old}
}

// filled records that the place of job holds its record (or is left
// empty); the walk may then move it into the results.
func filled(job *hashJob) { atomic.AddInt32(job.open, -1) }

// keepSettled moves the chunks of places that are all filled, in order,
// into the results, through the settler; with all, every chunk, the last
// too, and waits for the settler: the walk and the workers are done. It
// returns the error of Visit.
func (s *scan) keepSettled(all bool) error {
	for ; s.settled < s.open.Len() && atomic.LoadInt32(s.open.At(s.settled)) == 0 && (all || s.settled < s.open.Len()-1); s.settled++ {
		recs := s.places.Chunk(s.settled)
		s.places.Release(s.settled)
		if err := s.handOver(slices.DeleteFunc(recs, func(r Record) bool { return r.Path == "" })); err != nil {
			return err
		}
	}
	if all {
		return s.finishSettling()
	}
	return nil
}

// keep hands settled records to Visit and adds them to the results, in
// memory until there are more than SpillAfter, spilled from then on.
func (s *scan) keep(recs []Record) error {
	if s.opts.Visit != nil {
		for j := range recs {
			if err := s.opts.Visit(s.out.Len()+j, &recs[j]); err != nil {
				return err
			}
		}
	}
	if s.out.disk != nil {
		s.spill(recs)
		return nil
	}
	for i := range recs {
		s.out.Append(recs[i])
	}
	limit := s.opts.SpillAfter
	if limit <= 0 {
		limit = DefaultSpillAfter
	}
	if s.opts.SpillDir == "" || s.out.Len() <= limit {
		return nil
	}
	disk, err := newSpilled(s.opts.SpillDir)
	if err != nil {
		// Spilling is only a saving: the records stay in memory.
		s.opts.SpillDir = ""
		if s.opts.Notify != nil {
			s.opts.Notify(Note{Kind: NoteInfo, Msg: fmt.Sprintf("%v; the records stay in memory", err)})
		}
		return nil
	}
	held := s.out
	s.out = Records{disk: disk}
	for k := 0; k*chunked.Size < held.Len(); k++ {
		s.spill(held.Chunk(k))
	}
	return nil
}

// spill writes records into the results' file, keeping copies of those
// that changed for the events.
func (s *scan) spill(recs []Record) {
	s.out.disk.add(recs)
	for i := range recs {
		if r := &recs[i]; s.evented(r) {
			c := *r
			c.Path = s.changedPaths.join(r.Path, nil)
			s.changed.Append(c)
		}
	}
}

// prevRecords reads the previous state's records as the walk reaches their
// paths (a merge-join: both are in walk order), so that they need not be
// held in memory with the new ones, and holds those of the files that are
// gone.
type prevRecords struct {
	next    func() (Record, error, bool) // the next record
	pending *Record                      // one next returned that the walk has not reached yet
	mu      sync.Mutex
	deleted []Record // the records of files that are gone
}

// find returns the previous record of p, reading the records up to it:
// those of paths before p are of files that are gone.
func (pr *prevRecords) find(p string) (*Record, error) {
	for {
		r, err := pr.peek()
		if r == nil || err != nil {
			return nil, err
		}
		c := layout.ComparePaths(r.Path, p)
		if c > 0 {
			return nil, nil
		}
		pr.pending = nil
		if c == 0 {
			return r, nil
		}
		pr.gone(r)
	}
}

// peek returns the next record that the walk has not reached yet, nil
// after the last; pr.pending = nil takes it.
func (pr *prevRecords) peek() (*Record, error) {
	if pr.pending == nil {
		r, err, ok := pr.next()
		if !ok {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		pr.pending = &r
	}
	return pr.pending, nil
}

// gone records a previous record as of a file that is gone.
func (pr *prevRecords) gone(r *Record) {
	pr.mu.Lock()
	pr.deleted = append(pr.deleted, *r)
	pr.mu.Unlock()
}

// rest records the records after the last file walked as gone.
func (pr *prevRecords) rest() error {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.pending != nil {
		pr.deleted = append(pr.deleted, *pr.pending)
		pr.pending = nil
	}
	for {
		r, err, ok := pr.next()
		if !ok || err != nil {
			return err
		}
		pr.deleted = append(pr.deleted, r)
	}
}

// trusted reports whether old still describes the file whose stat is now
// cur, so that the file need not be read.
func (s *scan) trusted(old *Record, cur Stat) bool {
	return !s.opts.Verify && old.Known() && (s.opts.Reread == nil || !s.opts.Reread(old)) &&
		old.Stat().Describes(cur, s.prevScanStart) && old.Digests.HasAll(s.opts.Algorithms)
}

// readAll reads the files of a job, through the folder opened once for
// them when the tree is a Tree, and hands the rest to an idle worker
// every handOffBytes.
func (s *scan) readAll(ctx context.Context, job readJob) error {
	var h *hasher
	select {
	case h = <-s.hashers:
	default:
		h = newHasher(s.opts.Algorithms)
	}
	defer func() { s.hashers <- h }()
	fsys := s.opts.FS
	if t, ok := fsys.(*Tree); ok {
		// A folder that cannot be opened fails each file's open as it
		// fails, through the Tree.
		if dir, err := t.openDir(job.dir); err == nil {
			defer dir.Close()
			fsys = dir
		}
	}
	var tee Tee
	if s.opts.Tee != nil {
		var end func()
		tee, end = s.opts.Tee()
		defer end()
	}
	var read int64
	for i := range job.files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if read >= handOffBytes {
			rest := readJob{dir: job.dir, files: job.files[i:]}
			if s.work.TryGo(func() error { return s.readAll(ctx, rest) }) {
				return nil
			}
			read = 0
		}
		if err := s.read(ctx, h, fsys, tee, &job.files[i]); err != nil {
			return err
		}
		read += job.files[i].rec.Size
	}
	return nil
}

// read reads a file, through fsys and tee, and puts its record in its
// place.
func (s *scan) read(ctx context.Context, h *hasher, fsys fs.FS, tee Tee, job *hashJob) error {
	err := h.hashFile(ctx, fsys, &job.rec, job.old == nil, tee)
	for reads := 1; reads < MaxReads && errors.Is(err, ErrChangedWhileReading); reads++ {
		err = h.hashFile(ctx, fsys, &job.rec, job.old == nil, tee)
	}
	if errors.Is(err, ErrChangedWhileReading) {
		err = fmt.Errorf("%w (read %d times)", err, MaxReads)
	}
	var teeErr *TeeError
	switch {
	case errors.As(err, &teeErr):
		return teeErr // the output's, not the file's
	case errors.Is(err, fs.ErrNotExist):
		s.drop(job) // removed since the folder was read
	case err != nil && s.opts.SkipUnreadable && errors.Is(err, fs.ErrPermission) && job.old != nil:
		s.keepUnreadable(job, err)
	case err != nil && s.opts.SkipUnreadable && errors.Is(err, fs.ErrPermission):
		s.drop(job)
		s.skip(job.rec.Path, SkipUnreadable, "unreadable, skipped: "+unwrapPathError(err).Error())
	case err != nil:
		return &PathError{Path: job.rec.Path, Err: unwrapPathError(err)}
	default:
		s.settle(job)
		if s.opts.Notify != nil {
			s.opts.Notify(Note{Kind: NoteHashed, Path: job.rec.Path, Bytes: job.rec.Size})
		}
	}
	return nil
}

// settle compares the record of a file just read with its previous one,
// marking it, and puts it in its place.
func (s *scan) settle(job *hashJob) {
	r := &job.rec
	switch {
	case job.old == nil:
		r.Change, r.Seen = Created, s.opts.Now
	case !SameContent(job.old, r):
		r.Change, r.Seen = Updated, s.opts.Now
	default:
		r.Seen = job.old.Seen
		r.Unchanged = sameFile(job.old, r)
	}
	*job.place = *r
	s.counts.hashed.Add(1)
	s.counts.hashedBytes.Add(r.Size)
	filled(job)
}

// sameFile reports whether two records of a path describe the same
// published bytes of the same file at the same stat.
func sameFile(a, b *Record) bool {
	return a.Size == b.Size && a.ModTime == b.ModTime && a.Inode == b.Inode &&
		a.Known() && a.Fingerprint() == b.Fingerprint() && a.Digests.Equal(&b.Digests)
}

// drop leaves the place of a file that could not be read empty: a file
// gone, if prev had it.
func (s *scan) drop(job *hashJob) {
	job.place.Path = ""
	if job.old != nil {
		s.prev.gone(job.old)
	}
	filled(job)
}

// Unreadable files (ScanOptions.SkipUnreadable)
//
// A file or folder that cannot be read for lack of permission is most
// often so for a moment: a file written by a tool that opens it 0600 and
// then changes its mode, a folder being restored. One never published is
// left out, with a note; one published before keeps its last published
// version, record and placement, with a note, rather than being published
// as deleted and created again once readable.

// keepUnreadable keeps the previous record of a file that cannot be read
// in its place, unchanged.
func (s *scan) keepUnreadable(job *hashJob, err error) {
	r := job.place
	*r = *job.old
	r.Placed, r.Change, r.Unchanged = false, 0, true
	filled(job)
	s.noteKept(job.old.Path, "unreadable: its last published version is kept: "+unwrapPathError(err).Error())
}

// keepUnreadableFolder keeps, unchanged, the previous records of the
// files under the folder p, which cannot be read. They come next in walk
// order: after the records before p, which are of files gone, and before
// those of any path the walk visits after p.
func (s *scan) keepUnreadableFolder(p string, err error) error {
	kept := 0
	for {
		old, perr := s.prev.peek()
		if perr != nil {
			return perr
		}
		if old == nil || !strings.HasPrefix(old.Path, p+"/") && layout.ComparePaths(old.Path, p) > 0 {
			break
		}
		s.prev.pending = nil
		if !strings.HasPrefix(old.Path, p+"/") {
			s.prev.gone(old)
			continue
		}
		r, _ := s.place(old, false)
		r.Placed, r.Change, r.Unchanged = false, 0, true
		kept++
	}
	why := unwrapPathError(err).Error()
	if kept == 0 {
		s.skip(p, SkipUnreadable, "unreadable, skipped: "+why)
	} else {
		held := fmt.Sprintf("the last published versions of the %d files it held are kept", kept)
		if kept == 1 {
			held = "the last published version of the file it held is kept"
		}
		s.noteKept(p, "unreadable folder: "+held+": "+why)
	}
	return s.keepSettled(false)
}

// noteKept notes a file or folder that cannot be read, whose last
// published version is kept: not a file left out, so not counted as
// skipped.
func (s *scan) noteKept(p, msg string) {
	if s.opts.Notify != nil {
		s.opts.Notify(Note{Kind: NoteSkipped, Code: KeptUnreadable, Path: p, Msg: msg})
	}
}

// events returns the change events of the scan in walk order: the files
// created and updated, and the previous records of the files gone.
func (s *scan) events() []Event {
	deleted := s.prev.deleted
	// Files that vanished while they were read join the deletions late.
	slices.SortFunc(deleted, func(a, b Record) int { return layout.ComparePaths(a.Path, b.Path) })
	// Sized first: a cold build's million events, grown by appending,
	// would be copied at the build's peak.
	n := len(deleted)
	for range s.changedRecords() {
		n++
	}
	events := make([]Event, 0, n)
	i := 0
	for r := range s.changedRecords() {
		for ; i < len(deleted) && layout.ComparePaths(deleted[i].Path, r.Path) < 0; i++ {
			events = append(events, Event{Change: Deleted, Time: s.opts.Now, Record: &deleted[i]})
		}
		events = append(events, Event{Change: r.Change, Time: s.opts.Now, Record: r})
	}
	for ; i < len(deleted); i++ {
		events = append(events, Event{Change: Deleted, Time: s.opts.Now, Record: &deleted[i]})
	}
	return events
}

// changedRecords yields the records of the results that make events, in
// walk order: those of out, or their copies when out is spilled.
func (s *scan) changedRecords() iter.Seq[*Record] {
	return func(yield func(*Record) bool) {
		all := s.out.List.All() // in memory, unless spilled
		if s.out.disk != nil {
			all = s.changed.All()
		}
		for _, r := range all {
			if s.evented(r) && !yield(r) {
				return
			}
		}
	}
}

// evented reports whether the record of a file found makes an event.
func (s *scan) evented(r *Record) bool {
	return r.Change != 0 && !(s.opts.Baseline && r.Change == Created)
}

// found reports a file to Notify: progress displays learn from it how
// much there is to read before the reading is done.
func (s *scan) found(p string, size int64, read bool) {
	if s.opts.Notify != nil {
		s.opts.Notify(Note{Kind: NoteFound, Path: p, Bytes: size, Read: read})
	}
}

// The codes of skip notes.
const (
	SkipSymlink    = "symlink"    // a symbolic link not followed: following is off
	SkipSpecial    = "special"    // a FIFO, socket or device
	SkipUnreadable = "unreadable" // refused for lack of permission (SkipUnreadable)
	// KeptUnreadable is a file, or a folder of files, refused for lack of
	// permission, whose last published version is kept (SkipUnreadable).
	KeptUnreadable = "unreadable-kept"
	// SkipSymlinkRefused is a symbolic link that following does not
	// follow: it points outside the source, loops or is broken. It has a
	// code of its own, so that what a warning about many of them advises
	// is not to turn following on, which it is.
	SkipSymlinkRefused = "symlink-refused"
)

func (s *scan) skip(p, code, reason string) {
	s.counts.skipped.Add(1)
	if s.opts.Notify != nil {
		s.opts.Notify(Note{Kind: NoteSkipped, Code: code, Path: p, Msg: reason})
	}
}

func skipCode(m fs.FileMode) string {
	if m&fs.ModeSymlink != 0 {
		return SkipSymlink
	}
	return SkipSpecial
}

func skipReason(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link not followed"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO) skipped"
	case m&fs.ModeSocket != 0:
		return "socket skipped"
	case m&fs.ModeDevice != 0:
		return "device file skipped"
	}
	return "not a regular file"
}

// unwrapPathError drops the *fs.PathError wrapper, whose path is relative to
// the walk root and would be repeated by our own PathError.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
