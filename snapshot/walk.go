package snapshot

import (
	"context"
	"errors"
	"io/fs"
	"sync"
)

// Walking the tree (Scan)
//
// The walk visits the tree in walk order on one goroutine, which merges
// it with the previous records (both are in walk order) and keeps the
// order of the results. Folder readers, one per worker, read the folders
// ahead of it: a reader lists a folder and stats its regular files
// relative to the folder it listed (Tree.list), so that the walk finds
// every stat in hand and only decides, file by file, whether the
// previous record is trusted or the file must be read. When the walk
// enters a folder it leaves out what Exclude and checkName refuse, in
// the folder's order, and hands the subfolders it kept to the readers,
// the first on top: the folders it enters next, in walk order. The
// readers hold at most a few folders per reader that the walk has not
// entered yet (maxHeldFolders, maxHeldEntries), so that the memory of a
// walk is that of the folders it is in, as fs.WalkDir's is, and of those
// few; a folder the walk needs before any reader took it, it reads
// itself.

// The readers' lookahead: they start no folder while the walk has not
// entered maxHeldFolders per reader of those they read, or while those
// hold maxHeldEntries entries. The folders count is generous: the readers
// take a folder's subfolders as soon as the walk enters it, and those the
// walk enters last (a top folder's, while it walks the first of them)
// stay held the longest; at 4 per reader, the siblings held left the
// readers one folder ahead, and the walk listed 60% of tree b's folders
// itself, at 32 a third.
const (
	maxHeldFolders = 32
	maxHeldEntries = 64 << 10
)

// folderRead is the reading of one folder, by a reader or by the walk.
type folderRead struct {
	dir     string
	started bool          // a reader or the walk took it (folderReaders.mu)
	done    chan struct{} // closed once a reader read it
	entries []folderEntry
	err     error
}

// folderReaders read folders, several at once, for the walk: schedule
// hands them the folders the walk will enter, take gives the walk a
// folder's entries, reading it at once if no reader has started it.
type folderReaders struct {
	list func(dir string) ([]folderEntry, error)
	mu   sync.Mutex
	wake sync.Cond
	// todo are the folders to read, the one the walk enters first last;
	// those the walk took itself are left where they are, and skipped.
	todo        []*folderRead
	held        int // folders a reader took that the walk has not
	heldEntries int // and their entries, once read
	limit       int // of held
	stopped     bool
	running     sync.WaitGroup
}

// startFolderReaders starts n readers that read folders with list.
func startFolderReaders(n int, list func(dir string) ([]folderEntry, error)) *folderReaders {
	fr := &folderReaders{list: list, limit: maxHeldFolders * n}
	fr.wake.L = &fr.mu
	fr.running.Add(n)
	for range n {
		go fr.run()
	}
	return fr
}

// run reads the folders scheduled, until stop.
func (fr *folderReaders) run() {
	defer fr.running.Done()
	for {
		f := fr.next()
		if f == nil {
			return
		}
		f.entries, f.err = fr.list(f.dir)
		fr.mu.Lock()
		fr.heldEntries += len(f.entries)
		fr.mu.Unlock()
		close(f.done)
	}
}

// next waits for a folder to read while the lookahead allows one, and
// takes it; nil once stopped.
func (fr *folderReaders) next() *folderRead {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	for {
		for len(fr.todo) > 0 && fr.todo[len(fr.todo)-1].started {
			fr.todo = fr.todo[:len(fr.todo)-1]
		}
		if fr.stopped {
			return nil
		}
		if len(fr.todo) > 0 && fr.held < fr.limit && fr.heldEntries < maxHeldEntries {
			f := fr.todo[len(fr.todo)-1]
			fr.todo = fr.todo[:len(fr.todo)-1]
			f.started = true
			fr.held++
			return f
		}
		fr.wake.Wait()
	}
}

// schedule hands the readers the folders reads, which the walk enters in
// that order, before any folder scheduled earlier.
func (fr *folderReaders) schedule(reads []*folderRead) {
	if len(reads) == 0 {
		return
	}
	fr.mu.Lock()
	for i := len(reads) - 1; i >= 0; i-- {
		reads[i].done = make(chan struct{})
		fr.todo = append(fr.todo, reads[i])
	}
	fr.mu.Unlock()
	fr.wake.Broadcast()
}

