package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
	"github.com/rsgen/rsgen/rs"
)

const buildFlagsHelp = `flags:
  --config FILE     configuration file (default: ./rsgen.toml when present)
  --source DIR      folder of files to publish (config: source)
  --out DIR         folder to write the site into (config: out)
  --base-url URL    URL at which the output folder is served (config: base_url)
  --state DIR       folder of rsgen's state snapshot (config: state)
  --now TIME        build time, RFC 3339 (default: $SOURCE_DATE_EPOCH, else the clock)
  --verify          re-read every file instead of trusting unchanged size and mtime
  --wait            wait for another build on the same state instead of failing
  --skip-unreadable warn about files and folders that cannot be read, and
                    leave them out, instead of failing
  --force           publish into a non-empty --out that holds no rsgen build
  --explain         (status) also list every source path left out, and why
  --state-from-output
                    rebuild the state from the published output even when it
                    loads (automatic when the state is missing or corrupt)
  --quiet           print nothing but errors and warnings: no progress, no summary
  --json            (build) print a summary as one JSON object on stdout instead
                    of the summary line: counts, durations, paths written,
                    warnings; "ok": false and "error" when the build fails

Progress: on a terminal, a status line (files scanned and read, bytes, rate,
time left) is redrawn on stderr during the build; to a file or pipe, a plain
"rsgen: progress:" line is printed every 10s once a build runs that long.

Flags override the configuration file. Relative paths in the file are
relative to the file's folder; relative paths in flags to the working folder.`

var buildCommand = &command{
	summary: "build the ResourceSync site (the default command)",
	usage:   buildUsage,
	run:     runBuild,
}

const buildUsage = `usage: rsgen build [flags]

Scans the source folder, compares it with the state snapshot, and writes the
resources and every ResourceSync document into the output folder: the Source
Description at .well-known/resourcesync, a Capability List per set, Resource
Lists, and Change Lists with the changes found. Unchanged documents are not
rewritten; the snapshot is saved only once the output is complete.

` + buildFlagsHelp + `

examples:
  rsgen build
  rsgen build --source site --out public --base-url https://data.example.org/
  SOURCE_DATE_EPOCH=1700000000 rsgen build --config example-site/rsgen.toml`

var statusCommand = &command{
	summary: "show the changes the next build would publish (writes nothing)",
	usage:   statusUsage,
	run:     runStatus,
}

const statusUsage = `usage: rsgen status [flags]

Scans the source folder like build and prints the change events the next
build would publish, one per line, without writing anything.

` + buildFlagsHelp

// buildFlags are the flags shared by build and status.
type buildFlags struct {
	fs                                  *flag.FlagSet
	config, source, out, baseURL, state string
	now                                 string
	verify, quiet, json                 bool
	wait, stateFromOutput               bool
	skipUnreadable, force, explain      bool
}

func newBuildFlags(name string, stderr io.Writer) *buildFlags {
	f := &buildFlags{fs: flag.NewFlagSet(name, flag.ContinueOnError)}
	f.fs.SetOutput(stderr)
	f.fs.StringVar(&f.config, "config", "", "")
	f.fs.StringVar(&f.source, "source", "", "")
	f.fs.StringVar(&f.out, "out", "", "")
	f.fs.StringVar(&f.baseURL, "base-url", "", "")
	f.fs.StringVar(&f.state, "state", "", "")
	f.fs.StringVar(&f.now, "now", "", "")
	f.fs.BoolVar(&f.verify, "verify", false, "")
	f.fs.BoolVar(&f.quiet, "quiet", false, "")
	f.fs.BoolVar(&f.json, "json", false, "")
	f.fs.BoolVar(&f.wait, "wait", false, "")
	f.fs.BoolVar(&f.stateFromOutput, "state-from-output", false, "")
	f.fs.BoolVar(&f.skipUnreadable, "skip-unreadable", false, "")
	f.fs.BoolVar(&f.force, "force", false, "")
	f.fs.BoolVar(&f.explain, "explain", false, "")
	return f
}

// loadConfig reads the configuration file, applies the flags over it and
// validates the result. It returns the configuration file used, if any.
func (f *buildFlags) loadConfig() (*config.Config, string, error) {
	path := f.config
	if path == "" {
		// Only a file that is not there means "no configuration": one
		// that cannot be stat'ed is read, and its error reported.
		if _, err := os.Stat(config.FileName); !errors.Is(err, fs.ErrNotExist) {
			path = config.FileName
		}
	}
	cfg := config.Default()
	if path != "" {
		var err error
		if cfg, err = loadConfigFile(path); err != nil {
			return nil, "", err
		}
		if path, err = filepath.Abs(path); err != nil {
			return nil, "", err
		}
	} else if wd, err := os.Getwd(); err == nil {
		cfg.Dir = wd
	} else {
		return nil, "", err
	}
	for _, fl := range []struct {
		key, value string
		dst        *string
	}{{"source", f.source, &cfg.Source}, {"out", f.out, &cfg.Out}, {"state", f.state, &cfg.State}} {
		if fl.value != "" {
			abs, err := filepath.Abs(fl.value)
			if err != nil {
				return nil, "", err
			}
			*fl.dst = abs
			cfg.Override(fl.key)
		}
	}
	if f.baseURL != "" {
		cfg.BaseURL = f.baseURL
		cfg.Override("base_url")
	}
	if err := cfg.Validate(); err != nil {
		return nil, "", err
	}
	return &cfg, path, nil
}

