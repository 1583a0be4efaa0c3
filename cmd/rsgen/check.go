package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/rsgen/rsgen/checker"
	"github.com/rsgen/rsgen/config"
)

var checkCommand = &command{
	name:     "check",
	summary:  "check a ResourceSync site or document for conformance",
	synopsis: "PATH|URL [flags]",
	about: `Checks a ResourceSync Source against ResourceSync 1.1 (ANSI/NISO Z39.99-2017)
and prints one line per finding, then a summary. PATH is an output folder
(the check starts at PATH/.well-known/resourcesync and follows every link) or
a single document. URL is a live Source: a site root is discovered through
/.well-known/resourcesync or robots.txt, any other URL is a document whose up
links lead to the Source Description. URL with --base-url is a staging host:
the folder URL at which the Source of that base URL is served before it is
published there; every URL under the base URL is read at the same place
under URL, and findings name the Source's own URLs.

A Source built with copy_resources = false publishes its resources under
resource_base_url, not in its output folder: --verify-content reads them at
their URLs, or from --resources, a folder that holds them (the source
folder) or the URL they are served at. When PATH is the output folder of
the configuration (--config, or ./rsgen.toml), its resource_base_url and
source folder are the defaults.

The notification channels a Capability List advertises are checked too:
each names its hub, its topic serves a valid notification (or nothing yet)
and, over HTTP, is served as application/xml with the Link headers
rel="self" and rel="hub"; a topic without them is a warning (S3 cannot
send them: a CDN must). --outbox checks the notifications not sent yet.`,
	more: `A check that reaches a limit stops and reports so as an error: its result is
incomplete. In a folder, only regular files are read, never through a
symbolic link that leads out of it.

exit codes: 0 no errors (warnings allowed unless --strict), 1 errors found or
the check failed, 2 usage error, 130 interrupted.

examples:
  rsgen check public/
  rsgen check public/ --verify-content --strict
  rsgen check https://data.example.org/ --format json
  rsgen check http://staging.internal:8080/ --base-url https://data.example.org/
  rsgen check public/ --verify-content --resource-base-url https://files.example.org/ --resources site/
  rsgen check public/ --outbox .rsgen/outbox
  rsgen check changelist.xml`,
	flags:   func() (*flag.FlagSet, any) { f := newCheckFlags(); return f.fs, f },
	minArgs: 1,
	maxArgs: 1,
	run:     runCheck,
}

// checkFlags are the flags of rsgen check.
type checkFlags struct {
	fs                             *flag.FlagSet
	format, config                 string
	strict                         bool
	opts                           checker.Options
	maxBytes, maxUnzip, maxPackage config.ByteSize
}

func newCheckFlags() *checkFlags {
	f := &checkFlags{fs: flag.NewFlagSet("check", flag.ContinueOnError), maxBytes: 16 << 30, maxUnzip: 16 << 30, maxPackage: 4 << 30}
	fs := f.fs
	fs.BoolVar(&f.opts.VerifyContent, "verify-content", false, "also read every listed resource and compare its length and hash")
	fs.StringVar(&f.format, "format", "text", "the output `FORMAT`: text or json")
	fs.BoolVar(&f.strict, "strict", false, "fail on warnings too")
	fs.StringVar(&f.opts.BaseURL, "base-url", "", "the `URL` at which PATH is published (default: inferred from the Source\nDescription); with a URL to check, the URL it stands in for")
	fs.StringVar(&f.opts.ResourceBaseURL, "resource-base-url", "", "the `URL` under which the resources are published apart from the\ndocuments (resource_base_url, with copy_resources = false)")
	fs.StringVar(&f.opts.Resources, "resources", "", "where to read the resources under --resource-base-url: a `DIR|URL`\n(default: their own URLs)")
	fs.StringVar(&f.config, "config", "", "the configuration `FILE` of PATH (default: ./rsgen.toml when there is\none); its resource_base_url and source are the defaults of the two\nflags above when PATH is its output folder and copy_resources = false")
	fs.StringVar(&f.opts.Outbox, "outbox", "", "also check the notifications pending in the outbox `DIR` (the state\nfolder's outbox: each payload, and each channel's intervals)")
	fs.BoolVar(&f.opts.FollowExternal, "follow-external", false, "also fetch documents and resources on other hosts, and follow\nredirects to them")
	fs.IntVar(&f.opts.MaxRequests, "max-requests", 10000, "stop after `N` HTTP requests")
	fs.TextVar(&f.maxBytes, "max-bytes", f.maxBytes, "stop after reading `SIZE` over HTTP in all")
	fs.TextVar(&f.maxUnzip, "max-unzip", f.maxUnzip, "decompress at most `SIZE` from dump packages in all; one package\nmay decompress to at most 1032 times its size, the most deflate\ncompresses (16MiB for small ones)")
	fs.TextVar(&f.maxPackage, "max-package", f.maxPackage, "copy no dump package larger than `SIZE` from over HTTP (packages\nin a folder are read where they are)")
	fs.DurationVar(&f.opts.Timeout, "timeout", 30*time.Second, "time limit of each HTTP request, body included (a `DURATION`)")
	fs.DurationVar(&f.opts.MaxTime, "max-time", 10*time.Minute, "time limit of the whole check (a `DURATION`)")
	return f
}

