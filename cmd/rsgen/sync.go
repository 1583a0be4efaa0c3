package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/rsgen/rsgen/destination"
)

var syncCommand = &command{
	name:     "sync",
	summary:  "mirror a ResourceSync Source into a folder, and keep it in sync",
	synopsis: "URL DIR [flags]",
	about: `Mirrors the resources of the ResourceSync Source at URL into the folder DIR,
and on every later run applies what changed since. URL is the Source's base
URL (ending in /), its Source Description or one of its Capability Lists.

The first run takes a baseline from the Resource List (or from the Resource
Dump when that is cheaper); later runs follow the Change Lists (their index,
their archive and the Change Dumps) from the last sync on. When the Change
Lists no longer reach back to it, the sync says so and takes a new baseline,
fetching only what differs. Every file is verified against the length and
every hash listed (md5, sha-1, sha-256) before it is renamed into place; a
resource that does not match is fetched again, then reported.

Resources under the Source's base URL land at their paths below DIR,
percent-decoded; those on other hosts are skipped, or mirrored under
DIR/HOST/ with --other-hosts. DIR holds nothing else: the state lives in
--state, by default .rsgen-sync/NAME beside DIR (NAME is DIR's name). A sync
stopped at any point, even by kill -9, resumes where it stopped.

With --listen ADDR the sync then stays: it subscribes to the set's Change
Notification channel at the hub the Capability List names, serves the
hub's callbacks on ADDR, and applies each notification as it arrives, with
the same verification, printing one line for each. A notification missed
(a gap) is made up from the Change Lists. Behind a proxy or NAT, --callback
gives the URL at which the hub reaches ADDR. Interrupt (Ctrl-C, SIGINT or
SIGTERM) unsubscribes and exits 0; a later rsgen sync goes on from there.`,
	more: `exit codes: 0 DIR is in sync, 1 some resources could not be mirrored, the
sync failed, or (--audit) DIR is out of sync; 2 usage error (also: a Source
with several sets and no --set); 130 interrupted (run it again to resume).

examples:
  rsgen sync https://data.example.org/ mirror/
  rsgen sync https://data.example.org/ mirror/ --set books --jobs 8
  rsgen sync https://data.example.org/resourcesync/books/capabilitylist.xml mirror/
  rsgen sync https://data.example.org/ mirror/ --audit
  rsgen sync https://data.example.org/ mirror/ --map https://data.example.org/=http://127.0.0.1:8080/
  rsgen sync https://data.example.org/ mirror/ --listen :8081 --callback https://mirror.example.net/hook/`,
	flags:   func() (*flag.FlagSet, any) { f := newSyncFlags(); return f.fs, f },
	minArgs: 2,
	maxArgs: 2,
	run:     runSync,
}

// syncFlags are the flags of rsgen sync.
type syncFlags struct {
	fs                    *flag.FlagSet
	opts                  destination.Options
	dumps                 string
	retries               int
	maps                  mapFlag
	audit, jsonOut, quiet bool
	// --listen
	listen, callback, readyFile string
}

// mapFlag collects --map FROM=TO, in the order given.
type mapFlag []destination.Map

func (m *mapFlag) String() string { return "" }

func (m *mapFlag) Set(s string) error {
	v, err := destination.ParseMap(s)
	if err != nil {
		return err
	}
	*m = append(*m, v)
	return nil
}

