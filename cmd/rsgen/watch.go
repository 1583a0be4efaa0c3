package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
	"github.com/rsgen/rsgen/serve"
	"github.com/rsgen/rsgen/watch"
)

var watchCommand = &command{
	summary: "build, then rebuild whenever the source or the configuration changes",
	usage:   watchUsage,
	run:     runWatch,
}

const watchUsage = `usage: rsgen watch [flags]

Builds the site like rsgen build, then watches the source folder and the
configuration file and rebuilds whenever they change. Every rebuild is a
complete build: the same scan, diff and documents, so the output and the
state are always those of a finished build. Changes are gathered: a rebuild
starts once the source has been quiet for --debounce, or --max-wait after the
first change, so copying in many files costs a few rebuilds, not one each.
The output and state folders and editors' temporary files are not watched;
permission-only changes do not rebuild.

Each build prints one line on stderr: the created, updated and deleted
resources, the documents written and how long it took. A build that fails is
reported and watching goes on. A changed configuration is loaded for the
next build; an invalid one is reported and the last good one kept. When the
system cannot watch that many folders (inotify's limit), rsgen says so and
polls instead.

flags:
  --serve ADDR          also serve the output folder at ADDR, as rsgen serve does,
                        e.g. 127.0.0.1:8080; requests never see a build half done
  --debounce DURATION   quiet time before a rebuild (default 300ms)
  --max-wait DURATION   longest a stream of changes puts a rebuild off (default 3s)
  --poll DURATION       rebuild at this interval instead of watching (default 0s:
                        watch; when watching fails, rsgen polls every 2s)
  --ready-file FILE     after each build, write the number of builds so far into
                        FILE, and with --serve the server's URL on a second line

` + buildFlagsHelp + `

Interrupt (Ctrl-C, SIGINT or SIGTERM) stops watching once the build in
progress, if any, has finished. A second interrupt abandons that build: no
snapshot is saved, so the next build redoes its work, and every document in
the output is whole (each is renamed into place).

exit codes: 0 stopped; 130 stopped by a second interrupt during a build, which
was abandoned; 1 the watch could not start; 2 usage or configuration error.

examples:
  rsgen watch --serve 127.0.0.1:8080 --base-url http://127.0.0.1:8080/
  rsgen watch --config example-site/rsgen.toml --debounce 1s`

// watchFlags are the flags of watch beyond the build flags.
type watchFlags struct {
	serve, readyFile        string
	debounce, maxWait, poll time.Duration
}

// watchOwnFlags names the watchFlags, which prepare does not know.
var watchOwnFlags = []string{"serve", "debounce", "max-wait", "poll", "ready-file"}

// watcher is one run of rsgen watch: the current configuration, the build
// counter and the server.
type watcher struct {
	cio       cliIO
	wf        watchFlags
	buildArgs []string // the build flags, for prepare on each reload

	cfg   *config.Config
	opts  generator.Options
	flags *buildFlags

	lock    sync.RWMutex // held for writing by builds; the server reads under it
	handler *serve.Handler
	srv     *server
	builds  int
}