// loadConfigFile is config.Load, except that a file that is there but
// cannot be read (an I/O error) fails the command (exit 1) instead of
// being reported as a configuration error (exit 2): a missing file, a
// folder or a permission denied remain the user's to fix.
func loadConfigFile(path string) (config.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EISDIR) {
			return config.Load(path) // its error says what is wrong
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return config.Config{}, fmt.Errorf("%s: cannot read the configuration file: %w", path, err)
	}
	cfg, err := config.Parse(bytes.NewReader(data), path)
	if err != nil {
		return config.Config{}, err
	}
	abs, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return config.Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	cfg.Dir = abs
	return cfg, nil
}

// buildTime returns the build's time: --now, else SOURCE_DATE_EPOCH, else
// the clock. A time no document can carry is refused.
func (f *buildFlags) buildTime(getenv func(string) string) (time.Time, error) {
	if f.now != "" {
		t, err := time.Parse(time.RFC3339, f.now)
		if err != nil {
			return time.Time{}, fmt.Errorf("--now %q: want an RFC 3339 time such as 2024-05-01T12:00:00Z", f.now)
		}
		if err := rs.CheckTime(t); err != nil {
			return time.Time{}, fmt.Errorf("--now: %w", err)
		}
		return t, nil
	}
	if s := getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil || sec < 0 {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: want a whole number of seconds since 1970", s)
		}
		if sec > rs.MaxTime.Unix() {
			sec = rs.MaxTime.Unix() + 1 // beyond time.Unix's range for CheckTime to refuse
		}
		if err := rs.CheckTime(time.Unix(sec, 0)); err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", s, err)
		}
		return time.Unix(sec, 0), nil
	}
	return time.Now(), nil
}

// prepare parses flags and configuration into generator inputs, reporting
// any problem itself; code is non-zero when the command must stop (or -h
// asked for help: then cfg is nil and code is exitOK).
func prepare(name, usage string, cio cliIO, args []string) (cfg *config.Config, opts generator.Options, f *buildFlags, code int) {
	f = newBuildFlags(name, cio.stderr)
	if code := parseFlags(f.fs, args, usage, cio.stdout); code != exitOK {
		return nil, opts, f, code
	}
	cfg, cfgFile, err := f.loadConfig()
	if err != nil {
		fmt.Fprintf(cio.stderr, "rsgen %s: %v\n", name, err)
		return nil, opts, f, exitCodeOf(err)
	}
	now, err := f.buildTime(cio.getenv)
	if err != nil {
		fmt.Fprintf(cio.stderr, "rsgen %s: %v\n", name, err)
		return nil, opts, f, exitUsage
	}
	opts = generator.Options{Now: now, Verify: f.verify, ConfigFile: cfgFile, Notify: newProgress(cio.stderr, progressNone, f.quiet).notify,
		Wait: f.wait, StateFromOutput: f.stateFromOutput, SkipUnreadable: f.skipUnreadable, Force: f.force}
	return cfg, opts, f, exitOK
}

// failed reports the error of a command that ran a build or a scan, and
// returns its exit code: an interrupt is said in plain words, with what it
// leaves (exit 130); anything else is a failure (exit 1).
func failed(ctx context.Context, cio cliIO, name string, err error) int {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		fmt.Fprintf(cio.stderr, "rsgen %s: interrupted; the output and the state are those of the last complete build\n", name)
		return exitInterrupted
	}
	fmt.Fprintf(cio.stderr, "rsgen %s: %v\n", name, err)
	return exitFailure
}

// exitCodeOf maps an error to the exit code: configuration errors are
// usage errors.
func exitCodeOf(err error) int {
	var ce *config.Error
	if errors.As(err, &ce) {
		return exitUsage
	}
	return exitFailure
}