func newSyncFlags() *syncFlags {
	f := &syncFlags{fs: flag.NewFlagSet("sync", flag.ContinueOnError)}
	fs := f.fs
	fs.StringVar(&f.opts.Set, "set", "", "the set to follow, by `NAME` or Capability List URL, when the Source\nhas several")
	fs.StringVar(&f.opts.State, "state", "", "the `DIR` of the sync's state (default: .rsgen-sync/NAME beside DIR)")
	fs.StringVar(&f.dumps, "dumps", "auto", "take resources from dump packages (a `POLICY`): auto, when cheaper;\nalways; or never")
	fs.BoolVar(&f.opts.Baseline, "baseline", false, "take a baseline from the Resource List even when the Change Lists\nwould do: every file is looked at again, and what differs fetched")
	fs.BoolVar(&f.opts.NoRebaseline, "no-rebaseline", false, "fail, rather than take a new baseline, when the Change Lists no\nlonger reach back to the last sync")
	fs.BoolVar(&f.opts.KeepDeleted, "keep-deleted", false, "leave the files of deleted resources in DIR")
	fs.BoolVar(&f.opts.OtherHosts, "other-hosts", false, "mirror resources on other hosts under DIR/HOST/, and follow\nredirects to other hosts")
	fs.IntVar(&f.opts.Jobs, "jobs", destination.DefaultJobs, "fetch at most `N` resources at once (and so at most N from any host)")
	fs.Float64Var(&f.opts.Rate, "rate", 0, "send at most `N` requests a second (0: no limit)")
	fs.Var(&f.maps, "map", "fetch URLs that start with FROM from TO instead (`FROM=TO`); paths\nin DIR stay those of the listed URLs; may be repeated")
	fs.BoolVar(&f.audit, "audit", false, "compare DIR with the Source's Resource List and report missing,\nextra and differing files; change nothing")
	fs.BoolVar(&f.opts.DryRun, "dry-run", false, "print what a sync would fetch and delete; change nothing")
	fs.BoolVar(&f.jsonOut, "json", false, "print one JSON object on stdout: the events, counts, bytes and errors")
	fs.BoolVar(&f.quiet, "quiet", false, "print nothing but errors: no progress, no summary")
	fs.DurationVar(&f.opts.Timeout, "timeout", destination.DefaultTimeout, "give up a request that sends nothing for this long (a `DURATION`)")
	fs.IntVar(&f.retries, "retries", destination.DefaultRetries, "try a failed fetch again up to `N` times")
	fs.StringVar(&f.listen, "listen", "", "after the sync, serve the hub's callbacks on `ADDR` (host:port) and apply\neach change notification as it arrives, until interrupted")
	fs.StringVar(&f.callback, "callback", "", "with --listen, the `URL` at which the hub reaches ADDR (default:\nhttp://ADDR/), behind a proxy or NAT")
	fs.StringVar(&f.readyFile, "ready-file", "", "with --listen, once subscribed, write the callback URL into `FILE`\n(for scripts)")
	return f
}

// validate checks the values of the flags and fills the options.
func (f *syncFlags) validate(args []string) error {
	var err error
	if f.opts.Dumps, err = destination.ParseDumpPolicy(f.dumps); err != nil {
		return fmt.Errorf("--dumps %w", err)
	}
	switch {
	case f.opts.Jobs < 1:
		return fmt.Errorf("--jobs %d: want at least 1", f.opts.Jobs)
	case f.opts.Rate < 0:
		return fmt.Errorf("--rate %g: want 0 or more requests a second", f.opts.Rate)
	case f.retries < 0:
		return fmt.Errorf("--retries %d: want 0 or more", f.retries)
	case f.opts.Timeout <= 0:
		return fmt.Errorf("--timeout %s: want a positive duration", f.opts.Timeout)
	}
	if err := f.validateListen(); err != nil {
		return err
	}
	f.opts.Retries = f.retries
	if f.retries == 0 {
		f.opts.Retries = -1
	}
	f.opts.Source, f.opts.Dir, f.opts.Maps = args[0], args[1], f.maps
	f.opts.UserAgent = "rsgen/" + version()
	return nil
}

// validateListen checks the flags that go with --listen.
func (f *syncFlags) validateListen() error {
	switch {
	case f.listen == "" && (f.callback != "" || f.readyFile != ""):
		return errors.New("--callback and --ready-file go with --listen")
	case f.listen == "":
		return nil
	case f.audit || f.opts.DryRun || f.jsonOut:
		return errors.New("--listen does not go with --audit, --dry-run or --json")
	}
	if f.callback != "" {
		if u, err := url.Parse(f.callback); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--callback %q: want an http or https URL", f.callback)
		}
	}
	return nil
}

