package watch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/rsgen/rsgen/internal/sysfile"
	"github.com/rsgen/rsgen/layout"
)

// Defaults of the Options durations.
const (
	// DefaultDebounce is how long the tree must stay quiet before a
	// rebuild.
	DefaultDebounce = 300 * time.Millisecond
	// DefaultMaxWait bounds how long a steady stream of events can put a
	// rebuild off.
	DefaultMaxWait = 3 * time.Second
	// DefaultPoll is the polling interval after watching failed.
	DefaultPoll = 2 * time.Second
)

// Options configures a Watcher.
type Options struct {
	// Root is the folder watched, with every folder below it.
	Root string
	// Skip holds folders that are never watched, such as the output and
	// state folders when they lie inside Root.
	Skip []string
	// ConfigFile, when set, is watched too: its changes set
	// Trigger.Config.
	ConfigFile string
	// Debounce is how long the tree must stay quiet after an event before
	// a Trigger is sent; MaxWait bounds the time from the first event of a
	// batch to its Trigger. Zero means DefaultDebounce and DefaultMaxWait.
	Debounce, MaxWait time.Duration
	// Poll, when positive, makes the Watcher poll: it sends a Trigger every
	// Poll instead of watching the tree.
	Poll time.Duration
	// Warn receives what the Watcher reports without stopping: folders it
	// cannot watch, lost events, the switch to polling. It is called from
	// New and from the Watcher's goroutine, never concurrently. May be nil.
	Warn func(error)

	// addWatch replaces fsnotify's Add in tests.
	addWatch func(string) error
	// fallbackPoll replaces DefaultPoll in tests.
	fallbackPoll time.Duration
}

// Trigger asks for one rebuild. Something may have changed; its fields say
// what else is known.
type Trigger struct {
	// Config is set when the configuration file changed.
	Config bool
	// Polled is set when a poll tick contributed to the Trigger: it may be
	// that nothing changed at all.
	Polled bool
}

// ErrWatchLimit is wrapped in the warning sent when the operating system
// refuses more watches (inotify's max_user_watches or max_user_instances)
// and the Watcher falls back to polling.
var ErrWatchLimit = errors.New("too many folders to watch")

// Watcher turns changes below a folder into Triggers.
type Watcher struct {
	opts   Options
	root   string
	fsw    *fsnotify.Watcher // nil when polling
	dirs   map[string]bool   // folders being watched
	poll   time.Duration     // polling interval, 0 when watching
	config fileStamp         // the configuration file when last polled

	c        chan Trigger
	done     chan struct{}
	finished chan struct{}
}

// New watches opts.Root and every folder below it, and the configuration
// file. When the operating system refuses enough watches it warns and
// polls instead. Triggers come on Triggers until Close.
func New(opts Options) (*Watcher, error) {
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = DefaultMaxWait
	}
	if opts.fallbackPoll <= 0 {
		opts.fallbackPoll = DefaultPoll
	}
	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", opts.Root, err)
	}
	if info, err := os.Stat(root); err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	} else if !info.IsDir() {
		return nil, fmt.Errorf("watch %s: not a folder", root)
	}
	skip := make([]string, 0, len(opts.Skip))
	for _, s := range opts.Skip {
		abs, err := filepath.Abs(s)
		if err != nil {
			return nil, fmt.Errorf("watch: skip %s: %w", s, err)
		}
		skip = append(skip, abs)
	}
	opts.Skip = skip
	w := &Watcher{opts: opts, root: root, dirs: map[string]bool{},
		c: make(chan Trigger), done: make(chan struct{}), finished: make(chan struct{})}
	if opts.ConfigFile != "" {
		w.opts.ConfigFile = filepath.Clean(opts.ConfigFile)
		w.config = stamp(w.opts.ConfigFile)
	}
	if opts.Poll > 0 {
		w.poll = opts.Poll
	} else if err := w.start(); err != nil {
		return nil, err
	}
	go w.loop()
	return w, nil
}

// start sets up fsnotify and adds the watches, or falls back to polling.
func (w *Watcher) start() error {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		if isLimit(err) {
			w.fallBack(err)
			return nil
		}
		return fmt.Errorf("watch %s: %w", w.root, err)
	}
	w.fsw = fsw
	if w.opts.addWatch == nil {
		w.opts.addWatch = fsw.Add
	}
	err = w.addTree(w.root)
	if err == nil && w.opts.ConfigFile != "" {
		err = w.addDir(filepath.Dir(w.opts.ConfigFile))
	}
	switch {
	case isLimit(err):
		w.fallBack(err)
	case err != nil:
		_ = fsw.Close() // the error below says more
		return fmt.Errorf("watch %s: %w", w.root, err)
	}
	return nil
}

// Triggers returns the channel of Triggers. A Trigger waits there, merged
// with what happens meanwhile, until it is received; the next one starts
// collecting when it is.
func (w *Watcher) Triggers() <-chan Trigger { return w.c }

// Close stops watching.
func (w *Watcher) Close() error {
	close(w.done)
	<-w.finished
	if w.fsw != nil {
		if err := w.fsw.Close(); err != nil {
			return fmt.Errorf("watch %s: close: %w", w.root, err)
		}
	}
	return nil
}