// take returns the entries of the folder f, read by a reader or, when none
// has started it, by the caller at once.
func (fr *folderReaders) take(f *folderRead) ([]folderEntry, error) {
	fr.mu.Lock()
	if !f.started {
		f.started = true
		fr.mu.Unlock()
		return fr.list(f.dir)
	}
	fr.mu.Unlock()
	<-f.done
	fr.mu.Lock()
	fr.held--
	fr.heldEntries -= len(f.entries)
	fr.mu.Unlock()
	fr.wake.Signal()
	entries, err := f.entries, f.err
	f.entries = nil
	return entries, err
}

// stop stops the readers, once they have read the folders they are
// reading, and waits for them.
func (fr *folderReaders) stop() {
	fr.mu.Lock()
	fr.stopped = true
	fr.mu.Unlock()
	fr.wake.Broadcast()
	fr.running.Wait()
}

// walkFolder is a folder the walk is in: its entries, the next one to
// visit, and the reads of the subfolders it enters, in order.
type walkFolder struct {
	entries  []folderEntry
	next     int
	subs     []*folderRead
	nextSub  int
	excluded []bool // per entry: left out by Exclude or checkName
}

// walk visits every entry of the tree in walk order: it enters the
// folders and adds the files (addFile).
func (s *scan) walk(ctx context.Context) error {
	top, err := s.enter(&folderRead{dir: "."})
	if err != nil {
		return err
	}
	stack := []*walkFolder{top}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		f := stack[len(stack)-1]
		if f.next == len(f.entries) {
			s.flush(ctx) // the folder's files to read
			stack[len(stack)-1] = nil
			stack = stack[:len(stack)-1]
			continue
		}
		i := f.next
		f.next++
		e := &f.entries[i]
		var sub *walkFolder
		switch {
		case f.excluded[i]:
		case e.mode.IsDir():
			read := f.subs[f.nextSub]
			f.nextSub++
			s.flush(ctx) // the folder's files to read so far
			sub, err = s.enter(read)
		case e.mode.IsRegular():
			err = s.addFile(ctx, e)
		case e.mode&fs.ModeSymlink != 0 && s.opts.FollowSymlinks:
			if sub, err = s.follow(ctx, e.path); sub != nil {
				s.flush(ctx)
			}
		default:
			s.skip(e.path, skipCode(e.mode), skipReason(e.mode))
		}
		if err != nil {
			return err
		}
		if sub != nil {
			stack = append(stack, sub)
		}
	}
	return nil
}

// enter reads the folder of read (or takes what a reader read), leaves out
// the entries that Exclude or checkName refuse, and schedules the
// subfolders kept; nil when the folder is not walked.
func (s *scan) enter(read *folderRead) (*walkFolder, error) {
	entries, err := s.readers.take(read)
	if err != nil {
		if walk, err := s.folderError(read.dir, err); !walk || err != nil {
			return nil, err
		}
	}
	f := &walkFolder{entries: entries, excluded: make([]bool, len(entries))}
	for i := range entries {
		e := &entries[i]
		if s.opts.Exclude != nil && s.opts.Exclude(e.path, e.mode.IsDir()) {
			f.excluded[i] = true
			continue
		}
		skipped, err := s.checkName(e.path)
		if err != nil {
			return nil, err
		}
		f.excluded[i] = skipped
		if !skipped && e.mode.IsDir() {
			f.subs = append(f.subs, &folderRead{dir: e.path})
		}
	}
	s.readers.schedule(f.subs)
	return f, nil
}

// folderError handles the failure to read the folder p, and says whether
// the entries read before it are walked, as fs.WalkDir does: a folder
// removed since its parent was read is left out, as a file removed before
// its read is; one that cannot be read for lack of permission, with
// SkipUnreadable, keeps its files' previous records (keepUnreadableFolder).
// Any other failure fails the scan.
func (s *scan) folderError(p string, err error) (walk bool, _ error) {
	switch {
	case p != "." && errors.Is(err, fs.ErrNotExist):
		return true, nil
	case p != "." && s.opts.SkipUnreadable && errors.Is(err, fs.ErrPermission):
		return false, s.keepUnreadableFolder(p, err)
	}
	return false, &PathError{Path: p, Err: unwrapPathError(err)}
}

// list lists the folder dir of the scanned tree, stating its regular
// files when stat says so.
func (s *scan) list(dir string, stat bool) ([]folderEntry, error) {
	if t, ok := s.opts.FS.(*Tree); ok {
		return t.list(dir, stat)
	}
	return listFS(s.opts.FS, dir, stat)
}
