package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
	"github.com/rsgen/rsgen/sink"
)

var buildCommand = &command{
	name:     "build",
	summary:  "build the ResourceSync site (the default command)",
	synopsis: "[flags]",
	about: `Scans the source folder, compares it with the state snapshot, and writes the
resources and every ResourceSync document into the output folder: the Source
Description at .well-known/resourcesync, a Capability List per set, Resource
Lists, and Change Lists with the changes found. Unchanged documents are not
rewritten; the snapshot is saved only once the output is complete.`,
	more: `Flags override the configuration file. Relative paths in the file are
relative to the file's folder; relative paths in flags to the working folder.

Progress: on a terminal, a status line (files scanned and read, bytes, rate,
time left) is redrawn on stderr during the build; to a file or pipe, a plain
"rsgen: progress:" line is printed every 10s once a build runs that long.
Warnings are printed once the build is done, one line per kind of problem.

examples:
  rsgen build
  rsgen build --source site --out public --base-url https://data.example.org/
  SOURCE_DATE_EPOCH=1700000000 rsgen build --config example-site/rsgen.toml`,
	flags: func() (*flag.FlagSet, any) { f := newBuildFlags(); return f.fs, f },
	run:   runBuild,
}

// buildFlags are the flags of rsgen build.
type buildFlags struct {
	fs                                 *flag.FlagSet
	site                               siteFlags
	now                                string
	verify, wait, skipUnreadable       bool
	force, stateFromOutput             bool
	rebase, removeSets, quiet, jsonOut bool
}

func newBuildFlags() *buildFlags {
	f := &buildFlags{fs: flag.NewFlagSet("build", flag.ContinueOnError)}
	f.site.register(f.fs)
	f.fs.StringVar(&f.now, "now", "", nowUsage)
	f.fs.BoolVar(&f.verify, "verify", false, "re-read every file, and check every published copy, instead of\ntrusting unchanged size and mtime")
	f.fs.BoolVar(&f.wait, "wait", false, "wait for another build on the same state instead of failing")
	f.fs.BoolVar(&f.skipUnreadable, "skip-unreadable", false, "leave out files and folders that cannot be read, or keep the last\npublished version of those published before, with a warning,\ninstead of failing")
	f.fs.BoolVar(&f.force, "force", false, "publish into a non-empty output folder that holds no rsgen build")
	f.fs.BoolVar(&f.stateFromOutput, "state-from-output", false, "rebuild the state from the published output even when it loads\n(automatic when the state is missing or corrupt)")
	f.fs.BoolVar(&f.rebase, "rebase", false, "confirm a new base_url: the Source starts afresh there, with a new\nbaseline (the closed lists, archives and packages of the old\nbase URL are removed)")
	f.fs.BoolVar(&f.removeSets, "remove-sets", false, "confirm that the sets the state published and the configuration\nno longer has are removed, with their documents")
	f.fs.BoolVar(&f.quiet, "quiet", false, "print nothing but errors: no progress, no warnings, no summary")
	f.fs.BoolVar(&f.jsonOut, "json", false, "print a summary as one JSON object on stdout: counts, per set,\nevents, paths written, warnings; \"ok\": false and \"error\" when\nthe build fails")
	return f
}

// options returns the generator's options for a build of this command
// line, and the configuration it builds.
func (f *buildFlags) options(cio cliIO) (*config.Config, generator.Options, error) {
	cfg, cfgFile, err := f.site.loadToBuild()
	if err != nil {
		return nil, generator.Options{}, err
	}
	now, err := buildTime(f.now, cio.getenv)
	if err != nil {
		return nil, generator.Options{}, &config.Error{Msg: err.Error()}
	}
	return cfg, generator.Options{Now: now, Verify: f.verify, ConfigFile: cfgFile, Wait: f.wait,
		StateFromOutput: f.stateFromOutput, SkipUnreadable: f.skipUnreadable, Force: f.force,
		Rebase: f.rebase, RemoveSets: f.removeSets, ListEvents: f.jsonOut}, nil
}

func runBuild(ctx context.Context, cio cliIO, values any, _ []string) int {
	f := values.(*buildFlags)
	cfg, opts, err := f.options(cio)
	if err != nil {
		fmt.Fprintf(cio.stderr, "rsgen build: %v\n", err)
		return exitCodeOf(err)
	}
	p := progressFor(cio, f.quiet)
	p.listWritten = f.jsonOut
	opts.Notify = p.notify
	start := time.Now()
	sum, err := generator.Build(ctx, cfg, opts)
	p.finish()
	if f.jsonOut {
		if jerr := writeJSONSummary(cio.stdout, p, sum, err, time.Since(start)); jerr != nil {
			fmt.Fprintf(cio.stderr, "rsgen build: %v\n", jerr)
			return exitFailure
		}
	}
	if err != nil {
		if errors.Is(err, generator.ErrDiscontinuity) {
			fmt.Fprintf(cio.stderr, "rsgen build: %v\n", err)
			return exitUsage
		}
		return failed(ctx, cio, "build", err)
	}
	if !f.quiet && !f.jsonOut {
		fmt.Fprintf(cio.stdout, "rsgen: %s\n", summaryLine(sum, time.Since(start)))
	}
	return exitOK
}

