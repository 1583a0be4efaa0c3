package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
	"github.com/rsgen/rsgen/serve"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
	"github.com/rsgen/rsgen/watch"
)

var watchCommand = &command{
	name:     "watch",
	summary:  "rebuild whenever the source or the configuration changes; --serve: a development server",
	synopsis: "[flags]",
	about: `Builds the site like rsgen build, then watches the source folder and the
configuration file and rebuilds whenever they change. Every rebuild is a
complete build: the same scan, diff and documents, so the output and the
state are always those of a finished build. Changes are gathered: a rebuild
starts once the source has been quiet for --debounce, or --max-wait after the
first change, so copying in many files costs a few rebuilds, not one each.
The output and state folders and editors' temporary files are not watched;
permission-only changes do not rebuild.

With --serve, rsgen watch is a development server, and never writes the
published site: it builds a private copy, with base_url set to the address
it serves, into the dev/ folder of the state folder (dev/public and its own
state, dev/state), and serves that. Pages it shows (the document browser and
the site's HTML) reload after each rebuild, and show a failed build's error.
Only rsgen build, with the configured base_url, writes the output and the
state that are published.

Each build prints one line on stderr: the created, updated and deleted
resources, the documents written and how long it took; its warnings are
printed when they differ from the last build's. A build that fails is
reported and watching goes on. A changed configuration is loaded for the
next build; an invalid one is reported and the last good one kept. When the
system cannot watch that many folders (inotify's limit), rsgen says so and
polls instead.`,
	more: `Interrupt (Ctrl-C, SIGINT or SIGTERM) stops watching once the build in
progress, if any, has finished. A second interrupt abandons that build: no
snapshot is saved, so the next build redoes its work, and every document in
the output is whole (each is renamed into place).

exit codes: 0 stopped; 130 stopped by a second interrupt during a build, which
was abandoned; 1 the watch could not start; 2 usage or configuration error.

examples:
  rsgen watch --serve 127.0.0.1:8080
  rsgen watch --config example-site/rsgen.toml --debounce 1s`,
	flags: func() (*flag.FlagSet, any) { f := newWatchFlags(); return f.fs, f },
	run:   runWatch,
}

// watchFlags are the flags of rsgen watch.
type watchFlags struct {
	fs                      *flag.FlagSet
	site                    siteFlags
	verify, skipUnreadable  bool
	force, quiet            bool
	serve, readyFile        string
	debounce, maxWait, poll time.Duration
}

func newWatchFlags() *watchFlags {
	f := &watchFlags{fs: flag.NewFlagSet("watch", flag.ContinueOnError)}
	f.site.register(f.fs)
	f.fs.BoolVar(&f.verify, "verify", false, "re-read every file on every build")
	f.fs.BoolVar(&f.skipUnreadable, "skip-unreadable", false, "leave out files and folders that cannot be read, or keep the last\npublished version of those published before")
	f.fs.BoolVar(&f.force, "force", false, "publish into a non-empty output folder that holds no rsgen build")
	f.fs.BoolVar(&f.quiet, "quiet", false, "print nothing but errors")
	f.fs.StringVar(&f.serve, "serve", "", "be a development server at `ADDR`, e.g. 127.0.0.1:8080: build a\nprivate copy of the site for that address, serve it, reload pages")
	f.fs.DurationVar(&f.debounce, "debounce", watch.DefaultDebounce, "quiet time before a rebuild (a `DURATION`)")
	f.fs.DurationVar(&f.maxWait, "max-wait", watch.DefaultMaxWait, "longest a stream of changes puts a rebuild off (a `DURATION`)")
	f.fs.DurationVar(&f.poll, "poll", 0, "rebuild at this interval instead of watching (a `DURATION`; when\nwatching fails, rsgen polls every 2s)")
	f.fs.StringVar(&f.readyFile, "ready-file", "", "after each build, done or failed, write the number of builds so far\ninto `FILE`, and with --serve the server's URL on a second line")
	return f
}

// watcher is one run of rsgen watch: the current configuration, the build
// counter and the development server.
type watcher struct {
	cio cliIO
	f   *watchFlags

	prod *config.Config // the configuration, as rsgen build reads it
	cfg  *config.Config // what is built: prod, or its development copy
	opts generator.Options

	lock     sync.RWMutex // held for writing by builds; the server reads under it
	handler  *serve.Handler
	srv      *server
	builds   int
	warnings []string // the last build's, printed again only when they change
}

