package deploy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// Options configures one deploy.
type Options struct {
	// Out is the output folder of the build to publish, State its state
	// folder: the deploy keeps its own files in State/deploy.
	Out, State string
	// BaseURL is where the documents say the output is served: the
	// order of the writes reads their links.
	BaseURL string
	// CopyResources says that the build places the resources in Out
	// (copy_resources): the deploy then expects them there.
	CopyResources bool
	// ShortCache is the max-age of the documents that change.
	ShortCache time.Duration
	// Store is where to publish.
	Store Store
	// Policy gives the headers of every file; nil takes OutputPolicy.
	Policy HeaderPolicy
	// MaxDeletes fails the deploy, before it writes anything, when it
	// would delete more keys than this; negative: no limit.
	MaxDeletes int
	// Grace keeps a key that left the output this long before deleting
	// it, so that caches holding documents that still list it expire
	// first. It is counted from the first deploy that found it gone.
	Grace time.Duration
	// DryRun plans and reports, and writes nothing.
	DryRun bool
	// BreakLock takes the store's lock over from a deploy known to be gone.
	BreakLock bool
	// Notify, when set, receives progress and warnings; it may be called
	// from several goroutines at once.
	Notify func(Event)
	// Now is the clock, for the grace period and the lock; nil is time.Now.
	Now func() time.Time
}

// EventKind says what an Event reports.
type EventKind int

// The events of a deploy.
const (
	EventWarning EventKind = iota + 1 // Path, Msg
	EventInfo                         // Msg
	EventStep                         // a step starts: Step, Count writes, Bytes to send
	EventWritten                      // an object was written: Step, Path, Bytes sent
	EventDeleted                      // Count keys were deleted
	EventFound                        // an object an interrupted deploy wrote was found on the store: Step, Path, Bytes not sent
)

// Event reports one thing a deploy did.
type Event struct {
	Kind  EventKind
	Step  layout.Step
	Path  string
	Count int
	Bytes int64
	Msg   string
}

// StepSummary counts the writes of one step.
type StepSummary struct {
	Uploads   int   // objects whose bytes are sent
	Reheaders int   // objects whose headers alone change
	Bytes     int64 // bytes of the uploads
}

// Summary is the outcome of a deploy, or with DryRun its plan.
type Summary struct {
	Store       string
	DryRun      bool
	Files       int   // output files the store publishes
	Hashed      int   // of them, read because their stat was new or changed
	HashedBytes int64 // their bytes
	Steps       [layout.NumSteps]StepSummary
	Unchanged   int // files the store holds as they are
	Resumed     int // files an interrupted deploy had written already
	Deletes     int // keys deleted (planned, with DryRun)
	Deferred    int // keys waiting for their grace period
	// Requests are the requests made; with DryRun, those the deploy
	// would make (the manifest's GET made).
	Requests Requests
	ScanTime time.Duration
	// Built is the time of the build deployed: the notifications it and
	// the builds before it wrote are the ones its deploy sends
	// (SendNotifications).
	Built time.Time
}

// Uploads, Reheaders and Bytes total the steps.
func (s *Summary) Uploads() (uploads, reheaders int, bytes int64) {
	for _, st := range s.Steps {
		uploads, reheaders, bytes = uploads+st.Uploads, reheaders+st.Reheaders, bytes+st.Bytes
	}
	return uploads, reheaders, bytes
}

// TooManyDeletesError is returned when a deploy would delete more keys
// than Options.MaxDeletes allows: nothing was written.
type TooManyDeletesError struct {
	Deletes, Max int
}

func (e *TooManyDeletesError) Error() string {
	return fmt.Sprintf("the deploy would delete %d objects, more than the %d that --max-deletes allows: nothing was written "+
		"(check the plan with --dry-run, then raise --max-deletes)", e.Deletes, e.Max)
}

// Run publishes the last complete build of opts.Out to opts.Store: it
// reads the output (trusting the stat of the files it read before), diffs
// it against the store's manifest, and, unless nothing changed, takes the
// store's lock and writes the changed files step by step in the order of
// publication (layout.PublishStep), then deletes what the output no longer
// has. A failure stops the deploy before the next step; the next deploy
// completes it without writing again what landed.
func Run(ctx context.Context, opts Options) (*Summary, error) {
	d := &deployer{opts: opts, store: opts.Store, sum: &Summary{Store: opts.Store.String(), DryRun: opts.DryRun}}
	if d.opts.Notify == nil {
		d.opts.Notify = func(Event) {}
	}
	if d.opts.Now == nil {
		d.opts.Now = time.Now
	}
	d.before = d.store.Requests()
	err := d.run(ctx)
	if !opts.DryRun {
		d.sum.Requests = d.store.Requests().sub(d.before)
	}
	return d.sum, err
}