func runBuild(ctx context.Context, cio cliIO, args []string) int {
	cfg, opts, f, code := prepare("build", buildUsage, cio, args)
	if cfg == nil {
		return code
	}
	p := progressFor(cio, f.quiet)
	opts.Notify = p.notify
	start := time.Now()
	sum, err := generator.Build(ctx, cfg, opts)
	p.finish()
	if f.json {
		if jerr := writeJSONSummary(cio.stdout, p, sum, err, time.Since(start)); jerr != nil {
			fmt.Fprintf(cio.stderr, "rsgen build: %v\n", jerr)
			return exitFailure
		}
	}
	if err != nil {
		return failed(ctx, cio, "build", err)
	}
	if !f.quiet && !f.json {
		leftOut := ""
		if sum.LeftOut > 0 {
			leftOut = fmt.Sprintf(", %d left out (see the warnings)", sum.LeftOut)
		}
		fmt.Fprintf(cio.stdout, "rsgen: %d resources (%d created, %d updated, %d deleted%s); read %d files (%s); %d documents written, %d unchanged; %d resources placed, %d removed in %s\n",
			sum.Files, sum.Created, sum.Updated, sum.Deleted, leftOut, sum.Hashed, formatBytes(sum.HashedBytes),
			sum.DocumentsWritten, sum.DocumentsUnchanged, sum.ResourcesPlaced, sum.ResourcesRemoved,
			time.Since(start).Round(time.Millisecond))
	}
	return exitOK
}

// jsonSummary is what build --json prints: one object, for CI. Its shape
// is kept stable (testscripts/cli_json.txtar); fields are only added.
type jsonSummary struct {
	OK        bool   `json:"ok"`
	Error     string `json:"error,omitempty"`
	Time      string `json:"time,omitempty"` // the build time, RFC 3339 UTC
	Resources struct {
		Total   int `json:"total"`
		Created int `json:"created"`
		Updated int `json:"updated"`
		Deleted int `json:"deleted"`
		Placed  int `json:"placed"`
		Removed int `json:"removed"`
		LeftOut int `json:"left_out"` // cannot be published: see the warnings
	} `json:"resources"`
	Read struct {
		Files int   `json:"files"`
		Bytes int64 `json:"bytes"`
	} `json:"read"`
	Documents struct {
		Written   int `json:"written"`
		Unchanged int `json:"unchanged"`
		Removed   int `json:"removed"`
	} `json:"documents"`
	// Written lists the output paths this build wrote: documents, the
	// stylesheet and hosting files (resources placed are counted only).
	Written   []string   `json:"written"`
	Warnings  []noteJSON `json:"warnings"`
	Durations struct {
		ScanMS  int64 `json:"scan_ms"`
		TotalMS int64 `json:"total_ms"`
	} `json:"durations"`
}

// writeJSONSummary prints the --json summary of a build that returned sum
// and err, with the notes p collected.
func writeJSONSummary(w io.Writer, p *progress, sum *generator.Summary, err error, took time.Duration) error {
	var j jsonSummary
	p.mu.Lock()
	j.Written = append([]string{}, p.written...)
	j.Warnings = append([]noteJSON{}, p.warnings...)
	p.mu.Unlock()
	sort.Strings(j.Written)
	j.Durations.TotalMS = took.Milliseconds()
	if err != nil {
		j.Error = err.Error()
	} else {
		j.OK = true
		j.Time = sum.Now.UTC().Format(time.RFC3339)
		j.Resources.Total, j.Resources.Created, j.Resources.Updated, j.Resources.Deleted = sum.Files, sum.Created, sum.Updated, sum.Deleted
		j.Resources.Placed, j.Resources.Removed, j.Resources.LeftOut = sum.ResourcesPlaced, sum.ResourcesRemoved, sum.LeftOut
		j.Read.Files, j.Read.Bytes = sum.Hashed, sum.HashedBytes
		j.Documents.Written, j.Documents.Unchanged, j.Documents.Removed = sum.DocumentsWritten, sum.DocumentsUnchanged, sum.DocumentsRemoved
		j.Durations.ScanMS = sum.ScanTime.Milliseconds()
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(&j)
}

func runStatus(ctx context.Context, cio cliIO, args []string) int {
	cfg, opts, f, code := prepare("status", statusUsage, cio, args)
	if cfg == nil {
		return code
	}
	if f.explain {
		excluded, err := generator.Explain(cfg, opts)
		if err != nil {
			fmt.Fprintf(cio.stderr, "rsgen status: %v\n", err)
			return exitFailure
		}
		for _, e := range excluded {
			fmt.Fprintf(cio.stdout, "excluded %s (%s)\n", e.Path, e.Reason)
		}
	}
	sum, err := generator.Plan(ctx, cfg, opts)
	if err != nil {
		return failed(ctx, cio, "status", err)
	}
	for _, ev := range sum.Events {
		fmt.Fprintf(cio.stdout, "%-8s %s\n", ev.Change, ev.Record.Path)
	}
	fmt.Fprintf(cio.stdout, "%d created, %d updated, %d deleted (not published: status writes nothing)\n",
		sum.Created, sum.Updated, sum.Deleted)
	return exitOK
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