func runWatch(ctx context.Context, cio cliIO, values any, _ []string) int {
	f := values.(*watchFlags)
	if f.debounce <= 0 || f.maxWait <= 0 || f.poll < 0 {
		fmt.Fprintln(cio.stderr, "rsgen watch: --debounce and --max-wait must be positive, --poll not negative")
		return exitUsage
	}
	w := &watcher{cio: cio, f: f}
	if f.serve != "" {
		if err := w.startServer(); err != nil {
			fmt.Fprintf(cio.stderr, "rsgen watch: %v\n", err)
			return exitFailure
		}
		defer w.stopServer()
	}
	if err := w.load(); err != nil {
		fmt.Fprintf(cio.stderr, "rsgen watch: %v\n", err)
		return exitCodeOf(err)
	}
	if w.handler != nil {
		if err := w.serveSite(); err != nil {
			fmt.Fprintf(cio.stderr, "rsgen watch: %v\n", err)
			return exitFailure
		}
	}
	buildCtx, stopForce := forceContext(ctx)
	defer stopForce()
	for {
		restart, code := w.watch(ctx, buildCtx)
		if !restart {
			return code
		}
	}
}

// load reads the configuration, and derives what a development server
// builds from it.
func (w *watcher) load() error {
	prod, cfgFile, err := w.f.site.loadToBuild()
	if err != nil {
		return err
	}
	w.prod, w.cfg = prod, prod
	w.opts = generator.Options{Verify: w.f.verify, ConfigFile: cfgFile, SkipUnreadable: w.f.skipUnreadable, Force: w.f.force}
	if w.srv != nil {
		w.cfg = devConfig(prod, devBaseURL(w.srv.Addr()))
		// The development site lives in the production state folder:
		// that folder is left out of the scan, wherever it is. It is
		// the developer's to play with: a set removed or a new address
		// needs no confirmation there.
		w.opts.Exclude = []string{prod.State}
		w.opts.Rebase, w.opts.RemoveSets = true, true
	}
	return nil
}

// devConfig returns the configuration of the development site of prod: the
// same sources and settings, built for base, into the dev/ folder of the
// state folder, which rsgen build never publishes.
func devConfig(prod *config.Config, base string) *config.Config {
	dev := *prod
	dir := filepath.Join(prod.State, snapshot.DevDir)
	dev.Out, dev.State, dev.BaseURL = filepath.Join(dir, "public"), filepath.Join(dir, "state"), base
	return &dev
}

// devBaseURL is the base URL of the development site served at addr.
func devBaseURL(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || tcp.IP.IsUnspecified() {
		return "http://localhost:" + strconv.Itoa(tcp.Port) + "/"
	}
	return "http://" + addr.String() + "/"
}

// forceContext returns the context builds run under. The first interrupt
// cancels ctx, which stops watching once the current build is done; the
// returned context survives it and is cancelled by a second interrupt,
// which abandons the build.
func forceContext(ctx context.Context) (context.Context, func()) {
	force, cancel := context.WithCancel(context.WithoutCancel(ctx))
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		for seen := 0; ; {
			select {
			case <-sigs:
				if seen++; seen == 2 {
					cancel()
					return
				}
			case <-force.Done():
				return
			}
		}
	}()
	return force, func() { signal.Stop(sigs); cancel() }
}

// watch builds, then rebuilds on every Trigger until ctx is done or the
// folders to watch change with the configuration (restart). Builds run
// under buildCtx (see forceContext).
func (w *watcher) watch(ctx, buildCtx context.Context) (restart bool, code int) {
	skip := []string{w.prod.Out, w.prod.State}
	fw, err := watch.New(watch.Options{
		Root:       w.cfg.Source,
		Skip:       skip,
		ConfigFile: w.opts.ConfigFile,
		Debounce:   w.f.debounce,
		MaxWait:    w.f.maxWait,
		Poll:       w.f.poll,
		Warn:       func(err error) { fmt.Fprintf(w.cio.stderr, "rsgen watch: warning: %v\n", err) },
	})
	if err != nil {
		fmt.Fprintf(w.cio.stderr, "rsgen watch: %v\n", err)
		return false, exitFailure
	}
	defer fw.Close()
	if !w.f.quiet {
		fmt.Fprintf(w.cio.stderr, "rsgen watch: watching %s (Ctrl-C to stop)\n", w.cfg.Source)
	}
	if !w.build(buildCtx, watch.Trigger{}) {
		return false, exitInterrupted
	}
	for {
		select {
		case <-ctx.Done():
			return false, exitOK
		case t := <-fw.Triggers():
			if ctx.Err() != nil {
				return false, exitOK // interrupted: no new build
			}
			if t.Config && w.reload() {
				return true, exitOK
			}
			if !w.build(buildCtx, t) {
				return false, exitInterrupted
			}
		}
	}
}