func runSync(ctx context.Context, cio cliIO, values any, args []string) int {
	f := values.(*syncFlags)
	if err := f.validate(args); err != nil {
		fmt.Fprintf(cio.stderr, "rsgen sync: %v\n", err)
		return exitUsage
	}
	v := newSyncView(cio, f)
	f.opts.Notify = v.event
	if f.listen != "" {
		return runListen(ctx, v, f)
	}
	start := time.Now()
	var sum *destination.Summary
	var err error
	if f.audit {
		sum, err = destination.Audit(ctx, f.opts)
	} else {
		sum, err = destination.Sync(ctx, f.opts)
	}
	v.finish(sum, err, time.Since(start))
	return syncExit(ctx, err)
}

// syncExit is the exit code of a sync that ended with err.
func syncExit(ctx context.Context, err error) int {
	var usage *destination.UsageError
	switch {
	case err == nil:
		return exitOK
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return exitInterrupted
	case errors.As(err, &usage):
		return exitUsage
	}
	return exitFailure
}

// syncView renders a sync's events: a status line redrawn on a terminal,
// a plain progress line now and then otherwise; what a dry run would do
// and what an audit finds, one line each on stdout; with --json, one JSON
// object on stdout instead, its events streamed into it as they come.
type syncView struct {
	cio   cliIO
	f     *syncFlags
	mode  progressMode
	every time.Duration
	now   func() time.Time // the clock, injected for tests

	mu      sync.Mutex
	start   time.Time
	last    time.Time
	drawn   bool
	planned destination.Event
	done    int64
	doneB   int64
	json    *jsonEvents
}

func newSyncView(cio cliIO, f *syncFlags) *syncView {
	v := &syncView{cio: cio, f: f, mode: progressLines, every: linesEvery, now: time.Now}
	switch {
	case f.quiet || f.jsonOut:
		v.mode = progressNone
	case cio.isTerminal != nil && cio.isTerminal(cio.stderr):
		v.mode, v.every = progressTerminal, terminalEvery
	}
	v.start = v.now()
	v.last = v.start
	if f.jsonOut {
		v.json = newJSONEvents(cio.stdout)
		v.json.dryRun = f.opts.DryRun
	}
	return v
}

// event receives one event of the sync.
func (v *syncView) event(e destination.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.json != nil {
		v.json.add(e)
		return
	}
	switch e.Kind {
	case destination.EventPlanned:
		v.planned = e
	case destination.EventFetched, destination.EventDeleted:
		v.done++
		v.doneB += e.Bytes
		if v.f.opts.DryRun {
			verb := map[destination.EventKind]string{destination.EventFetched: "fetch", destination.EventDeleted: "delete"}[e.Kind]
			v.printAbove(v.cio.stdout, verb+" "+e.Path)
		}
	case destination.EventMissing, destination.EventExtra:
		v.printAbove(v.cio.stdout, e.Kind.String()+" "+e.Path)
	case destination.EventDiffers:
		v.printAbove(v.cio.stdout, "differs "+e.Path+": "+e.Msg)
	case destination.EventFailed:
		v.printAbove(v.cio.stderr, "rsgen sync: error: "+e.Err.Error())
	case destination.EventWarning:
		if !v.f.quiet {
			v.printAbove(v.cio.stderr, "rsgen sync: warning: "+e.Msg)
		}
	case destination.EventInfo:
		if !v.f.quiet {
			v.printAbove(v.cio.stderr, "rsgen sync: "+e.Msg)
		}
	}
	if v.mode != progressNone {
		if now := v.now(); now.Sub(v.last) >= v.every {
			v.last = now
			v.render(now)
		}
	}
}

// printAbove prints a line, keeping the status line below it.
func (v *syncView) printAbove(w io.Writer, line string) {
	if v.drawn {
		fmt.Fprint(v.cio.stderr, "\r\033[K")
		v.drawn = false
	}
	fmt.Fprintln(w, line)
}

