package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rsgen/rsgen/layout"
)

// The sync benchmark (--sync, issue 34) measures rsgen sync, a
// Destination, against what a plain client needs to fetch the same
// files: a tree built by rsgen and served by rsgen serve on loopback is
// mirrored twice, by a plain parallel GET of every resource's URL that
// writes each body to its file (the floor), and by rsgen sync, with the
// same number of fetches in flight; then 1% of the files change, rsgen
// builds again, and the floor GETs only the changed files while rsgen
// sync follows the Change List. rsgen sync also verifies every file's
// length and digest, writes it through a temporary file and a rename,
// and records it; the floor does none of it. rsgen sync runs as a child
// of the launcher, which reports its CPU time and peak RSS.

// syncStep is one timed mirror.
type syncStep struct {
	Wall    float64 `json:"wall_s"`
	CPU     float64 `json:"cpu_s,omitempty"`
	PeakRSS int64   `json:"peak_rss,omitempty"`
	Files   int     `json:"files"`
	Bytes   int64   `json:"bytes"`
}

func (s syncStep) filesPerSecond() float64 { return float64(s.Files) / s.Wall }
func (s syncStep) mbPerSecond() float64    { return float64(s.Bytes) / 1e6 / s.Wall }

// syncResult is the sync benchmark of one tree.
type syncResult struct {
	Tree          string   `json:"tree"`
	Jobs          int      `json:"jobs"`
	FloorBaseline syncStep `json:"floor_baseline"`
	SyncBaseline  syncStep `json:"sync_baseline"`
	FloorChanged  syncStep `json:"floor_changed"`
	SyncChanged   syncStep `json:"sync_changed"`
}

// runSync is the harness of --sync: it measures, prints and, with --json,
// writes the results; it returns the exit code.
func runSync(o options, jobs int, stdout, stderr io.Writer, logf func(string, ...any)) int {
	if jobs < 1 {
		fmt.Fprintf(stderr, "bench: --sync-jobs %d: want at least 1\n", jobs)
		return 2
	}
	results, err := measureSync(o, jobs, stdout, logf)
	if err == nil && o.json != "" {
		var data []byte
		if data, err = json.MarshalIndent(results, "", "  "); err == nil {
			err = os.WriteFile(o.json, append(data, '\n'), 0o644)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

// measureSync runs the sync benchmark on each tree of o.
func measureSync(o options, jobs int, stdout io.Writer, logf func(string, ...any)) ([]*syncResult, error) {
	rsgen, err := launchRsgen(o)
	if err != nil {
		return nil, err
	}
	defer rsgen.close()
	var results []*syncResult
	for _, spec := range o.trees {
		t, err := openTree(o.dir, spec, logf)
		if err != nil {
			return nil, err
		}
		r, err := syncTree(t, rsgen, jobs, logf)
		if err != nil {
			return nil, fmt.Errorf("tree %s: %w", spec.Name, err)
		}
		results = append(results, r)
	}
	writeSyncTable(stdout, results)
	return results, nil
}

// syncTree builds and serves t, and measures the floor and rsgen sync on
// it; it puts the tree back as generated and removes what it wrote.
func syncTree(t *tree, rsgen *launcher, jobs int, logf func(string, ...any)) (_ *syncResult, err error) {
	work := filepath.Join(t.root, "sync")
	if err := os.RemoveAll(work); err != nil {
		return nil, err
	}
	defer func() {
		if rerr := t.restore(1); err == nil {
			err = rerr
		}
		if rerr := os.RemoveAll(work); err == nil {
			err = rerr
		}
	}()
	out, state := filepath.Join(work, "out"), filepath.Join(work, "state")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	base, stop, err := startServe(rsgen.bin, out, filepath.Join(work, "ready"))
	if err != nil {
		return nil, err
	}
	defer stop()
	m := &syncMeasure{t: t, rsgen: rsgen, base: base, jobs: jobs, logf: logf, floor: filepath.Join(work, "floor"),
		args: []string{"sync", base, filepath.Join(work, "mirror"), "--jobs", fmt.Sprint(jobs), "--dumps", "never", "--quiet"}}
	build := func(k int) error {
		logf("tree %s: rsgen build for %s", t.spec.Name, base)
		_, err := rsgen.run(0, "build", "--source", t.src, "--out", out, "--state", state, "--base-url", base,
			"--now", buildEpoch.Add(time.Duration(k)*time.Hour).Format(time.RFC3339), "--quiet")
		return err
	}
	r := &syncResult{Tree: t.spec.Name, Jobs: jobs}
	if err := build(0); err != nil {
		return nil, err
	}
	if r.FloorBaseline, r.SyncBaseline, err = m.step("every file", t.spec.Files, func(k int) int { return k }); err != nil {
		return nil, err
	}
	if err := t.apply(changeFiles, 0); err != nil {
		return nil, err
	}
	if err := build(1); err != nil {
		return nil, err
	}
	n, index := t.editSet(changeFiles, 0)
	if r.FloorChanged, r.SyncChanged, err = m.step("the changed files", n, index); err != nil {
		return nil, err
	}
	return r, nil
}

// syncMeasure measures the floor and rsgen sync on one served tree.
type syncMeasure struct {
	t     *tree
	rsgen *launcher
	base  string
	jobs  int
	floor string   // the floor's copy
	args  []string // of rsgen sync
	logf  func(string, ...any)
}

// step measures the floor's GET of the n files index gives, then rsgen
// sync.
func (m *syncMeasure) step(what string, n int, index func(int) int) (floor, mirror syncStep, err error) {
	indexes := func(yield func(int) bool) {
		for k := range n {
			if !yield(index(k)) {
				return
			}
		}
	}
	m.logf("tree %s: floor: GET of %s (%d), %d at once", m.t.spec.Name, what, n, m.jobs)
	if floor, err = getFloor(m.base, m.t, indexes, m.floor, m.jobs); err != nil {
		return floor, mirror, err
	}
	m.logf("tree %s: rsgen sync", m.t.spec.Name)
	mirror, err = timeSync(m.rsgen, m.args, floor)
	return floor, mirror, err
}

// startServe starts rsgen serve on a free loopback port and returns the
// URL it serves out at.
func startServe(bin, out, ready string) (string, func(), error) {
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--out", out, "--base-url", "http://127.0.0.1/", "--ready-file", ready)
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if data, err := os.ReadFile(ready); err == nil && strings.HasSuffix(string(data), "/\n") {
			return strings.TrimSpace(string(data)), stop, nil
		}
		time.Sleep(20 * time.Millisecond) // polling the ready file
	}
	stop()
	return "", nil, errors.New("rsgen serve wrote no ready file within 30s")
}

// timeSync runs rsgen sync in the launcher; the files and bytes it
// fetches are the floor's.
func timeSync(rsgen *launcher, args []string, floor syncStep) (syncStep, error) {
	run, err := rsgen.run(0, args...)
	if err != nil {
		return syncStep{}, err
	}
	return syncStep{Wall: run.Wall.Seconds(), CPU: (run.User + run.Sys).Seconds(), PeakRSS: run.PeakRSS, Files: floor.Files, Bytes: floor.Bytes}, nil
}

// getFloor fetches the files indexes yields from base, jobs at once over
// kept-alive connections, and writes each body to its file under dst, as
// a plain mirroring client does: no verification, no temporary file.
func getFloor(base string, t *tree, indexes func(func(int) bool), dst string, jobs int) (syncStep, error) {
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: jobs, MaxIdleConnsPerHost: jobs, DisableCompression: true}}
	defer client.CloseIdleConnections()
	work := make(chan int, jobs)
	var files, bytes atomic.Int64
	var mu sync.Mutex
	var errs []error
	var folders sync.Map // made already: one MkdirAll per folder, not per file
	var wg sync.WaitGroup
	start := time.Now()
	for range jobs {
		wg.Go(func() {
			buf := make([]byte, 256<<10)
			for i := range work {
				p := filepath.ToSlash(t.spec.path(i))
				n, err := getFile(client, layout.URL(base, p), filepath.Join(dst, filepath.FromSlash(p)), buf, &folders)
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					continue
				}
				files.Add(1)
				bytes.Add(n)
			}
		})
	}
	for i := range indexes {
		work <- i
	}
	close(work)
	wg.Wait()
	if len(errs) > 0 {
		return syncStep{}, fmt.Errorf("floor: %d GETs failed, the first: %w", len(errs), errs[0])
	}
	return syncStep{Wall: time.Since(start).Seconds(), Files: int(files.Load()), Bytes: bytes.Load()}, nil
}

