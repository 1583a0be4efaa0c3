package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rsgen/rsgen/checker"
	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/deploy"
	"github.com/rsgen/rsgen/layout"
)

var deployCommand = &command{
	name:     "deploy",
	summary:  "publish the last build to S3 or a web server's folder, in an order Destinations never trip over",
	synopsis: "[--to URL] [flags]",
	about: `Publishes the last complete build (the output folder) to an S3 bucket (or
any S3-compatible service) or to a web server's document root, in the order
a build publishes: resources, versions, TimeMaps, packages and closed
documents, parts, lists, Capability Lists, the Source Description, and only
then deletes. A Destination reading meanwhile never finds a link to a file
that is not there. A failure stops before the next step; the next deploy
completes it without sending again what landed.

Only what changed since the last deploy is sent: the deploy keeps a
manifest of what it published on the target (.rsgen-deploy/manifest) and a
cache of file hashes in the state folder, so a deploy with nothing changed
makes one request, however many files there are. Only objects rsgen
published are ever deleted.`,
	more: `Credentials come from the AWS SDK's usual sources: AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY, AWS_PROFILE, an instance or task role; never from a
URL (an endpoint or target with user:password@ is refused). S3 objects get
Content-Type from rsgen's media-type table (or the type the Resource List
publishes) and Cache-Control: immutable for packages, mementos, patches and
closed or archived documents, short_cache for the other documents, none for
resources. A web root gets its headers from the server: deploy the hosting
files ([publish] targets = ["nginx"] or ["apache"]) with it.

Progress: a status line on a terminal; otherwise one line per step.

With [notification] hub set, the deploy then sends the notifications of
the builds it published to the hub (see rsgen help notify); a notification
the hub does not take, after retries, stays in the outbox for the next
deploy or rsgen notify.

exit codes: 0 deployed (or nothing to do), 1 failure, 2 usage or
configuration error, 3 deployed, but the hub did not take every
notification (they stay in the outbox for the next deploy), 130
interrupted (the next deploy completes it).

examples:
  rsgen deploy --to s3://my-bucket/resourcesync --dry-run
  AWS_ENDPOINT_URL=https://s3.example.net rsgen deploy --to s3://site
  rsgen deploy --to file:///var/www/site --max-deletes 100`,
	flags: func() (*flag.FlagSet, any) { f := newDeployFlags(); return f.fs, f },
	run:   runDeploy,
}

// deployFlags are the flags of rsgen deploy.
type deployFlags struct {
	fs                    *flag.FlagSet
	site                  siteFlags
	to, endpoint, region  string
	grace                 string
	maxDeletes            int
	dryRun, breakLock     bool
	verify, quiet, asJSON bool
}

func newDeployFlags() *deployFlags {
	f := &deployFlags{fs: flag.NewFlagSet("deploy", flag.ContinueOnError)}
	fs := f.fs
	fs.StringVar(&f.site.config, "config", "", "the configuration `FILE` (default: ./rsgen.toml when there is one)")
	fs.StringVar(&f.site.out, "out", "", "the output folder, a `DIR` (config: out)")
	fs.StringVar(&f.site.state, "state", "", "the `DIR` of rsgen's state (config: state)")
	fs.StringVar(&f.site.baseURL, "base-url", "", "the `URL` at which the site is published (config: base_url)")
	fs.StringVar(&f.to, "to", "", "where to: s3://bucket/prefix, file:///var/www/site or a folder,\na `URL` (config: [deploy] to)")
	fs.StringVar(&f.endpoint, "endpoint", "", "the `URL` of an S3-compatible service (config: [deploy] endpoint;\nelse AWS_ENDPOINT_URL, the profile, or AWS); buckets are then\naddressed by path")
	fs.StringVar(&f.region, "region", "", "the S3 `REGION` (config: [deploy] region; else AWS_REGION or the\nprofile)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the plan (per step: objects, bytes; requests and an\nestimated cost) and write nothing")
	fs.IntVar(&f.maxDeletes, "max-deletes", -1, "fail, before writing anything, when the deploy would delete more\nthan `N` objects (config: max_deletes)")
	fs.StringVar(&f.grace, "delete-grace", "", "keep an object that left the output for a `DURATION` (such as\n\"1h\") before deleting it, so that caches expire first (config:\ndelete_grace)")
	fs.BoolVar(&f.breakLock, "break-lock", false, "take the target's lock over from a deploy known to be gone (a\nlock not renewed for 2 minutes is taken over anyway)")
	fs.BoolVar(&f.verify, "verify", false, "once deployed, read the Source at base_url as a Destination would\n(rsgen check --verify-content) and fail on errors and wrong\ncontent types")
	fs.BoolVar(&f.quiet, "quiet", false, "print nothing but errors and warnings")
	fs.BoolVar(&f.asJSON, "json", false, "print a summary as one JSON object on stdout")
	return f
}