// deployer holds the state of one deploy.
type deployer struct {
	opts  Options
	store Store
	sum   *Summary
	// before are the store's requests before the deploy, which may share
	// the store with others.
	before Requests
	dir    string   // the deploy's folder for this store in the state folder
	out    *os.Root // the output folder

	files  string // the file list of the output as the scan read it, in dir
	policy HeaderPolicy

	manifest string // the store's manifest as read, cached in dir; "" when the store has none
	etag     string // its entity tag

	sumMu sync.Mutex // guards sum while the steps' writes run
}

func (d *deployer) run(ctx context.Context) error {
	d.dir = filepath.Join(d.opts.State, snapshot.DeployDir, storeID(d.store))
	holder, unlock, err := d.lockLocally()
	if err != nil {
		return err
	}
	defer unlock()
	removeLeftovers(d.dir)
	err = d.readOutput(ctx)
	if d.files != "" {
		defer os.Remove(d.files)
	}
	if err != nil {
		return err
	}
	if err := d.readManifest(ctx); err != nil {
		return err
	}
	p, err := d.plan()
	if err != nil {
		return err
	}
	defer p.close()
	if d.opts.DryRun {
		est, err := estimate(p)
		d.sum.Requests = d.store.Requests().sub(d.before).add(est)
		if err != nil {
			return err
		}
		return d.checkDeletes(p)
	}
	if err := d.checkDeletes(p); err != nil {
		return err
	}
	if !p.changed {
		return nil // nothing changed: one request
	}
	lease, err := d.store.Lock(ctx, holder, d.opts.BreakLock)
	if err != nil {
		return err
	}
	if prev := lease.Previous(); prev != nil {
		d.opts.Notify(Event{Kind: EventWarning, Msg: fmt.Sprintf("took over the lock of %s from %s: that deploy is gone; this one completes it", d.store, prev)})
	}
	lctx, stop := withLease(ctx, lease)
	err = d.publish(lctx, p)
	if cause := context.Cause(lctx); err != nil && cause != nil && ctx.Err() == nil {
		err = cause // the lease was lost
	}
	stop()
	if rerr := lease.Release(context.WithoutCancel(ctx)); err == nil {
		err = rerr
	}
	return err
}

// lockLocally takes the lock of this store in the state folder, so that
// one state folder runs one deploy to a store at a time; it is also what
// lets Store.Lock recognise a lock left by a killed deploy from here.
func (d *deployer) lockLocally() (Holder, func(), error) {
	host, _ := os.Hostname()
	state, err := filepath.Abs(d.opts.State)
	if err != nil {
		return Holder{}, nil, err
	}
	holder := Holder{Owner: randomHex(8), Host: host, PID: os.Getpid(), State: state, Started: d.opts.Now().UTC()}
	path := filepath.Join(d.dir, "lock")
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return Holder{}, nil, fmt.Errorf("state folder: %w", err)
	}
	os.WriteFile(filepath.Join(d.dir, "store"), []byte(d.store.String()+"\n"), 0o644) // says which store the folder is for
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return Holder{}, nil, fmt.Errorf("state folder: %w", err)
	}
	other, err := flockFile(f, path, holder)
	if errors.Is(err, errHeld) {
		return Holder{}, nil, fmt.Errorf("another rsgen deploy to %s from this state folder is running: the lock %s is held by %s", d.store, path, other)
	}
	if err != nil {
		return Holder{}, nil, err
	}
	return holder, func() { f.Close() }, nil
}

// storeID names a store's folder in the state folder.
func storeID(s Store) string {
	sum := sha256.Sum256([]byte(s.String()))
	return hex.EncodeToString(sum[:8])
}

