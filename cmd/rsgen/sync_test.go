package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/destination"
	"github.com/rsgen/rsgen/generator"
	"github.com/rsgen/rsgen/serve"
)

// TestSyncProgress renders a sync's events: on a terminal, one status
// line redrawn in place; to a log, a plain line now and then.
func TestSyncProgress(t *testing.T) {
	for _, terminal := range []bool{true, false} {
		var stderr bytes.Buffer
		clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		cio := cliIO{stdout: io.Discard, stderr: &stderr, isTerminal: func(io.Writer) bool { return terminal }}
		f := newSyncFlags()
		v := newSyncView(cio, f)
		v.now = func() time.Time { return clock }
		v.start, v.last = clock, clock
		v.event(destination.Event{Kind: destination.EventPlanned, Files: 100, Bytes: 100 << 10})
		for range 30 {
			clock = clock.Add(time.Second)
			v.event(destination.Event{Kind: destination.EventFetched, Path: "f", Bytes: 1 << 10})
		}
		v.finish(&destination.Summary{Mode: "baseline", Set: "default", Fetched: 30, FetchedBytes: 30 << 10}, nil, 30*time.Second)
		out := stderr.String()
		if terminal {
			if !strings.Contains(out, "\r\033[K30/100 files, 30.0 KiB/100.0 KiB at 1.0 KiB/s") || strings.Contains(out, "progress:") {
				t.Errorf("terminal: %q", out)
			}
		} else if n := strings.Count(out, "rsgen sync: progress: "); n != 3 || strings.Contains(out, "\r") {
			t.Errorf("log: %d progress lines in %q, want 3 (every 10s of 30s)", n, out)
		}
	}
}

// loopbackSite returns a listener on a loopback port and the configuration
// of a site in a folder of the test, published at the listener's address
// (tweak, when set, changes it before it is validated).
func loopbackSite(t *testing.T, tweak func(*config.Config)) (net.Listener, config.Config) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	cfg := config.Default()
	cfg.Dir, cfg.BaseURL = root, "http://"+ln.Addr().String()+"/"
	cfg.Source, cfg.Out, cfg.State = filepath.Join(root, "src"), filepath.Join(root, "out"), filepath.Join(root, "state")
	if tweak != nil {
		tweak(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return ln, cfg
}

// TestSyncInterruptedExits130 interrupts a sync while it fetches: exit
// 130, and a message that a new run resumes.
func TestSyncInterruptedExits130(t *testing.T) {
	ln, cfg := loopbackSite(t, nil)
	base, root := cfg.BaseURL, cfg.Dir
	os.MkdirAll(cfg.Source, 0o755)
	os.WriteFile(filepath.Join(cfg.Source, "a.txt"), []byte("a"), 0o644)
	if _, err := generator.Build(context.Background(), &cfg, generator.Options{Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	h, err := serve.New(serve.Options{Dir: cfg.Out, BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/a.txt" {
			cancel() // Ctrl-C while the resource comes
			<-r.Context().Done()
			return
		}
		h.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	var stderr bytes.Buffer
	code := run(ctx, cliIO{stdout: io.Discard, stderr: &stderr, getenv: os.Getenv}, []string{"sync", base, filepath.Join(root, "mirror")})
	if code != exitInterrupted || !strings.Contains(stderr.String(), "rsgen sync: interrupted; run it again to resume where it stopped") {
		t.Errorf("exit %d, stderr %q; want 130 and the message", code, stderr.String())
	}
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatal("the sync never fetched the resource")
	}
}