func getFile(client *http.Client, u, path string, buf []byte, folders *sync.Map) (int64, error) {
	resp, err := client.Get(u)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	if _, made := folders.Load(filepath.Dir(path)); !made {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return 0, err
		}
		folders.Store(filepath.Dir(path), true)
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	n, err := io.CopyBuffer(f, resp.Body, buf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// writeSyncTable prints the results, files/s and MB/s of each step and
// the ratios the issue bounds: a baseline at most 1.5 times the floor, an
// incremental sync at most twice the GET of the changed files.
func writeSyncTable(w io.Writer, results []*syncResult) {
	for _, r := range results {
		fmt.Fprintf(w, "tree %s, %d fetches at once\n", r.Tree, r.Jobs)
		fmt.Fprintf(w, "  %-26s %8s %10s %8s %8s %9s\n", "step", "wall s", "files/s", "MB/s", "CPU s", "peak MiB")
		row := func(name string, s syncStep) {
			cpu, rss := "", ""
			if s.CPU > 0 {
				cpu, rss = fmt.Sprintf("%.2f", s.CPU), fmt.Sprintf("%.1f", mib(s.PeakRSS))
			}
			fmt.Fprintf(w, "  %-26s %8.2f %10.0f %8.1f %8s %9s\n", name, s.Wall, s.filesPerSecond(), s.mbPerSecond(), cpu, rss)
		}
		row(fmt.Sprintf("floor GET, %d files", r.FloorBaseline.Files), r.FloorBaseline)
		row("rsgen sync, baseline", r.SyncBaseline)
		row(fmt.Sprintf("floor GET, %d changed", r.FloorChanged.Files), r.FloorChanged)
		row("rsgen sync, incremental", r.SyncChanged)
		base, incr := r.SyncBaseline.Wall/r.FloorBaseline.Wall, r.SyncChanged.Wall/r.FloorChanged.Wall
		fmt.Fprintf(w, "  baseline %.2f× the floor (bound 1.5: %s); incremental %.2f× (bound 2: %s)\n",
			base, yesNo(base <= 1.5), incr, yesNo(incr <= 2))
	}
}
