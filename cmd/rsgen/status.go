package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/rsgen/rsgen/generator"
)

var statusCommand = &command{
	name:     "status",
	summary:  "show the changes the next build would publish (writes nothing)",
	synopsis: "[flags]",
	about: `Scans the source folder like build and prints the change events the next
build would publish, one per line, without writing anything.`,
	more: `exit codes: 0, or with --exit-code 1 when the next build would publish
changes (as git diff --exit-code); 2 usage or configuration error.`,
	flags: func() (*flag.FlagSet, any) { f := newStatusFlags(); return f.fs, f },
	run:   runStatus,
}

// statusFlags are the flags of rsgen status.
type statusFlags struct {
	fs                                       *flag.FlagSet
	site                                     siteFlags
	now                                      string
	verify, skipUnreadable, explain, jsonOut bool
	exitCode                                 bool
}

func newStatusFlags() *statusFlags {
	f := &statusFlags{fs: flag.NewFlagSet("status", flag.ContinueOnError)}
	f.site.register(f.fs)
	f.fs.StringVar(&f.now, "now", "", nowUsage)
	f.fs.BoolVar(&f.verify, "verify", false, "re-read every file instead of trusting unchanged size and mtime")
	f.fs.BoolVar(&f.skipUnreadable, "skip-unreadable", false, "leave out files and folders that cannot be read")
	f.fs.BoolVar(&f.explain, "explain", false, "also list every source path left out, and why, and the files in no set")
	f.fs.BoolVar(&f.jsonOut, "json", false, "print the events and the counts per set as one JSON object, as\nbuild --json does")
	f.fs.BoolVar(&f.exitCode, "exit-code", false, "exit 1 when the next build would publish changes")
	return f
}

func runStatus(ctx context.Context, cio cliIO, values any, _ []string) int {
	f := values.(*statusFlags)
	cfg, cfgFile, err := f.site.loadToBuild()
	if err != nil {
		fmt.Fprintf(cio.stderr, "rsgen status: %v\n", err)
		return exitCodeOf(err)
	}
	now, err := buildTime(f.now, cio.getenv)
	if err != nil {
		fmt.Fprintf(cio.stderr, "rsgen status: %v\n", err)
		return exitUsage
	}
	p := newProgress(cio.stderr, progressNone, false)
	opts := generator.Options{Now: now, Verify: f.verify, ConfigFile: cfgFile, SkipUnreadable: f.skipUnreadable, Notify: p.notify, ListUnlisted: f.explain, ListEvents: true}
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
	if f.explain {
		for _, w := range p.warningList() {
			fmt.Fprintf(cio.stdout, "skipped %s (%s)\n", w.Path, w.Message)
		}
	} else {
		p.printWarnings()
	}
	if err != nil {
		return failed(ctx, cio, "status", err)
	}
	if f.explain {
		for _, path := range sum.UnlistedPaths {
			fmt.Fprintf(cio.stdout, "in no set %s (published, but listed by no set's documents)\n", path)
		}
	}
	if f.jsonOut {
		enc := json.NewEncoder(cio.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(newChangesJSON(sum)); err != nil {
			fmt.Fprintf(cio.stderr, "rsgen status: %v\n", err)
			return exitFailure
		}
	} else {
		for _, ev := range sum.Events {
			fmt.Fprintf(cio.stdout, "%-8s %s\n", ev.Change, ev.Record.Path)
		}
		fmt.Fprintf(cio.stdout, "%d created, %d updated, %d deleted (not published: status writes nothing)\n",
			sum.Created, sum.Updated, sum.Deleted)
	}
	if f.exitCode && len(sum.Events) > 0 {
		return exitFailure
	}
	return exitOK
}