func runDeploy(ctx context.Context, cio cliIO, values any, _ []string) int {
	f := values.(*deployFlags)
	start := time.Now()
	cfg, opts, err := f.options(ctx)
	if err != nil {
		fmt.Fprintf(cio.stderr, "rsgen deploy: %v\n", err)
		return exitCodeOf(err)
	}
	p := newDeployProgress(cio, f.quiet || f.asJSON)
	opts.Notify = p.notify
	sum, err := deploy.Run(ctx, opts)
	p.finish()
	var ver *verification
	if err == nil && f.verify && !f.dryRun {
		ver, err = verifyDeploy(ctx, cfg, opts.Store, cio.stderr)
	}
	var sent *notified
	if err == nil && !f.dryRun && cfg.Notification.On() {
		// Everything is live: the notifications of the build may go.
		sent = sendNotifications(ctx, cio, cfg, sum.Built)
	}
	if f.asJSON {
		if jerr := writeDeployJSON(cio.stdout, sum, p, ver, sent, err, time.Since(start)); jerr != nil {
			fmt.Fprintf(cio.stderr, "rsgen deploy: %v\n", jerr)
			return exitFailure
		}
	} else if sum != nil && (err == nil && !f.quiet || f.dryRun && planned(err)) {
		printDeploy(cio.stdout, sum, time.Since(start))
		if sent != nil && sent.err == nil {
			fmt.Fprintf(cio.stdout, "rsgen deploy: notified %s: %s sent\n", sent.Hub, plural(sent.Sent, "notification"))
		}
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			fmt.Fprintln(cio.stderr, "rsgen deploy: interrupted; the next deploy completes this one")
			return exitInterrupted
		}
		fmt.Fprintf(cio.stderr, "rsgen deploy: %v\n", err)
		return exitFailure
	}
	if sent != nil && sent.err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(cio.stderr, "rsgen deploy: interrupted after the deploy; the notifications not sent stay in the outbox for the next deploy or rsgen notify")
			return exitInterrupted
		}
		fmt.Fprintf(cio.stderr, "rsgen deploy: warning: deployed, but the notifications are not all sent: %s\n", strings.TrimPrefix(sent.err.Error(), "notify: "))
		return exitNotificationsPending
	}
	return exitOK
}

// planned reports whether a deploy that failed with err made its plan
// whole, which a dry run then prints: it would delete too many objects.
func planned(err error) bool {
	var tooMany *deploy.TooManyDeletesError
	return err == nil || errors.As(err, &tooMany)
}

