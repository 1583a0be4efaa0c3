package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
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
	// Tee, when set, receives the bytes of every file that is read.
	Tee Tee
	// Notify, when set, receives what the scan does, as it does it.
	Notify func(Note)
	// FollowSymlinks follows symbolic links whose targets lie inside the
	// source folder (see follow.go); FS must be a Tree that follows them.
	FollowSymlinks bool
	// SkipUnreadable turns a file or folder that cannot be read for lack
	// of permission into a skip note instead of a failure.
	SkipUnreadable bool
}

// NoteKind says what a Note reports.
type NoteKind int

// The notes a scan sends.
const (
	NoteSkipped NoteKind = iota + 1 // a file left out, with a reason: a warning
	NoteHashed                      // a file was read and fingerprinted
	NoteFound                       // a file was found; Read says whether it will be read
	NoteWalked                      // the walk has found every file; reading may go on
)

// Note reports one thing a scan did.
type Note struct {
	Kind  NoteKind
	Code  string // NoteSkipped: why, for grouping: "symlink", "special" or "unreadable"
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
}

// PathError is a scan failure that names the file or folder at fault.
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string { return fmt.Sprintf("%s: %v", e.Path, e.Err) }
func (e *PathError) Unwrap() error { return e.Err }

// Scan walks the source tree and returns its files in walk order. Files
// whose stat matches a trusted record of prev (see the package comment)
// are taken from prev; every other file is read once, in parallel. The
// Seen field of the results is left for Diff to fill.
func Scan(ctx context.Context, prev *State, opts ScanOptions) ([]Record, ScanStats, error) {
	s := &scan{opts: opts, prev: prev.Files, trustBefore: prev.ScanStart - int64(RaceWindow),
		// Most trees change little between builds: sized for the last one,
		// the list rarely grows, and never copies a million records.
		files: make([]Record, 0, len(prev.Files)+len(prev.Files)/16)}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan *hashJob, 4*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.hashWorker(ctx, cancel, jobs)
		}()
	}
	walkErr := fs.WalkDir(opts.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		return s.visit(p, d, err, jobs)
	})
	close(jobs)
	if walkErr == nil && opts.Notify != nil {
		opts.Notify(Note{Kind: NoteWalked})
	}
	wg.Wait()
	// A worker's error cancels the walk; it, not the cancellation, is the
	// cause to report.
	if s.err != nil {
		return nil, ScanStats{}, s.err
	}
	if walkErr != nil {
		return nil, ScanStats{}, walkErr
	}
	if err := ctx.Err(); err != nil {
		return nil, ScanStats{}, err
	}
	if s.dropped {
		s.files = slices.DeleteFunc(s.files, func(r Record) bool { return r.Path == "" })
	}
	s.stats.Files = len(s.files)
	return s.files, s.stats, nil
}

type scan struct {
	opts        ScanOptions
	prev        []Record
	cursor      int // into prev, advanced in walk order
	trustBefore int64

	// The walk appends to files, in walk order, and workers put the
	// records of the files they read in the places kept for them: a job
	// lives only while its file is read, so that a cold scan holds each
	// record once, not once more per queued file.
	mu      sync.Mutex
	files   []Record
	dropped bool // some places in files were left empty (Path "")
	stats   ScanStats
	err     error // the first hashing error
}

type hashJob struct {
	index int // the record's place in files
	rec   Record
	isNew bool // prev holds no record of the path
}