// summaryLine says what a build did, in one line.
func summaryLine(sum *generator.Summary, took time.Duration) string {
	leftOut := ""
	if sum.LeftOut > 0 {
		leftOut = fmt.Sprintf(", %d left out (see the warnings)", sum.LeftOut)
	}
	unlisted := ""
	if sum.Unlisted > 0 {
		unlisted = fmt.Sprintf(", %s in no set", plural(sum.Unlisted, "file"))
	}
	return fmt.Sprintf("%s (%d created, %d updated, %d deleted%s%s); read %s (%s); %s; %s placed, %d removed in %s",
		plural(sum.Files, "resource"), sum.Created, sum.Updated, sum.Deleted, leftOut, unlisted,
		plural(sum.Hashed, "file"), formatBytes(sum.HashedBytes),
		outputsWritten(sum), plural(sum.ResourcesPlaced, "resource"), sum.ResourcesRemoved,
		took.Round(time.Millisecond))
}

// outputsWritten says how many documents, packages and versions a build
// wrote, and how many it left as they were: "44 documents, 4 packages
// written, 0 unchanged". Documents are counted as rsgen check counts them.
func outputsWritten(sum *generator.Summary) string {
	o := &sum.Outputs
	written := plural(o[sink.Document].Written, "document")
	if n := o[sink.Package].Written; n > 0 {
		written += ", " + plural(n, "package")
	}
	if n := o[sink.Version].Written; n > 0 {
		written += ", " + plural(n, "version file")
	}
	unchanged := o[sink.Document].Unchanged + o[sink.Package].Unchanged + o[sink.Version].Unchanged
	return fmt.Sprintf("%s written, %d unchanged", written, unchanged)
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
	return exitCodeOf(err) // a configuration the build refuses is exit 2, as Validate's
}

// eventJSON is one change event, as build --json and status --json print it.
type eventJSON struct {
	Change string `json:"change"`
	Path   string `json:"path"`
	Time   string `json:"time"`
}

// setJSON is the counts of one set.
type setJSON struct {
	Name      string `json:"name"`
	Resources int    `json:"resources"`
	Created   int    `json:"created"`
	Updated   int    `json:"updated"`
	Deleted   int    `json:"deleted"`
}

// changesJSON are the changes of a build, or of the next one.
type changesJSON struct {
	Events []eventJSON `json:"events"`
	Sets   []setJSON   `json:"sets"`
}

func newChangesJSON(sum *generator.Summary) changesJSON {
	c := changesJSON{Events: []eventJSON{}, Sets: []setJSON{}}
	for _, ev := range sum.Events {
		c.Events = append(c.Events, eventJSON{Change: ev.Change.String(), Path: ev.Record.Path,
			Time: time.Unix(ev.Time, 0).UTC().Format(time.RFC3339)})
	}
	for _, s := range sum.Sets {
		c.Sets = append(c.Sets, setJSON{Name: s.Name, Resources: s.Resources, Created: s.Created, Updated: s.Updated, Deleted: s.Deleted})
	}
	return c
}

// jsonSummary is what build --json prints: one object, for CI. Its shape
// is kept stable (testscripts/cli_json.txtar); fields are only added.
type jsonSummary struct {
	OK        bool   `json:"ok"`
	Error     string `json:"error,omitempty"`
	Time      string `json:"time,omitempty"` // the build time, RFC 3339 UTC
	Resources struct {
		Total    int `json:"total"`
		Created  int `json:"created"`
		Updated  int `json:"updated"`
		Deleted  int `json:"deleted"`
		Placed   int `json:"placed"`
		Removed  int `json:"removed"`
		LeftOut  int `json:"left_out"` // cannot be published: see the warnings
		Unlisted int `json:"unlisted"` // published in no set
	} `json:"resources"`
	Read struct {
		Files int   `json:"files"`
		Bytes int64 `json:"bytes"`
	} `json:"read"`
	// The files written beside the resources, by kind (see sink.Kind).
	Documents countsJSON `json:"documents"`
	Packages  countsJSON `json:"packages"`
	Versions  countsJSON `json:"versions"`
	SideFiles countsJSON `json:"side_files"`
	changesJSON
	// Written lists the output paths this build wrote: documents, the
	// stylesheet and hosting files (resources placed are counted only).
	Written   []string   `json:"written"`
	Warnings  []noteJSON `json:"warnings"`
	Durations struct {
		ScanMS  int64 `json:"scan_ms"`
		TotalMS int64 `json:"total_ms"`
	} `json:"durations"`
}

// countsJSON are the counts of one kind of output file.
type countsJSON struct {
	Written   int `json:"written"`
	Unchanged int `json:"unchanged"`
	Removed   int `json:"removed"`
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
	j.changesJSON = changesJSON{Events: []eventJSON{}, Sets: []setJSON{}}
	if err != nil {
		j.Error = err.Error()
	} else {
		j.OK = true
		j.Time = sum.Now.UTC().Format(time.RFC3339)
		j.Resources.Total, j.Resources.Created, j.Resources.Updated, j.Resources.Deleted = sum.Files, sum.Created, sum.Updated, sum.Deleted
		j.Resources.Placed, j.Resources.Removed, j.Resources.LeftOut, j.Resources.Unlisted = sum.ResourcesPlaced, sum.ResourcesRemoved, sum.LeftOut, sum.Unlisted
		j.Read.Files, j.Read.Bytes = sum.Hashed, sum.HashedBytes
		j.Documents = countsJSON(sum.Outputs[sink.Document])
		j.Packages = countsJSON(sum.Outputs[sink.Package])
		j.Versions = countsJSON(sum.Outputs[sink.Version])
		j.SideFiles = countsJSON(sum.Outputs[sink.SideFile])
		j.Durations.ScanMS = sum.ScanTime.Milliseconds()
		j.changesJSON = newChangesJSON(sum)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(&j)
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