// options reads the configuration and the flags into the deploy's options,
// with the store opened.
func (f *deployFlags) options(ctx context.Context) (*config.Config, deploy.Options, error) {
	cfg, _, err := f.site.load()
	if err != nil {
		return nil, deploy.Options{}, err
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, deploy.Options{}, err
	}
	target, err := cfg.DeployTo(f.to, wd)
	if err != nil {
		return nil, deploy.Options{}, err
	}
	opts := deploy.Options{Out: cfg.Out, State: cfg.State, BaseURL: cfg.BaseURL, CopyResources: cfg.CopyResources, ShortCache: cfg.Publish.ShortCache.Duration,
		Grace: cfg.Deploy.DeleteGrace.Duration, DryRun: f.dryRun, BreakLock: f.breakLock}
	if opts.MaxDeletes, err = f.maxDeletesOf(cfg); err != nil {
		return nil, deploy.Options{}, err
	}
	if f.grace != "" {
		var d config.Duration
		if err := d.UnmarshalText([]byte(f.grace)); err != nil {
			return nil, deploy.Options{}, &config.Error{Msg: "--delete-grace: " + err.Error()}
		}
		opts.Grace = d.Duration
	}
	if opts.Store, err = openStore(ctx, cfg, target, f); err != nil {
		return nil, deploy.Options{}, err
	}
	return cfg, opts, nil
}

// maxDeletesOf returns the limit of deletes: --max-deletes when given,
// else max_deletes, else none (-1).
func (f *deployFlags) maxDeletesOf(cfg *config.Config) (int, error) {
	given := false
	f.fs.Visit(func(fl *flag.Flag) { given = given || fl.Name == "max-deletes" })
	switch {
	case given:
		if err := config.CheckMaxDeletes(f.maxDeletes); err != nil {
			return 0, &config.Error{Msg: "--max-deletes: " + err.Error()}
		}
		return f.maxDeletes, nil
	case cfg.Deploy.MaxDeletes != nil:
		return *cfg.Deploy.MaxDeletes, nil
	}
	return -1, nil
}

// openStore opens the target: a bucket, or a folder.
func openStore(ctx context.Context, cfg *config.Config, target config.DeployTarget, f *deployFlags) (deploy.Store, error) {
	if target.Bucket == "" {
		return deploy.OpenDir(target.Dir)
	}
	endpoint, region := cfg.Deploy.Endpoint, cfg.Deploy.Region
	if f.endpoint != "" {
		if err := config.CheckEndpoint(f.endpoint); err != nil {
			return nil, &config.Error{Msg: "--endpoint: " + err.Error()}
		}
		endpoint = f.endpoint
	}
	if f.region != "" {
		region = f.region
	}
	return deploy.OpenS3(ctx, deploy.S3Options{Bucket: target.Bucket, Prefix: target.Prefix, Endpoint: endpoint, Region: region})
}

// printDeploy prints the outcome of a deploy, or with --dry-run its plan.
func printDeploy(w io.Writer, sum *deploy.Summary, took time.Duration) {
	uploads, reheaders, bytes := sum.Uploads()
	if sum.DryRun {
		fmt.Fprintf(w, "rsgen deploy: plan for %s (dry run: nothing written)\n", sum.Store)
		for step, st := range sum.Steps {
			if st.Uploads+st.Reheaders > 0 {
				fmt.Fprintf(w, "  %-19s %d uploads (%s), %d headers re-applied\n", layout.Step(step), st.Uploads, formatBytes(st.Bytes), st.Reheaders)
			}
		}
		fmt.Fprintf(w, "  %-19s %d now, %d waiting for their grace period\n", "deletes", sum.Deletes, sum.Deferred)
		r := sum.Requests
		fmt.Fprintf(w, "  %d files, %d unchanged; %d uploads (%s), %d headers re-applied\n", sum.Files, sum.Unchanged, uploads, formatBytes(bytes), reheaders)
		fmt.Fprintf(w, "  requests: %d (%d PUT, %d COPY, %d GET, %d HEAD, %d DELETE), %s sent; about $%.6f at %s\n",
			r.Total(), r.Put, r.Copy, r.Get, r.Head, r.Delete, formatBytes(r.BytesSent), r.Cost(), deploy.PriceSource)
		return
	}
	fmt.Fprintf(w, "rsgen deploy: %s: %d uploaded (%s), %d headers re-applied, %d deleted, %d waiting to be deleted, %d unchanged (%d completed from an interrupted deploy); read %d files (%s); %d requests (%s sent) in %s\n",
		sum.Store, uploads, formatBytes(bytes), reheaders, sum.Deletes, sum.Deferred, sum.Unchanged, sum.Resumed, sum.Hashed,
		formatBytes(sum.HashedBytes), sum.Requests.Total(), formatBytes(sum.Requests.BytesSent), took.Round(time.Millisecond))
}