// render shows the progress at time now.
func (v *syncView) render(now time.Time) {
	secs := now.Sub(v.start).Seconds()
	line := fmt.Sprintf("%d/%d files, %s/%s at %s/s", v.done, v.planned.Files, formatBytes(v.doneB),
		formatBytes(v.planned.Bytes), formatBytes(int64(float64(v.doneB)/max(secs, 0.001))))
	if v.mode == progressTerminal {
		fmt.Fprintf(v.cio.stderr, "\r\033[K%s", line)
		v.drawn = true
		return
	}
	fmt.Fprintf(v.cio.stderr, "rsgen sync: progress: %s\n", line)
}

// finish prints the outcome.
func (v *syncView) finish(sum *destination.Summary, err error, took time.Duration) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.drawn {
		fmt.Fprint(v.cio.stderr, "\r\033[K")
		v.drawn = false
	}
	if v.json != nil {
		if werr := v.json.finish(sum, err); werr != nil {
			fmt.Fprintf(v.cio.stderr, "rsgen sync: write the JSON: %v\n", werr)
		}
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(v.cio.stderr, "rsgen sync: interrupted; run it again to resume where it stopped")
		} else {
			fmt.Fprintf(v.cio.stderr, "rsgen sync: %v\n", err)
		}
	}
	if sum != nil && sum.Set != "" && !v.f.quiet && v.json == nil {
		fmt.Fprintf(v.cio.stdout, "rsgen sync: %s\n", syncSummaryLine(sum, v.f.opts.DryRun, took))
	}
}

// runListen syncs, then applies the notifications until interrupted,
// printing a line for each run.
func runListen(ctx context.Context, v *syncView, f *syncFlags) int {
	err := destination.Listen(ctx, destination.ListenOptions{
		Options: f.opts, Addr: f.listen, Callback: f.callback,
		Subscribed: func(callback string) {
			v.event(destination.Event{Kind: destination.EventInfo, Msg: "listening for change notifications at " + callback})
			if f.readyFile != "" {
				if err := writeFileAtomic(f.readyFile, callback+"\n"); err != nil {
					v.event(destination.Event{Kind: destination.EventWarning, Msg: err.Error()})
				}
			}
		},
		Done: func(s *destination.Summary) {
			if !f.quiet {
				v.printLine(listenSummaryLine(s))
			}
		},
	})
	v.finish(nil, err, 0)
	return syncExit(ctx, err)
}

// listenSummaryLine says what a run of rsgen sync --listen did: the first
// sync, a notification applied, or the Change Lists read after a gap.
func listenSummaryLine(s *destination.Summary) string {
	line := syncSummaryLine(s, false, s.Took)
	n := s.Notification
	if n.Until.IsZero() {
		return line
	}
	interval := n.From.UTC().Format(time.RFC3339Nano) + "→" + n.Until.UTC().Format(time.RFC3339Nano)
	if s.Mode == "notification" {
		return "notification " + interval + strings.TrimPrefix(line, "notification")
	}
	return "notifications missed before " + interval + ", so " + line
}

// printLine prints a line on stdout, keeping the status line below it.
func (v *syncView) printLine(line string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.printAbove(v.cio.stdout, "rsgen sync: "+line)
}

// syncSummaryLine says what a sync did, or an audit found.
func syncSummaryLine(s *destination.Summary, dryRun bool, took time.Duration) string {
	if s.Mode == "audit" {
		return fmt.Sprintf("audit of set %s: %d in sync, %d missing, %d extra, %d differing in %s",
			s.Set, s.Unchanged, s.Missing, s.Extra, s.Differing, took.Round(time.Millisecond))
	}
	verbs := []string{"fetched", "deleted"}
	if dryRun {
		verbs = []string{"to fetch", "to delete"}
	}
	line := fmt.Sprintf("%s of set %s: %d %s (%s", s.Mode, s.Set, s.Fetched, verbs[0], formatBytes(s.FetchedBytes))
	if s.FromDumps > 0 {
		line += fmt.Sprintf(", %d from dumps", s.FromDumps)
	}
	line += fmt.Sprintf("), %d %s, %d unchanged", s.Deleted, verbs[1], s.Unchanged)
	if n := s.Failed + s.Refused; n > 0 {
		line += fmt.Sprintf(", %d not mirrored", n)
	}
	line += " in " + took.Round(time.Millisecond).String()
	if secs := took.Seconds(); s.Fetched > 0 && secs > 0 && !dryRun {
		line += fmt.Sprintf(" (%.0f files/s, %s/s)", float64(s.Fetched)/secs, formatBytes(int64(float64(s.FetchedBytes)/secs)))
	}
	return line
}