func (s *scan) visit(p string, d fs.DirEntry, err error, jobs chan<- *hashJob) error {
	if err != nil && p != "." && errors.Is(err, fs.ErrNotExist) {
		return nil // removed since its folder was read, like a file before its read
	}
	if err != nil {
		if s.opts.SkipUnreadable && errors.Is(err, fs.ErrPermission) && p != "." {
			s.skip(p, SkipUnreadable, "unreadable, skipped: "+unwrapPathError(err).Error())
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		return &PathError{Path: p, Err: unwrapPathError(err)}
	}
	if p == "." {
		return nil
	}
	if s.opts.Exclude != nil && s.opts.Exclude(p, d.IsDir()) {
		if d.IsDir() {
			return fs.SkipDir
		}
		return nil
	}
	if d.IsDir() {
		return nil
	}
	if !d.Type().IsRegular() {
		if d.Type()&fs.ModeSymlink != 0 && s.opts.FollowSymlinks {
			return s.follow(p, jobs)
		}
		s.skip(p, skipCode(d.Type()), skipReason(d.Type()))
		return nil
	}
	return s.addFile(p, d.Info, jobs)
}

// addFile adds the regular file p to the results: from its trusted
// previous record, or read by a worker. A file new to the state is read
// whatever its stat says, and is not stat'ed here: the read stats the file
// it opens.
func (s *scan) addFile(p string, stat func() (fs.FileInfo, error), jobs chan<- *hashJob) error {
	old := s.previous(p)
	if old == nil {
		s.found(p, -1, true)
		s.queue(Record{Path: p, Type: layout.TypeByName(p)}, true, jobs)
		return nil
	}
	info, err := stat()
	if errors.Is(err, fs.ErrNotExist) {
		return nil // removed since the folder was read
	}
	if err != nil {
		return &PathError{Path: p, Err: unwrapPathError(err)}
	}
	rec := Record{Path: p, Size: info.Size(), ModTime: info.ModTime().UnixNano(), Inode: inode(info)}
	if s.trusted(old, &rec) {
		s.mu.Lock()
		s.files = append(s.files, *old)
		s.mu.Unlock()
		s.found(p, rec.Size, false)
		return nil
	}
	s.found(p, rec.Size, true)
	rec.Type = layout.TypeByName(p)
	s.queue(rec, false, jobs)
	return nil
}

// queue hands a file to the workers, keeping its place in the results.
func (s *scan) queue(rec Record, isNew bool, jobs chan<- *hashJob) {
	s.mu.Lock()
	job := &hashJob{index: len(s.files), rec: rec, isNew: isNew}
	s.files = append(s.files, rec)
	s.mu.Unlock()
	jobs <- job
}

// previous returns the record of p in prev, advancing the cursor past
// every path before p.
func (s *scan) previous(p string) *Record {
	for s.cursor < len(s.prev) {
		c := layout.ComparePaths(s.prev[s.cursor].Path, p)
		if c > 0 {
			return nil
		}
		s.cursor++
		if c == 0 {
			return &s.prev[s.cursor-1]
		}
	}
	return nil
}

// trusted reports whether old still describes the file whose stat is in
// cur, so that the file need not be read.
func (s *scan) trusted(old, cur *Record) bool {
	return !s.opts.Verify && old.Known() && (s.opts.Reread == nil || !s.opts.Reread(old)) &&
		old.Size == cur.Size && old.ModTime == cur.ModTime && old.Inode == cur.Inode &&
		old.ModTime < s.trustBefore &&
		old.Digests.HasAll(s.opts.Algorithms)
}

func (s *scan) hashWorker(ctx context.Context, cancel context.CancelFunc, jobs <-chan *hashJob) {
	h := newHasher(s.opts.Algorithms)
	for job := range jobs {
		if ctx.Err() != nil {
			continue
		}
		err := h.hashFile(ctx, s.opts.FS, &job.rec, job.isNew, s.opts.Tee)
		for reads := 1; reads < MaxReads && errors.Is(err, ErrChangedWhileReading); reads++ {
			err = h.hashFile(ctx, s.opts.FS, &job.rec, job.isNew, s.opts.Tee)
		}
		if errors.Is(err, ErrChangedWhileReading) {
			err = fmt.Errorf("%w (read %d times)", err, MaxReads)
		}
		if errors.Is(err, fs.ErrNotExist) {
			s.drop(job) // removed since the folder was read
			continue
		}
		if err != nil && s.opts.SkipUnreadable && errors.Is(err, fs.ErrPermission) {
			s.drop(job)
			s.skip(job.rec.Path, SkipUnreadable, "unreadable, skipped: "+unwrapPathError(err).Error())
			continue
		}
		if err != nil {
			s.fail(&PathError{Path: job.rec.Path, Err: unwrapPathError(err)})
			cancel()
			continue
		}
		s.settle(job)
		if s.opts.Notify != nil {
			s.opts.Notify(Note{Kind: NoteHashed, Path: job.rec.Path, Bytes: job.rec.Size})
		}
	}
}

// settle puts the record of a file just read in its place.
func (s *scan) settle(job *hashJob) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[job.index] = job.rec
	s.stats.Hashed++
	s.stats.HashedBytes += job.rec.Size
}

// drop leaves the place of a file that could not be read empty.
func (s *scan) drop(job *hashJob) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[job.index].Path = ""
	s.dropped = true
}

// found reports a file to Notify: progress displays learn from it how
// much there is to read before the reading is done.
func (s *scan) found(p string, size int64, read bool) {
	if s.opts.Notify != nil {
		s.opts.Notify(Note{Kind: NoteFound, Path: p, Bytes: size, Read: read})
	}
}

func (s *scan) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// The codes of skip notes.
const (
	SkipSymlink    = "symlink"    // a symbolic link not followed
	SkipSpecial    = "special"    // a FIFO, socket or device
	SkipUnreadable = "unreadable" // refused for lack of permission (SkipUnreadable)
)

func (s *scan) skip(p, code, reason string) {
	s.mu.Lock()
	s.stats.Skipped++
	s.mu.Unlock()
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

func inode(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
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