// verification is what --verify found.
type verification struct {
	URL      string `json:"url"`
	Errors   int    `json:"errors"`
	Warnings int    `json:"warnings"`
}

// verifyDeploy reads the deployed Source as a Destination would: over
// HTTP at base_url for a bucket, in the folder for a web root. Errors
// and resources served with another type than listed fail it.
func verifyDeploy(ctx context.Context, cfg *config.Config, store deploy.Store, stderr io.Writer) (*verification, error) {
	opts := checker.Options{VerifyContent: true}
	var rep checker.Report
	var err error
	v := &verification{URL: cfg.BaseURL}
	if dir, ok := store.(*deploy.DirStore); ok {
		v.URL = dir.String()
		opts.BaseURL = cfg.BaseURL
		rep, err = checker.CheckDir(ctx, strings.TrimPrefix(dir.String(), "file://"), opts)
	} else {
		rep, err = checker.CheckURL(ctx, cfg.BaseURL+layout.SourceDescription, opts)
	}
	if err != nil {
		return v, fmt.Errorf("verify: %w", err)
	}
	for _, f := range rep.Findings {
		if f.Severity == checker.Error || f.Rule == "content-type" || f.Rule == "http-content-type" {
			fmt.Fprintf(stderr, "rsgen deploy: verify: %v\n", f)
			if f.Severity == checker.Error {
				v.Errors++
			} else {
				v.Warnings++
			}
		}
	}
	if v.Errors+v.Warnings > 0 {
		return v, fmt.Errorf("verify: %s: %d errors, %d wrong content types (see above)", v.URL, v.Errors, v.Warnings)
	}
	return v, nil
}

// deployJSON is what deploy --json prints: one object, for CI.
type deployJSON struct {
	OK        bool       `json:"ok"`
	Error     string     `json:"error,omitempty"`
	DryRun    bool       `json:"dry_run"`
	Target    string     `json:"target,omitempty"`
	Files     int        `json:"files"`
	Read      readJSON   `json:"read"`
	Steps     []stepJSON `json:"steps"`
	Unchanged int        `json:"unchanged"`
	Resumed   int        `json:"resumed"`
	Deletes   int        `json:"deletes"`
	Deferred  int        `json:"deferred_deletes"`
	Requests  struct {
		Total     int     `json:"total"`
		Put       int     `json:"put"`
		Copy      int     `json:"copy"`
		Get       int     `json:"get"`
		Head      int     `json:"head"`
		Delete    int     `json:"delete"`
		Other     int     `json:"other"`
		BytesSent int64   `json:"bytes_sent"`
		CostUSD   float64 `json:"estimated_cost_usd"`
	} `json:"requests"`
	Verify        *verification `json:"verify,omitempty"`
	Notifications *notified     `json:"notifications,omitempty"`
	Warnings      []noteJSON    `json:"warnings"`
	Durations     struct {
		ScanMS  int64 `json:"scan_ms"`
		TotalMS int64 `json:"total_ms"`
	} `json:"durations"`
}

type readJSON struct {
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
}

type stepJSON struct {
	Step      string `json:"step"`
	Uploads   int    `json:"uploads"`
	Reheaders int    `json:"headers_reapplied"`
	Bytes     int64  `json:"bytes"`
}

