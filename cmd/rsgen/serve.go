package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/serve"
)

var serveCommand = &command{
	summary: "serve the output folder over HTTP, as a production host should",
	usage:   serveUsage,
	run:     runServe,
}

const serveUsage = `usage: rsgen serve [flags]

Serves the output folder over HTTP the way the production hosts should, to
try a Source before publishing it: the Source Description and the documents
as application/xml, ZIPs as application/zip, resources with their media
types, and on every resource of a set a Link header to its Capability List
(rel="resourcesync"). Last-Modified is the lastmod the Resource List
publishes; ETag, Range, HEAD and conditional requests work as on a static
host. Paths outside the folder (.., encoded or not, and symlinks leading
out) are refused, and the temporary files of a build in progress are never
served. Serving does not build: run rsgen build first, or rsgen watch --serve.

The configuration says where the output folder is, its base URL and its
sets. The documents' links point at base_url: to follow them against this
server, build with --base-url http://127.0.0.1:8080/.

flags:
  --addr ADDR        address to listen on (default 127.0.0.1:8080, this machine only;
                     port 0 picks a free port)
  --ready-file FILE  once listening, write the server's URL into FILE (for scripts)
  --config FILE, --out DIR, --base-url URL, --source DIR, --state DIR
                     as for rsgen build

Interrupt (Ctrl-C, SIGINT or SIGTERM) stops the server after the requests in
progress; the exit code is then 0.

examples:
  rsgen serve
  rsgen serve --addr 127.0.0.1:8000 --out public`

// defaultAddr is where serve and watch --serve listen: loopback only.
const defaultAddr = "127.0.0.1:8080"

func runServe(ctx context.Context, cio cliIO, args []string) int {
	f := newBuildFlags("serve", cio.stderr)
	addr := f.fs.String("addr", defaultAddr, "")
	readyFile := f.fs.String("ready-file", "", "")
	if code := parseFlags(f.fs, args, serveUsage, cio.stdout); code != exitOK {
		return code
	}
	cfg, _, _, code := prepare("serve", serveUsage, cio, buildArgs(f.fs, "addr", "ready-file"))
	if cfg == nil {
		return code
	}
	if _, err := os.Stat(cfg.Out); err != nil {
		fmt.Fprintf(cio.stderr, "rsgen serve: output folder: %v (run rsgen build first)\n", err)
		return exitFailure
	}
	h, err := serve.New(serveOptions(cfg, nil))
	if err != nil {
		fmt.Fprintf(cio.stderr, "rsgen serve: %v\n", err)
		return exitFailure
	}
	defer h.Close()
	srv, err := startServer(*addr, h)
	if err != nil {
		fmt.Fprintf(cio.stderr, "rsgen serve: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(cio.stderr, "rsgen serve: serving %s at %s (Ctrl-C to stop)\n", cfg.Out, srv.url())
	if *readyFile != "" {
		if err := writeFileAtomic(*readyFile, srv.url()+"\n"); err != nil {
			fmt.Fprintf(cio.stderr, "rsgen serve: %v\n", err)
		}
	}
	select {
	case <-ctx.Done():
	case err := <-srv.errc:
		fmt.Fprintf(cio.stderr, "rsgen serve: %v\n", err)
		return exitFailure
	}
	if err := srv.shutdown(); err != nil {
		fmt.Fprintf(cio.stderr, "rsgen serve: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// buildArgs returns the flags set in fs, except the named ones, as
// arguments for prepare: the build flags of a command that has more.
func buildArgs(fs *flag.FlagSet, except ...string) []string {
	var args []string
	fs.Visit(func(fl *flag.Flag) {
		for _, name := range except {
			if fl.Name == name {
				return
			}
		}
		args = append(args, "--"+fl.Name+"="+fl.Value.String())
	})
	return args
}

// serveOptions says what to serve of a configuration's output.
func serveOptions(cfg *config.Config, lock *sync.RWMutex) serve.Options {
	sets := make([]string, 0, len(cfg.Sets))
	for _, s := range cfg.SetsOrDefault() {
		sets = append(sets, s.Name)
	}
	return serve.Options{Dir: cfg.Out, BaseURL: cfg.BaseURL, ResourceBaseURL: cfg.ResourceBaseURL, Sets: sets, Lock: lock}
}

// server is an HTTP server running in the background.
type server struct {
	srv  *http.Server
	ln   net.Listener
	errc chan error // Serve's result
}

// startServer listens on addr and serves h in the background.
func startServer(addr string, h http.Handler) (*server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s := &server{srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, ln: ln, errc: make(chan error, 1)}
	go func() { s.errc <- s.srv.Serve(ln) }()
	return s, nil
}

// url is the server's root URL.
func (s *server) url() string { return "http://" + s.ln.Addr().String() + "/" }

// shutdown stops the server once the requests in progress are answered,
// or after five seconds.
func (s *server) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("stop server: %w", err)
	}
	return nil
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