// jsonEvents streams the --json object: its "events" array is written as
// the events come, so that a sync of a million files holds none of them;
// the counts follow at the end.
type jsonEvents struct {
	w      io.Writer
	dryRun bool // the events are what a sync would do
	n      int
	errors []string
	err    error
}

// maxJSONErrors bounds the "errors" list; every error is in "events".
const maxJSONErrors = 1000

func newJSONEvents(w io.Writer) *jsonEvents {
	j := &jsonEvents{w: w}
	_, j.err = io.WriteString(w, "{\n  \"events\": [")
	return j
}

// syncEventJSON is one event of sync --json.
type syncEventJSON struct {
	Event   string `json:"event"`
	Path    string `json:"path,omitempty"`
	URL     string `json:"url,omitempty"`
	Bytes   int64  `json:"bytes,omitempty"`
	Dump    bool   `json:"dump,omitempty"`
	Message string `json:"message,omitempty"`
}

func (j *jsonEvents) add(e destination.Event) {
	if e.Kind == destination.EventPlanned || j.err != nil {
		return
	}
	ev := syncEventJSON{Event: e.Kind.String(), Path: e.Path, URL: e.URL, Bytes: e.Bytes, Dump: e.Dump, Message: e.Msg}
	if e.Err != nil {
		ev.Message = e.Err.Error()
		if len(j.errors) < maxJSONErrors {
			j.errors = append(j.errors, ev.Message)
		}
	}
	data, _ := json.Marshal(ev)
	sep := ",\n    "
	if j.n == 0 {
		sep = "\n    "
	}
	j.n++
	_, j.err = fmt.Fprintf(j.w, "%s%s", sep, data)
}

// finish writes the rest of the object.
func (j *jsonEvents) finish(s *destination.Summary, err error) error {
	if j.err != nil {
		return j.err
	}
	if s == nil {
		s = &destination.Summary{}
	}
	if err != nil {
		j.errors = append(j.errors, err.Error())
	}
	rest := struct {
		OK             bool             `json:"ok"`
		DryRun         bool             `json:"dry_run,omitempty"`
		Mode           string           `json:"mode,omitempty"`
		Set            string           `json:"set,omitempty"`
		CapabilityList string           `json:"capability_list,omitempty"`
		SyncedUntil    string           `json:"synced_until,omitempty"`
		Counts         map[string]int64 `json:"counts"`
		Bytes          map[string]int64 `json:"bytes"`
		Requests       int64            `json:"requests"`
		Errors         []string         `json:"errors"`
	}{
		OK: err == nil, DryRun: j.dryRun, Mode: s.Mode, Set: s.Set, CapabilityList: s.CapabilityList,
		Counts: map[string]int64{"fetched": s.Fetched, "from_dumps": s.FromDumps, "deleted": s.Deleted,
			"unchanged": s.Unchanged, "other_hosts": s.OtherHosts, "refused": s.Refused, "failed": s.Failed,
			"missing": s.Missing, "extra": s.Extra, "differing": s.Differing},
		Bytes:    map[string]int64{"fetched": s.FetchedBytes, "received": s.Bytes},
		Requests: s.Requests,
		Errors:   append([]string{}, j.errors...),
	}
	if !s.SyncedUntil.IsZero() {
		rest.SyncedUntil = s.SyncedUntil.UTC().Format(time.RFC3339Nano)
	}
	data, merr := json.MarshalIndent(rest, "", "  ")
	if merr != nil {
		return merr
	}
	closing := "\n  ],\n"
	if j.n == 0 {
		closing = "],\n"
	}
	// data is {"ok": …}: its members follow the events' in one object.
	_, werr := fmt.Fprintf(j.w, "%s%s\n", closing, strings.TrimPrefix(string(data), "{\n"))
	return werr
}