func writeDeployJSON(w io.Writer, sum *deploy.Summary, p *deployProgress, ver *verification, sent *notified, err error, took time.Duration) error {
	j := deployJSON{OK: err == nil, Verify: ver, Notifications: sent, Steps: []stepJSON{}}
	if err != nil {
		j.Error = err.Error()
	}
	p.mu.Lock()
	j.Warnings = append([]noteJSON{}, p.warnings...)
	p.mu.Unlock()
	j.Durations.TotalMS = took.Milliseconds()
	if sum != nil {
		j.DryRun, j.Target, j.Files = sum.DryRun, sum.Store, sum.Files
		j.Read = readJSON{sum.Hashed, sum.HashedBytes}
		for step, st := range sum.Steps {
			j.Steps = append(j.Steps, stepJSON{layout.Step(step).String(), st.Uploads, st.Reheaders, st.Bytes})
		}
		j.Unchanged, j.Resumed, j.Deletes, j.Deferred = sum.Unchanged, sum.Resumed, sum.Deletes, sum.Deferred
		r := sum.Requests
		j.Requests.Total, j.Requests.Put, j.Requests.Copy, j.Requests.Get = r.Total(), r.Put, r.Copy, r.Get
		j.Requests.Head, j.Requests.Delete, j.Requests.Other, j.Requests.BytesSent = r.Head, r.Delete, r.Other, r.BytesSent
		j.Requests.CostUSD = r.Cost()
		j.Durations.ScanMS = sum.ScanTime.Milliseconds()
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(&j)
}

// deployProgress renders a deploy's events: a status line redrawn on a
// terminal, one line per step otherwise; warnings always.
type deployProgress struct {
	w     io.Writer
	mode  progressMode
	every time.Duration
	now   func() time.Time

	mu       sync.Mutex
	last     time.Time
	drawn    bool
	step     layout.Step
	total    int // writes of the step
	done     int
	bytes    int64 // to send in the step
	sent     int64
	warnings []noteJSON
}

func newDeployProgress(cio cliIO, quiet bool) *deployProgress {
	p := &deployProgress{w: cio.stderr, mode: progressLines, every: linesEvery, now: time.Now}
	switch {
	case quiet:
		p.mode = progressNone
	case cio.isTerminal != nil && cio.isTerminal(cio.stderr):
		p.mode, p.every = progressTerminal, terminalEvery
	}
	p.last = p.now()
	return p
}

func (p *deployProgress) notify(e deploy.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Kind {
	case deploy.EventWarning:
		p.warnings = append(p.warnings, noteJSON{Path: e.Path, Message: e.Msg})
		if e.Path != "" {
			p.printAbove(fmt.Sprintf("rsgen: warning: %s: %s", e.Path, e.Msg))
		} else {
			p.printAbove("rsgen: warning: " + e.Msg)
		}
	case deploy.EventInfo:
		if p.mode != progressNone {
			p.printAbove("rsgen: " + e.Msg)
		}
	case deploy.EventStep:
		p.step, p.total, p.done, p.bytes, p.sent = e.Step, e.Count, 0, e.Bytes, 0
		if p.mode == progressLines {
			fmt.Fprintf(p.w, "rsgen deploy: %s: %d objects (%s)\n", e.Step, e.Count, formatBytes(e.Bytes))
		}
	case deploy.EventWritten, deploy.EventFound:
		p.done++
		if e.Kind == deploy.EventWritten {
			p.sent += e.Bytes
		} else {
			p.bytes -= e.Bytes // found there: not to be sent
		}
		if now := p.now(); p.mode != progressNone && now.Sub(p.last) >= p.every {
			p.last = now
			p.render()
		}
	case deploy.EventDeleted:
		if p.mode != progressNone {
			p.printAbove(fmt.Sprintf("rsgen deploy: deleted %d objects", e.Count))
		}
	}
}

// render shows the progress of the step.
func (p *deployProgress) render() {
	line := fmt.Sprintf("%s: %d/%d objects, %s/%s", p.step, p.done, p.total, formatBytes(p.sent), formatBytes(p.bytes))
	if p.mode == progressTerminal {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.drawn = true
		return
	}
	fmt.Fprintf(p.w, "rsgen deploy: progress: %s\n", line)
}

func (p *deployProgress) printAbove(line string) {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
	fmt.Fprintln(p.w, line)
}

// finish clears the status line.
func (p *deployProgress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}