func runCheck(ctx context.Context, cio cliIO, values any, args []string) int {
	f := values.(*checkFlags)
	if err := f.validate(); err != nil {
		fmt.Fprintf(cio.stderr, "rsgen check: %v\n", err)
		return exitUsage
	}
	if err := f.resources(args[0]); err != nil {
		fmt.Fprintf(cio.stderr, "rsgen check: %v\n", err)
		return exitUsage
	}
	report, err := checker.Check(ctx, args[0], f.opts)
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

// validate checks the values of the flags.
func (f *checkFlags) validate() error {
	switch {
	case f.format != "text" && f.format != "json":
		return fmt.Errorf("--format %q: want text or json", f.format)
	case f.opts.MaxRequests < 1:
		return fmt.Errorf("--max-requests %d: want at least 1", f.opts.MaxRequests)
	case f.opts.Timeout <= 0:
		return fmt.Errorf("--timeout %s: want a positive duration", f.opts.Timeout)
	case f.opts.MaxTime <= 0:
		return fmt.Errorf("--max-time %s: want a positive duration", f.opts.MaxTime)
	}
	f.opts.MaxBytes, f.opts.MaxUnzipBytes, f.opts.MaxPackageBytes = int64(f.maxBytes), int64(f.maxUnzip), int64(f.maxPackage)
	return nil
}

// resources sets where the resources published apart from the documents
// are read: the flags, else, when target is the output folder of the
// configuration and it sets copy_resources = false, its resource_base_url
// and source folder.
func (f *checkFlags) resources(target string) error {
	if info, err := os.Stat(target); err == nil && info.IsDir() {
		if err := f.resourcesOfConfig(target); err != nil {
			return err
		}
	}
	if f.opts.Resources != "" && f.opts.ResourceBaseURL == "" {
		return fmt.Errorf("--resources %s: give --resource-base-url too, the URL the resources there are published under", f.opts.Resources)
	}
	return nil
}

// resourcesOfConfig takes the defaults of --resource-base-url and
// --resources from the configuration, if there is one and dir is its
// output folder.
func (f *checkFlags) resourcesOfConfig(dir string) error {
	path, cfg, err := loadConfigOrDefault(f.config)
	if err != nil || path == "" || cfg.CopyResources || cfg.ResourceBaseURL == "" {
		return err
	}
	if !samePath(dir, resolvePath(cfg.Dir, cfg.Out)) {
		return nil
	}
	if f.opts.ResourceBaseURL == "" {
		f.opts.ResourceBaseURL = cfg.ResourceBaseURL
	}
	if f.opts.Resources == "" && f.opts.ResourceBaseURL == cfg.ResourceBaseURL {
		f.opts.Resources = resolvePath(cfg.Dir, cfg.Source)
	}
	return nil
}

// resolvePath returns p, a path of a configuration, resolved against its
// folder dir.
func resolvePath(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// samePath reports whether a and b name the same folder.
func samePath(a, b string) bool {
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
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
			Packages  int               `json:"packages"`
			Errors    int               `json:"errors"`
			Warnings  int               `json:"warnings"`
			Findings  []checker.Finding `json:"findings"`
		}{r.Documents, r.Packages, errs, warns, findings})
	}
	for _, f := range r.Findings {
		if _, err := fmt.Fprintln(w, f); err != nil {
			return err
		}
	}
	packages := ""
	if r.Packages > 0 {
		packages = " and " + plural(r.Packages, "package")
	}
	_, err := fmt.Fprintf(w, "%s%s, %s, %s\n", plural(r.Documents, "document"), packages, plural(errs, "error"), plural(warns, "warning"))
	return err
}
