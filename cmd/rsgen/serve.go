package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	neturl "net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/serve"
)

var serveCommand = &command{
	name:     "serve",
	summary:  "serve the output folder over HTTP, as a production host should",
	synopsis: "[flags]",
	about: `Serves the output folder over HTTP the way the hosts rsgen configures serve
it, to try a Source before publishing it: the Source Description and the
documents as application/xml, ZIPs as application/zip, resources with their
media types, and on every resource of a set a Link header to its Capability
List (rel="resourcesync"). Last-Modified is the lastmod the Resource List
publishes; ETag, Range, HEAD and conditional requests work as on a static
host. Refused, as the hosts refuse them: paths outside the folder (..,
encoded or not, and symlinks leading out), dotfiles (.git, .env) other than
.well-known and the dotfiles the Resource Lists list, rsgen's hosting files
(rsgen-nginx.conf, .htaccess, _headers, ...), and a build's temporary files.
Serving does not build: run rsgen build first, or rsgen watch --serve.

The folder is served at the path of its base URL: --base-url, else base_url
of the configuration, else the base URL the output was built for (from its
Source Description). rsgen serve prints the URL to open: the base URL itself
when this server answers for it (http://localhost:8080/ when listening on
127.0.0.1:8080), so that rsgen check works on what it prints; when it does
not, it says so and prints this server's address too. The top of a site
without an index.html leads to the document browser (resourcesync/).`,
	more: `Interrupt (Ctrl-C, SIGINT or SIGTERM) stops the server after the requests in
progress; the exit code is then 0.

examples:
  rsgen serve
  rsgen serve --addr 127.0.0.1:8000 --out public`,
	flags: func() (*flag.FlagSet, any) { f := newServeFlags(); return f.fs, f },
	run:   runServe,
}

// defaultAddr is where serve and watch --serve listen: loopback only.
const defaultAddr = "127.0.0.1:8080"

// serveFlags are the flags of rsgen serve.
type serveFlags struct {
	fs                   *flag.FlagSet
	addr, readyFile      string
	config, out, baseURL string
}

func newServeFlags() *serveFlags {
	f := &serveFlags{fs: flag.NewFlagSet("serve", flag.ContinueOnError)}
	f.fs.StringVar(&f.addr, "addr", defaultAddr, "the `ADDR` to listen on (this machine only by default; 0.0.0.0:PORT\nreaches the network too, with a warning; port 0 picks a free port)")
	f.fs.StringVar(&f.readyFile, "ready-file", "", "once listening, write the URL to open into `FILE` (for scripts)")
	f.fs.StringVar(&f.config, "config", "", "the configuration `FILE` (default: ./rsgen.toml when there is one);\nserve reads its out, base_url, resource_base_url and short_cache")
	f.fs.StringVar(&f.out, "out", "", "the output folder, a `DIR` (config: out)")
	f.fs.StringVar(&f.baseURL, "base-url", "", "the `URL` at which the output folder is published (config: base_url)")
	return f
}

// servedSite is what rsgen serve serves: an output folder and its URLs,
// "" when not configured.
type servedSite struct {
	out, base, resBase string
	shortCache         time.Duration
}