// removeLeftovers removes the temporary files that a deploy killed
// meanwhile left in dir, the deploy's folder for a store, which the
// caller has locked: the scan's file list, a plan's folder, a manifest
// being read.
func removeLeftovers(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), layout.TempPrefix) {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// readOutput reads the output folder into a file list in the deploy's
// folder (d.files): its files and their SHA-256 (through the hash cache),
// and makes the header policy. It checks that no build published anything
// meanwhile.
func (d *deployer) readOutput(ctx context.Context) error {
	start := time.Now()
	mark, err := completeBuild(d.opts.Out, d.opts.State)
	if err != nil {
		return err
	}
	if d.out, err = os.OpenRoot(d.opts.Out); err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	cachePath := filepath.Join(d.opts.State, snapshot.DeployDir, "hashes")
	res, err := d.scan(ctx, cachePath)
	if err != nil {
		return err
	}
	if err := d.keepAsHashCache(cachePath); err != nil {
		d.opts.Notify(Event{Kind: EventWarning, Msg: "cannot save the hash cache (the next deploy reads every file again): " + err.Error()})
	}
	b, err := d.readBuild()
	if err != nil {
		return err
	}
	defer b.close()
	if err := d.checkBuilt(b); err != nil {
		return err
	}
	if again, err := completeBuild(d.opts.Out, d.opts.State); err != nil || again != mark {
		return errors.New("a build published into the output while the deploy read it: deploy again")
	}
	d.sum.Files, d.sum.Hashed, d.sum.HashedBytes = res.files, res.hashed, res.hashedBytes
	d.policy = d.opts.Policy
	if d.policy == nil {
		if d.policy, err = d.outputPolicy(b.types); err != nil {
			return err
		}
	}
	d.sum.ScanTime = time.Since(start)
	return nil
}

// readBuild reads what the last build recorded of the output in its
// state (see built).
func (d *deployer) readBuild() (*built, error) {
	st, err := snapshot.Load(d.opts.State)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	d.sum.Built = time.Unix(st.LastBuild, 0).UTC()
	return readBuilt(st, d.opts.CopyResources, d.dir)
}

// scan writes the file list of the output to d.files, through the hash
// cache at cachePath.
func (d *deployer) scan(ctx context.Context, cachePath string) (*scanResult, error) {
	cache := loadHashCache(cachePath)
	defer cache.close()
	f, err := os.CreateTemp(d.dir, layout.TempPrefix+"files-*")
	if err != nil {
		return nil, fmt.Errorf("state folder: %w", err)
	}
	d.files = f.Name()
	list := newFileListWriter(f, time.Now().UnixNano())
	res, err := scanOutput(ctx, d.out, d.store.Publishes, cache, d.opts.Notify, list)
	if err != nil {
		f.Close()
		return nil, err
	}
	err = list.close()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", d.files, err)
	}
	return res, nil
}

// keepAsHashCache makes the scan's file list the hash cache at cachePath,
// by a hard link where it can (sink.Keep, else a copy): the list stays
// the deploy's to read, whatever deploy (to another store) replaces the
// cache next.
func (d *deployer) keepAsHashCache(cachePath string) error {
	return sink.Keep(d.files, cachePath)
}

// outputPolicy makes rsgen's header policy (OutputPolicy) from the file
// list and the media types the build recorded.
func (d *deployer) outputPolicy(types map[string]string) (HeaderPolicy, error) {
	list, f, err := openFileList(d.files)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var readErr error
	policy, err := OutputPolicy(d.out, list.paths(&readErr), types, d.opts.ShortCache)
	if err == nil && readErr != nil {
		err = fmt.Errorf("read %s: %w", d.files, readErr)
	}
	return policy, err
}

// plan diffs the output against the manifest and counts the plan.
func (d *deployer) plan() (*plan, error) {
	dir, err := os.MkdirTemp(d.dir, layout.TempPrefix+"plan-*")
	if err != nil {
		return nil, fmt.Errorf("state folder: %w", err)
	}
	p, err := d.makePlan(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	d.count(p)
	return p, nil
}

// makePlan reads the file list and the manifest, and plans into dir.
func (d *deployer) makePlan(dir string) (*plan, error) {
	files, f, err := openFileList(d.files)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var m *manifestReader
	if d.manifest != "" {
		mf, err := os.Open(d.manifest)
		if err != nil {
			return nil, fmt.Errorf("state folder: %w", err)
		}
		defer mf.Close()
		if m, err = readManifest(mf); err != nil {
			return nil, fmt.Errorf("%s: %w", d.store, err)
		}
	}
	p, err := makePlan(files, m, d.policy, d.store.KeepsHeaders(), d.inTheWay, d.opts.Now(), d.opts.Grace, dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.store, err)
	}
	return p, nil
}

// inTheWay reports whether the key of a file the output no longer has
// stands in the way of the output's files, as the scan found them: the
// output has a folder at key (a file became a folder), or a file at one
// of its folders (a folder became a file).
func (d *deployer) inTheWay(key string) bool {
	if info, err := d.out.Lstat(key); err == nil {
		return info.IsDir()
	}
	for dir := path.Dir(key); dir != "."; dir = path.Dir(dir) {
		if info, err := d.out.Lstat(dir); err == nil {
			return info.Mode().IsRegular() // a folder: so are those above it
		}
	}
	return false
}

// count puts the plan's numbers into the summary.
func (d *deployer) count(p *plan) {
	d.sum.Steps = p.steps
	d.sum.Unchanged, d.sum.Deletes, d.sum.Deferred = p.unchanged, p.deletes(), p.deferred
}

func (d *deployer) checkDeletes(p *plan) error {
	if d.opts.MaxDeletes >= 0 && p.deletes() > d.opts.MaxDeletes {
		return &TooManyDeletesError{Deletes: p.deletes(), Max: d.opts.MaxDeletes}
	}
	return nil
}

// withLease returns a context cancelled when the lease is lost, with the
// lease's error as its cause.
func withLease(ctx context.Context, lease Lease) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		select {
		case <-lease.Lost():
			cancel(lease.Err())
		case <-done:
		}
	}()
	return ctx, func() { close(done); cancel(nil) }
}
