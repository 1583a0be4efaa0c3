package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rsgen/rsgen/checker"
	"github.com/rsgen/rsgen/config"
)

var checkCommand = &command{
	summary: "check a ResourceSync site or document for conformance",
	usage:   checkUsage,
	run:     runCheck,
}

const checkUsage = `usage: rsgen check PATH|URL [flags]

Checks a ResourceSync Source against ResourceSync 1.1 (ANSI/NISO Z39.99-2017)
and prints one line per finding, then a summary. PATH is an output folder
(the check starts at PATH/.well-known/resourcesync and follows every link) or
a single document. URL is a live Source: a site root is discovered through
/.well-known/resourcesync or robots.txt, any other URL is a document whose up
links lead to the Source Description.

flags:
  --verify-content     also read every listed resource and compare its length and hash
  --format text|json   output format (default text)
  --strict             fail on warnings too
  --base-url URL       URL at which PATH is served (default: inferred from the Source Description)
  --follow-external    also fetch documents and resources on other hosts, and
                       follow redirects to them
  --max-requests N     stop after N HTTP requests (default 10000)
  --max-bytes SIZE     stop after reading SIZE over HTTP in all (default 16GiB)
  --max-unzip SIZE     decompress at most SIZE from dump packages in all
                       (default 16GiB); one package may decompress to at most
                       100 times its size (16MiB for small ones)
  --timeout DURATION   time limit of each HTTP request, body included (default 30s)
  --max-time DURATION  time limit of the whole check (default 10m)

A check that reaches a limit stops and reports so as an error: its result is
incomplete. In a folder, only regular files are read, never through a
symbolic link that leads out of it.

exit codes: 0 no errors (warnings allowed unless --strict), 1 errors found or
the check failed, 2 usage error, 130 interrupted.

examples:
  rsgen check public/
  rsgen check public/ --verify-content --strict
  rsgen check https://data.example.org/ --format json
  rsgen check changelist.xml`

// checkFlags are the parsed arguments of rsgen check.
type checkFlags struct {
	target string
	format string
	strict bool
	opts   checker.Options
}

func runCheck(ctx context.Context, cio cliIO, args []string) int {
	f, err := parseCheckFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(cio.stdout, checkUsage)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(cio.stderr, "rsgen check: %v\n", err)
		fmt.Fprintln(cio.stderr, checkUsage)
		return exitUsage
	}
	report, err := checker.Check(ctx, f.target, f.opts)
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		fmt.Fprintln(cio.stderr, "rsgen check: interrupted; the check is incomplete")
		return exitInterrupted
	}
	if err != nil {
		fmt.Fprintf(cio.stderr, "rsgen check: %v\n", err)
		if errors.Is(err, checker.ErrNoBaseURL) {
			return exitUsage
		}
		return exitFailure
	}
	if err := render(cio.stdout, f.format, &report); err != nil {
		fmt.Fprintf(cio.stderr, "rsgen check: write report: %v\n", err)
		return exitFailure
	}
	if !report.OK(f.strict) {
		return exitFailure
	}
	return exitOK
}

// parseCheckFlags parses flags given before or after the one argument.
func parseCheckFlags(args []string) (*checkFlags, error) {
	f := &checkFlags{}
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&f.opts.VerifyContent, "verify-content", false, "")
	fs.StringVar(&f.format, "format", "text", "")
	fs.BoolVar(&f.strict, "strict", false, "")
	fs.StringVar(&f.opts.BaseURL, "base-url", "", "")
	fs.BoolVar(&f.opts.FollowExternal, "follow-external", false, "")
	fs.IntVar(&f.opts.MaxRequests, "max-requests", 10000, "")
	fs.DurationVar(&f.opts.Timeout, "timeout", 30*time.Second, "")
	fs.DurationVar(&f.opts.MaxTime, "max-time", 10*time.Minute, "")
	maxBytes, maxUnzip := config.ByteSize(16<<30), config.ByteSize(16<<30)
	fs.TextVar(&maxBytes, "max-bytes", maxBytes, "")
	fs.TextVar(&maxUnzip, "max-unzip", maxUnzip, "")
	var targets []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		targets = append(targets, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch {
	case len(targets) == 0:
		return nil, errors.New("missing PATH or URL")
	case len(targets) > 1:
		return nil, fmt.Errorf("unexpected argument %q", targets[1])
	case f.format != "text" && f.format != "json":
		return nil, fmt.Errorf("--format %q: want text or json", f.format)
	case f.opts.MaxRequests < 1:
		return nil, fmt.Errorf("--max-requests %d: want at least 1", f.opts.MaxRequests)
	case f.opts.Timeout <= 0:
		return nil, fmt.Errorf("--timeout %s: want a positive duration", f.opts.Timeout)
	case f.opts.MaxTime <= 0:
		return nil, fmt.Errorf("--max-time %s: want a positive duration", f.opts.MaxTime)
	}
	f.opts.MaxBytes, f.opts.MaxUnzipBytes = int64(maxBytes), int64(maxUnzip)
	f.target = targets[0]
	return f, nil
}

// render writes the report as text lines or as one JSON object.
func render(w io.Writer, format string, r *checker.Report) error {
	errs, warns := r.Count(checker.Error), r.Count(checker.Warning)
	if format == "json" {
		findings := r.Findings
		if findings == nil {
			findings = []checker.Finding{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Documents int               `json:"documents"`
			Errors    int               `json:"errors"`
			Warnings  int               `json:"warnings"`
			Findings  []checker.Finding `json:"findings"`
		}{r.Documents, errs, warns, findings})
	}
	for _, f := range r.Findings {
		if _, err := fmt.Fprintln(w, f); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "%s, %s, %s\n", plural(r.Documents, "document"), plural(errs, "error"), plural(warns, "warning"))
	return err
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