func runServe(ctx context.Context, cio cliIO, values any, _ []string) int {
	f := values.(*serveFlags)
	site, err := f.site()
	if err != nil {
		fmt.Fprintf(cio.stderr, "rsgen serve: %v\n", err)
		return exitCodeOf(err)
	}
	if _, err := os.Stat(site.out); err != nil {
		fmt.Fprintf(cio.stderr, "rsgen serve: output folder: %v (run rsgen build first)\n", err)
		return exitFailure
	}
	base, code := servedBase(cio, site)
	if base == "" {
		return code
	}
	h, err := serve.New(serve.Options{Dir: site.out, BaseURL: site.base, ResourceBaseURL: site.resBase, ShortCache: site.shortCache})
	if err != nil {
		fmt.Fprintf(cio.stderr, "rsgen serve: %v\n", err)
		return exitFailure
	}
	defer h.Close()
	srv, err := startServer(f.addr, h)
	if err != nil {
		fmt.Fprintf(cio.stderr, "rsgen serve: %v\n", err)
		return exitFailure
	}
	url, isBase := serve.SiteURL(base, srv.Addr())
	fmt.Fprintf(cio.stderr, "rsgen serve: serving %s at %s (Ctrl-C to stop)\n", site.out, url)
	warnReachable(cio.stderr, "rsgen serve", srv.Addr())
	if !isBase {
		fmt.Fprintf(cio.stderr, "rsgen serve: the documents' links lead to the base URL %s, which this server does not answer for; "+
			"to browse a copy whose links lead here, stop this server and run rsgen watch --serve %s with the configuration of the build: it builds one for this address and leaves %s alone\n",
			base, hostOf(url), site.out)
	}
	if f.readyFile != "" {
		if err := writeFileAtomic(f.readyFile, url+"\n"); err != nil {
			fmt.Fprintf(cio.stderr, "rsgen serve: %v\n", err)
		}
	}
	select {
	case <-ctx.Done():
	case <-srv.Done():
		fmt.Fprintf(cio.stderr, "rsgen serve: %v\n", srv.Err())
		return exitFailure
	}
	if err := srv.shutdown(); err != nil {
		fmt.Fprintf(cio.stderr, "rsgen serve: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// site reads what to serve from the flags and the configuration file, if
// there is one. Of the file, only out, base_url, resource_base_url and
// [publish] short_cache matter: the rest says how to build, and base_url
// may be left unset.
func (f *serveFlags) site() (servedSite, error) {
	path, cfg, err := loadConfigOrDefault(f.config)
	if err != nil {
		return servedSite{}, err
	}
	s := servedSite{out: cfg.Out, base: cfg.BaseURL, resBase: cfg.ResourceBaseURL, shortCache: cfg.Publish.ShortCache.Duration}
	if f.out != "" {
		s.out = f.out
	} else if path != "" {
		s.out = resolvePath(cfg.Dir, s.out)
	}
	if s.out, err = filepath.Abs(s.out); err != nil {
		return servedSite{}, err
	}
	if f.baseURL != "" {
		s.base = f.baseURL
		if _, err := layout.ParseBaseURL(s.base); err != nil {
			return servedSite{}, &config.Error{Msg: "--base-url: " + err.Error()}
		}
	} else if _, err := layout.ParseBaseURL(s.base); s.base != "" && err != nil {
		return servedSite{}, &config.Error{File: path, Msg: "base_url: " + err.Error()}
	}
	if _, err := layout.ParseBaseURL(s.resBase); s.resBase != "" && err != nil {
		return servedSite{}, &config.Error{File: path, Msg: "resource_base_url: " + err.Error()}
	}
	return s, nil
}

// servedBase returns the base URL to print: the configured one, else the
// one the output was built for, which it warns about when they differ.
// It reports why there is none, and returns the exit code then.
func servedBase(cio cliIO, site servedSite) (string, int) {
	published, err := serve.PublishedBaseURL(site.out)
	switch {
	case site.base == "" && err != nil:
		fmt.Fprintf(cio.stderr, "rsgen serve: no base URL: %v; run rsgen build first, or pass --base-url\n", err)
		return "", exitFailure
	case site.base == "":
		return published, exitOK
	}
	base, _ := layout.ParseBaseURL(site.base) // checked by site
	if err == nil && published != base {
		fmt.Fprintf(cio.stderr, "rsgen serve: warning: the output in %s was built for the base URL %s, not %s: its documents lead there\n",
			site.out, published, base)
	}
	return base, exitOK
}

// warnReachable warns when a server listening on addr is reachable from
// other machines: it prints a loopback URL, which does not say so.
func warnReachable(w io.Writer, cmd string, addr net.Addr) {
	if !serve.Reachable(addr) {
		return
	}
	where := addr.String()
	if tcp, ok := addr.(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		where = "every interface, port " + strconv.Itoa(tcp.Port)
	}
	fmt.Fprintf(w, "%s: warning: listening on %s: the build is reachable from the network, by anyone who can reach this machine, not only from here; "+
		"listen on 127.0.0.1 to keep it to this machine\n", cmd, where)
}

// hostOf returns the host and port of a URL rsgen printed.
func hostOf(rawURL string) string {
	u, _ := neturl.Parse(rawURL)
	return u.Host
}

// serveOptions says what to serve of a configuration's output.
func serveOptions(cfg *config.Config, lock *sync.RWMutex) serve.Options {
	return serve.Options{Dir: cfg.Out, BaseURL: cfg.BaseURL, ResourceBaseURL: cfg.ResourceBaseURL, ShortCache: cfg.Publish.ShortCache.Duration, Lock: lock}
}

// server is an HTTP server running in the background.
type server struct{ *serve.Server }

// startServer listens on addr and serves h in the background.
func startServer(addr string, h *serve.Handler) (*server, error) {
	s, err := serve.Start(addr, h)
	if err != nil {
		return nil, err
	}
	return &server{s}, nil
}

// shutdown stops the server once the requests in progress are answered,
// or after five seconds.
func (s *server) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return s.Shutdown(ctx)
}

// writeFileAtomic replaces the file at path with content, so that a reader
// sees the old content or the new, never a part.
func writeFileAtomic(path, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".rsgen-ready-*")
	if err != nil {
		return fmt.Errorf("ready file: %w", err)
	}
	_, err = tmp.WriteString(content)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("ready file: %w", err)
	}
	return nil
}