func runWatch(ctx context.Context, cio cliIO, args []string) int {
	f := newBuildFlags("watch", cio.stderr)
	w := &watcher{cio: cio}
	f.fs.StringVar(&w.wf.serve, "serve", "", "")
	f.fs.DurationVar(&w.wf.debounce, "debounce", watch.DefaultDebounce, "")
	f.fs.DurationVar(&w.wf.maxWait, "max-wait", watch.DefaultMaxWait, "")
	f.fs.DurationVar(&w.wf.poll, "poll", 0, "")
	f.fs.StringVar(&w.wf.readyFile, "ready-file", "", "")
	if code := parseFlags(f.fs, args, watchUsage, cio.stdout); code != exitOK {
		return code
	}
	if w.wf.debounce <= 0 || w.wf.maxWait <= 0 || w.wf.poll < 0 {
		fmt.Fprintln(cio.stderr, "rsgen watch: --debounce and --max-wait must be positive, --poll not negative")
		return exitUsage
	}
	w.buildArgs = buildArgs(f.fs, watchOwnFlags...)
	var code int
	if w.cfg, w.opts, w.flags, code = prepare("watch", watchUsage, cio, w.buildArgs); w.cfg == nil {
		return code
	}
	if w.wf.serve != "" {
		if err := w.startServer(); err != nil {
			fmt.Fprintf(cio.stderr, "rsgen watch: %v\n", err)
			return exitFailure
		}
		defer w.stopServer()
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
	fw, err := watch.New(watch.Options{
		Root:       w.cfg.Source,
		Skip:       []string{w.cfg.Out, w.cfg.State},
		ConfigFile: w.opts.ConfigFile,
		Debounce:   w.wf.debounce,
		MaxWait:    w.wf.maxWait,
		Poll:       w.wf.poll,
		Warn:       func(err error) { fmt.Fprintf(w.cio.stderr, "rsgen watch: warning: %v\n", err) },
	})
	if err != nil {
		fmt.Fprintf(w.cio.stderr, "rsgen watch: %v\n", err)
		return false, exitFailure
	}
	defer fw.Close()
	if !w.flags.quiet {
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
	now, err := w.flags.buildTime(w.cio.getenv)
	if err != nil {
		fmt.Fprintf(w.cio.stderr, "rsgen watch: %v\n", err)
		return true
	}
	opts.Now = now
	start := time.Now()
	w.lock.Lock()
	sum, err := generator.Build(ctx, w.cfg, opts)
	w.lock.Unlock()
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Fprintln(w.cio.stderr, "rsgen watch: interrupted twice during a build, which was abandoned; the output and state are those of the last complete build")
		return false
	case err != nil:
		fmt.Fprintf(w.cio.stderr, "rsgen watch: build failed: %v\n", err)
		return true
	}
	w.builds++
	changed := sum.Created+sum.Updated+sum.Deleted > 0 || sum.DocumentsWritten > 0
	if !w.flags.quiet && (changed || !t.Polled) {
		fmt.Fprintf(w.cio.stderr, "rsgen watch: build %d: %d created, %d updated, %d deleted; %d documents written in %s\n",
			w.builds, sum.Created, sum.Updated, sum.Deleted, sum.DocumentsWritten, time.Since(start).Round(time.Millisecond))
	}
	if w.wf.readyFile != "" {
		ready := strconv.Itoa(w.builds) + "\n"
		if w.srv != nil {
			ready += w.srv.url() + "\n"
		}
		if err := writeFileAtomic(w.wf.readyFile, ready); err != nil {
			fmt.Fprintf(w.cio.stderr, "rsgen watch: warning: %v\n", err)
		}
	}
	return true
}

// reload reads the configuration again, through the same flags. An
// invalid one is reported (by prepare) and the last good one kept. It
// returns true when the folders to watch changed.
func (w *watcher) reload() (restart bool) {
	cfg, opts, flags, _ := prepare("watch", watchUsage, w.cio, w.buildArgs)
	if cfg == nil {
		fmt.Fprintln(w.cio.stderr, "rsgen watch: keeping the last good configuration")
		return false
	}
	if w.handler != nil {
		err := os.MkdirAll(cfg.Out, 0o755)
		if err == nil {
			err = w.handler.Reload(serveOptions(cfg, &w.lock))
		}
		if err != nil {
			fmt.Fprintf(w.cio.stderr, "rsgen watch: %v; keeping the last good configuration\n", err)
			return false
		}
	}
	restart = cfg.Source != w.cfg.Source || cfg.Out != w.cfg.Out || cfg.State != w.cfg.State
	w.cfg, w.opts, w.flags = cfg, opts, flags
	if !w.flags.quiet {
		fmt.Fprintln(w.cio.stderr, "rsgen watch: configuration reloaded")
	}
	return restart
}

func (w *watcher) startServer() error {
	if err := os.MkdirAll(w.cfg.Out, 0o755); err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	h, err := serve.New(serveOptions(w.cfg, &w.lock))
	if err != nil {
		return err
	}
	srv, err := startServer(w.wf.serve, h)
	if err != nil {
		h.Close()
		return err
	}
	w.handler, w.srv = h, srv
	fmt.Fprintf(w.cio.stderr, "rsgen watch: serving %s at %s\n", w.cfg.Out, srv.url())
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