// loop collects events into one pending Trigger. The first event of a
// batch arms the single timer; every further event pushes it back by the
// debounce, but never past MaxWait from the first. When it fires the
// Trigger is ready and is offered on w.c; events until it is received
// merge into it.
func (w *Watcher) loop() {
	defer close(w.finished)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var ticker *time.Ticker
	var tick <-chan time.Time
	defer func() {
		if ticker != nil {
			ticker.Stop()
		}
	}()
	var (
		pending Trigger
		armed   bool // an event came and the timer runs
		first   time.Time
		ready   bool // pending is offered on w.c
	)
	mark := func() {
		if ready {
			return // the coming rebuild scans after this event anyway
		}
		now := time.Now()
		if !armed {
			armed, first = true, now
		}
		timer.Reset(min(w.opts.Debounce, first.Add(w.opts.MaxWait).Sub(now)))
	}
	for {
		if w.poll > 0 && ticker == nil {
			ticker = time.NewTicker(w.poll)
			tick = ticker.C
		}
		var events <-chan fsnotify.Event
		var errs <-chan error
		if w.fsw != nil {
			events, errs = w.fsw.Events, w.fsw.Errors
		}
		var out chan<- Trigger
		if ready {
			out = w.c
		}
		select {
		case <-w.done:
			return
		case out <- pending:
			pending, ready = Trigger{}, false
		case <-timer.C:
			armed, ready = false, true
		case ev := <-events:
			if w.handle(ev, &pending) {
				mark()
			}
		case err := <-errs:
			w.lost(err)
			mark()
		case <-tick:
			if w.opts.ConfigFile != "" {
				if s := stamp(w.opts.ConfigFile); s != w.config {
					w.config, pending.Config = s, true
				}
			}
			pending.Polled = true
			timer.Stop()
			armed, ready = false, true
		}
	}
}

// handle applies one event to the watch list and pending, and reports
// whether it marks the tree dirty.
func (w *Watcher) handle(ev fsnotify.Event, pending *Trigger) bool {
	if ev.Op == fsnotify.Chmod {
		return false // permissions or times only: the content is the same
	}
	dirty := false
	if ev.Name == w.opts.ConfigFile {
		pending.Config, dirty = true, true
	}
	if !w.inTree(ev.Name) || IgnoredName(filepath.Base(ev.Name)) {
		return dirty
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		w.forget(ev.Name)
	}
	if ev.Has(fsnotify.Create) {
		if info, err := os.Lstat(ev.Name); err == nil && info.IsDir() {
			// Files may have been created in the new folder before its
			// watch was added; the rebuild's scan finds them.
			if err := w.addTree(ev.Name); isLimit(err) {
				w.fallBack(err)
			}
		}
	}
	return true
}

// lost handles a watch error: events may have been lost, so it warns and
// reads the folder tree again, since folders may have been created unseen.
// The Trigger that follows is an ordinary one: every rebuild scans
// everything.
func (w *Watcher) lost(err error) {
	w.warn(fmt.Errorf("watch %s: %w; rescanning everything", w.root, err))
	for d := range w.dirs {
		if _, err := os.Lstat(d); err != nil {
			w.forget(d)
		}
	}
	if err := w.addTree(w.root); isLimit(err) {
		w.fallBack(err)
	}
}

// inTree reports whether p is Root or below it, and not in a skipped
// folder.
func (w *Watcher) inTree(p string) bool {
	if !layout.Within(p, w.root) {
		return false
	}
	for _, s := range w.opts.Skip {
		if layout.Within(p, s) {
			return false
		}
	}
	return true
}

// addTree watches dir and every folder below it that is not yet watched.
// It stops at the first error that says the watch limit is reached;
// other errors are warnings.
func (w *Watcher) addTree(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				w.warn(fmt.Errorf("watch: %w", err))
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if !w.inTree(p) {
			return filepath.SkipDir
		}
		return w.addDir(p)
	})
}

// addDir watches one folder. It returns only watch-limit errors.
func (w *Watcher) addDir(dir string) error {
	if w.dirs[dir] || w.fsw == nil {
		return nil
	}
	err := w.opts.addWatch(dir)
	switch {
	case err == nil:
		w.dirs[dir] = true
	case isLimit(err):
		return fmt.Errorf("watch %s: %w", dir, err)
	case !errors.Is(err, fs.ErrNotExist):
		w.warn(fmt.Errorf("watch %s: %w", dir, err))
	}
	return nil
}

// forget drops the watches of p and the folders below it: p was removed or
// renamed. A renamed folder's inotify watch would otherwise keep reporting
// under its old name; its new name comes as a Create and is added afresh.
func (w *Watcher) forget(p string) {
	for d := range w.dirs {
		if layout.Within(d, p) {
			delete(w.dirs, d)
			if w.fsw != nil {
				_ = w.fsw.Remove(d) // fails when the watch went with the folder: fine
			}
		}
	}
}

// fallBack stops watching and polls instead.
func (w *Watcher) fallBack(cause error) {
	w.poll = w.opts.fallbackPoll
	w.warn(fmt.Errorf("%w: %w; polling every %s instead (raise fs.inotify.max_user_watches or max_user_instances to watch)",
		ErrWatchLimit, cause, w.poll))
	if w.fsw != nil {
		_ = w.fsw.Close() // polling from now on: its errors no longer matter
		w.fsw = nil
	}
	clear(w.dirs)
}

func (w *Watcher) warn(err error) {
	if w.opts.Warn != nil {
		w.opts.Warn(err)
	}
}

// isLimit reports whether err says that no more watches can be added.
func isLimit(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE)
}

// fileStamp identifies a version of a file for polling.
type fileStamp struct {
	size, mtime int64
	ino         uint64
}

func stamp(path string) fileStamp {
	info, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{size: info.Size(), mtime: info.ModTime().UnixNano(), ino: sysfile.Inode(info)}
}