// build runs one build and reports it. It returns false when ctx was
// cancelled during the build, which was abandoned.
func (w *watcher) build(ctx context.Context, t watch.Trigger) bool {
	opts := w.opts
	now, err := buildTime("", w.cio.getenv)
	if err != nil {
		fmt.Fprintf(w.cio.stderr, "rsgen watch: %v\n", err)
		return true
	}
	opts.Now = now
	p := newProgress(w.cio.stderr, progressNone, true)
	opts.Notify = p.notify
	start := time.Now()
	w.lock.Lock()
	sum, err := generator.Build(ctx, w.cfg, opts)
	w.lock.Unlock()
	if err != nil && ctx.Err() != nil {
		fmt.Fprintln(w.cio.stderr, "rsgen watch: interrupted twice during a build, which was abandoned; the output and state are those of the last complete build")
		return false
	}
	if w.handler != nil {
		w.handler.Built(err)
	}
	w.builds++
	if err != nil {
		fmt.Fprintf(w.cio.stderr, "rsgen watch: build %d failed: %v\n", w.builds, err)
	} else {
		w.printWarnings(p)
		changed := sum.Created+sum.Updated+sum.Deleted > 0 || sum.Outputs[sink.Document].Written > 0
		if !w.f.quiet && (changed || !t.Polled) {
			fmt.Fprintf(w.cio.stderr, "rsgen watch: build %d: %d created, %d updated, %d deleted; %s written in %s\n",
				w.builds, sum.Created, sum.Updated, sum.Deleted, plural(sum.Outputs[sink.Document].Written, "document"), time.Since(start).Round(time.Millisecond))
		}
	}
	if w.f.readyFile != "" {
		ready := strconv.Itoa(w.builds) + "\n"
		if w.srv != nil {
			ready += w.cfg.BaseURL + "\n"
		}
		if err := writeFileAtomic(w.f.readyFile, ready); err != nil {
			fmt.Fprintf(w.cio.stderr, "rsgen watch: warning: %v\n", err)
		}
	}
	return true
}

// printWarnings prints a build's warnings, grouped, when they differ from
// the last build's: a rebuild does not repeat what was said.
func (w *watcher) printWarnings(p *progress) {
	lines := groupedWarnings(p.warningList())
	if slices.Equal(lines, w.warnings) {
		return
	}
	w.warnings = lines
	if w.f.quiet {
		return
	}
	for _, l := range lines {
		fmt.Fprintln(w.cio.stderr, l)
	}
}

// reload reads the configuration again, through the same flags. An
// invalid one is reported and the last good one kept. It returns true when
// the folders to watch changed.
func (w *watcher) reload() (restart bool) {
	old := w.prod
	oldCfg, oldOpts := w.cfg, w.opts
	if err := w.load(); err != nil {
		fmt.Fprintf(w.cio.stderr, "rsgen watch: %v\nrsgen watch: keeping the last good configuration\n", err)
		return false
	}
	if w.handler != nil {
		if err := w.serveSite(); err != nil {
			fmt.Fprintf(w.cio.stderr, "rsgen watch: %v; keeping the last good configuration\n", err)
			w.prod, w.cfg, w.opts = old, oldCfg, oldOpts
			return false
		}
	}
	if !w.f.quiet {
		fmt.Fprintln(w.cio.stderr, "rsgen watch: configuration reloaded")
	}
	return w.prod.Source != old.Source || w.prod.Out != old.Out || w.prod.State != old.State
}

// startServer listens at --serve, so that the development site can be
// built for the address it is served at.
func (w *watcher) startServer() error {
	h, err := serve.New(serve.Options{Dir: os.TempDir(), BaseURL: "http://localhost/", Lock: &w.lock, Dev: true})
	if err != nil {
		return err
	}
	srv, err := startServer(w.f.serve, h)
	if err != nil {
		h.Close()
		return err
	}
	w.handler, w.srv = h, srv
	warnReachable(w.cio.stderr, "rsgen watch", srv.Addr())
	return nil
}

// serveSite points the server at the development site.
func (w *watcher) serveSite() error {
	if err := os.MkdirAll(w.cfg.Out, 0o755); err != nil {
		return fmt.Errorf("development site: %w", err)
	}
	if err := w.handler.Reload(serveOptions(w.cfg, &w.lock)); err != nil {
		return err
	}
	fmt.Fprintf(w.cio.stderr, "rsgen watch: serving the development site at %s (documents at %s, browser at %sresourcesync/); "+
		"it is built into %s for this address, and the published site in %s is left alone\n",
		w.cfg.BaseURL, w.cfg.BaseURL+".well-known/resourcesync", w.cfg.BaseURL, w.cfg.Out, w.prod.Out)
	return nil
}

func (w *watcher) stopServer() {
	if err := w.srv.shutdown(); err != nil {
		fmt.Fprintf(w.cio.stderr, "rsgen watch: %v\n", err)
	}
	if err := w.handler.Close(); err != nil {
		fmt.Fprintf(w.cio.stderr, "rsgen watch: %v\n", err)
	}
}
