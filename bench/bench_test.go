package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
)

// TestMain makes the test binary a launcher when the harness starts one
// from it (see launcher.go).
func TestMain(m *testing.M) {
	if os.Getenv(launcherEnv) != "" {
		serveLauncher(os.Stdin, os.Stdout)
		return
	}
	os.Exit(m.Run())
}

// TestLauncherReportsTheChildsOwnPeak: on Linux a child the harness starts
// itself reports the harness's peak RSS as its own; one the launcher starts
// reports its own.
func TestLauncherReportsTheChildsOwnPeak(t *testing.T) {
	const ballastBytes = 256 << 20
	l, err := startLauncher("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	ballast := make([]byte, ballastBytes)
	for i := range ballast {
		ballast[i] = 1
	}
	direct, err := runChild("/bin/true", 0)
	if err != nil {
		t.Fatal(err)
	}
	launched, err := l.run(0)
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(ballast)
	t.Logf("peak RSS of /bin/true: %d KiB started here, %d KiB started by the launcher", direct.PeakRSS>>10, launched.PeakRSS>>10)
	if direct.PeakRSS < ballastBytes {
		t.Skip("this kernel does not carry the parent's peak into the child's: nothing for the launcher to avoid")
	}
	if launched.PeakRSS >= ballastBytes/2 {
		t.Errorf("the launcher's child reports %d KiB, the harness's own memory", launched.PeakRSS>>10)
	}
}

// TestTiny runs the tiny configuration end to end, as CI does, so that the
// harness cannot rot. It times nothing and asserts nothing about rsgen:
// only that the harness completes, writes a well-formed report and puts
// its tree back as generated.
func TestTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("builds rsgen and runs it on 2,000 files; skipped with -short")
	}
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "report.json")
	args := []string{"--tiny", "--runs", "1", "--procs", "1,2", "--history", "2", "--dir", dir, "--json", jsonPath}
	// The copied step needs a second file system: /dev/shm where it is one.
	copiedOut := ""
	if same, err := sameFileSystem("/dev/shm", dir); err == nil && !same {
		if copiedOut, err = os.MkdirTemp("/dev/shm", "bench-test-"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(copiedOut) })
		args = append(args, "--copied-out", copiedOut)
	}
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, &stdout, &stderr)
	}
	t.Logf("\n%s", &stdout)

	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep report
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("report: %v\n%s", err, data)
	}
	if rep.Runs != 1 || !rep.WarmCache || rep.BaselineRSS <= 0 || len(rep.Trees) != 1 {
		t.Fatalf("report header: runs %d, warm cache %v, baseline RSS %d, %d trees", rep.Runs, rep.WarmCache, rep.BaselineRSS, len(rep.Trees))
	}
	tr := rep.Trees[0]
	if tr.Spec != treeTiny || tr.WalkStat.Seconds <= 0 || tr.ResourceList.Entries != treeTiny.Files {
		t.Errorf("tree: spec %+v, walk+stat floor %v, %d Resource List entries", tr.Spec, tr.WalkStat.Seconds, tr.ResourceList.Entries)
	}
	checkTimed(t, "floor walk+stat", &tr.WalkStat.timing)
	checkTimed(t, "resource list", &tr.ResourceList.timing)
	if len(tr.Procs) != 2 || tr.Procs[0].GOMAXPROCS != 1 || tr.Procs[1].GOMAXPROCS != 2 {
		t.Fatalf("measured at %d GOMAXPROCS, want 1 and 2", len(tr.Procs))
	}
	for _, p := range tr.Procs {
		for name, f := range map[string]*floorResult{"read+hash": &p.ReadHash, "walk+stat ∥": &p.WalkStatParallel, "link": &p.Link, "link by folder": &p.LinkByFolder} {
			checkTimed(t, fmt.Sprintf("GOMAXPROCS %d, floor %s", p.GOMAXPROCS, name), &f.timing)
		}
		if len(p.Steps) != len(stepNames) {
			t.Fatalf("GOMAXPROCS %d: %d steps, want %d", p.GOMAXPROCS, len(p.Steps), len(stepNames))
		}
		for i, s := range p.Steps {
			what := fmt.Sprintf("GOMAXPROCS %d, step %s", p.GOMAXPROCS, s.Name)
			if s.Name != stepNames[i] || s.FloorSeconds <= 0 || s.TargetSeconds <= 0 || s.ParallelFloorSeconds <= 0 || s.ParallelTargetSeconds <= 0 || s.PeakRSS <= 0 {
				t.Errorf("%s: %+v", what, s)
			}
			checkTimed(t, what, &s.timing)
			if (s.Name == stepNoChange) != (s.Rewritten != nil) {
				t.Errorf("%s: outputs rewritten %v", what, s.Rewritten)
			}
		}
	}
	if !strings.Contains(stdout.String(), "cores busy (user + sys)") || !strings.Contains(stdout.String(), "GOMAXPROCS 2:") {
		t.Errorf("the table lacks the cores busy column or a GOMAXPROCS")
	}

	if h := tr.History; h == nil || len(h.Builds) != 3 {
		t.Errorf("history: %+v, want the cold build and 2 rebuilds", h)
	} else {
		for i, b := range h.Builds {
			if b.Seconds <= 0 || b.CPUSeconds <= 0 || b.PeakRSS <= 0 || i > 0 && b.Events <= 0 {
				t.Errorf("history build %d: %+v", i, b)
			}
		}
	}
	for _, p := range []string{"history-out", "history-state", "history.toml"} {
		if _, err := os.Stat(filepath.Join(dir, "tree-tiny", p)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the history step left %s (%v)", p, err)
		}
	}
	if copiedOut != "" {
		if c := tr.Copied; c == nil || c.Cold.Seconds <= 0 || c.Cold.CPUSeconds <= 0 || c.Cold.PeakRSS <= 0 || c.Verify.Seconds <= 0 || c.Verify.CPUSeconds <= 0 || c.Verify.PeakRSS <= 0 {
			t.Errorf("copied: %+v, want a cold build and a --verify rebuild", c)
		}
		left, _ := os.ReadDir(copiedOut)
		_, err := os.Stat(filepath.Join(dir, "tree-tiny", "copied-state"))
		if len(left) > 0 || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the copied step left %d files in %s, or its state (%v)", len(left), copiedOut, err)
		}
	}

	// The edited files are back as generated, and the marker says so.
	gen := &tree{spec: treeTiny, root: filepath.Join(dir, "tree-tiny")}
	gen.src = filepath.Join(gen.root, "src")
	if _, err := os.Stat(gen.markerPath()); err != nil {
		t.Errorf("marker: %v", err)
	}
	for _, c := range []struct {
		e     edit
		round int
	}{{touchFiles, 0}, {changeFiles, 0}, {touchFiles, 1}, {changeFiles, 1}, {changeFiles, 2}, {changeFiles, 3}} { // 1: GOMAXPROCS 2's; 2 and 3: the history's
		e := c.e
		_, index := gen.editSet(e, c.round)
		i := index(0)
		p := filepath.Join(gen.src, treeTiny.path(i))
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]byte, treeTiny.size(i))
		treeTiny.content(want, i, 0)
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) || !info.ModTime().Equal(genesis) {
			t.Errorf("edit %d: file %d not restored (same bytes %v, mtime %v)", e, i, bytes.Equal(got, want), info.ModTime())
		}
	}
}

// BenchmarkBuild runs generator.Build in process on a benchmark tree, to
// profile rsgen where the harness only times it:
//
//	RSGEN_BENCH_TREE=b RSGEN_BENCH_PROFILE=/tmp/prof \
//	  go test ./bench -run '^$' -bench Build -benchtime 1x
//
// RSGEN_BENCH_TREE is tiny (the default), a or b; RSGEN_BENCH_DIR is the
// work folder (default: the harness's, whose trees it reuses). With
// RSGEN_BENCH_PROFILE set, each sub-benchmark writes a CPU profile of its
// first build alone (not of its setup) into that folder, and block and
// mutex profiles of the same build (see profiler), and the change step
// also a heap profile taken when its first build writes its first
// document, when the previous and the next snapshot are both in memory.
func BenchmarkBuild(b *testing.B) {
	spec := map[string]treeSpec{"": treeTiny, "tiny": treeTiny, "a": treeA, "b": treeB}[os.Getenv("RSGEN_BENCH_TREE")]
	if spec.Name == "" {
		b.Fatalf("RSGEN_BENCH_TREE=%q: want tiny, a or b", os.Getenv("RSGEN_BENCH_TREE"))
	}
	dir := os.Getenv("RSGEN_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "rsgen-bench")
	}
	t, err := openTree(dir, spec, b.Logf)
	if err != nil {
		b.Fatal(err)
	}
	profile := profiler(b, os.Getenv("RSGEN_BENCH_PROFILE"), spec.Name)
	build := func(b *testing.B, hour int, notify func(generator.Note)) {
		cfg := config.Default()
		cfg.Dir, cfg.Source, cfg.BaseURL = t.root, t.src, benchBaseURL
		cfg.Out, cfg.State = filepath.Join(t.root, "out"), filepath.Join(t.root, "state")
		if err := cfg.Validate(); err != nil {
			b.Fatal(err)
		}
		opts := generator.Options{Now: buildEpoch.Add(time.Duration(hour) * time.Hour), Notify: notify}
		if _, err := generator.Build(context.Background(), &cfg, opts); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(func() {
		if err := removeBuild(t); err != nil {
			b.Error(err)
		}
	})

	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			if err := removeBuild(t); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			profile(b, func() { build(b, 0, nil) })
		}
	})
	b.Run("no-change", func(b *testing.B) {
		if err := removeBuild(t); err != nil {
			b.Fatal(err)
		}
		build(b, 0, nil)
		for b.Loop() {
			profile(b, func() { build(b, 1, nil) })
		}
	})
	b.Run("change", func(b *testing.B) {
		if err := removeBuild(t); err != nil {
			b.Fatal(err)
		}
		build(b, 0, nil)
		round := 0
		var once sync.Once
		notify := func(n generator.Note) {
			if n.Kind == generator.NoteWritten {
				once.Do(func() { writeHeapProfile(b, os.Getenv("RSGEN_BENCH_PROFILE"), spec.Name) })
			}
		}
		for b.Loop() {
			b.StopTimer()
			if err := t.apply(changeFiles, round); err != nil {
				b.Fatal(err)
			}
			round++
			b.StartTimer()
			profile(b, func() { build(b, round, notify) })
		}
		if err := t.restore(round); err != nil {
			b.Fatal(err)
		}
	})
}

// profiler returns a function that runs fn, the first time for each
// sub-benchmark under a CPU profile and with block and mutex profiling on,
// written into dir/<tree>-<step>.{cpu,block,mutex}.pprof; with no dir it
// just runs fn. The runtime keeps block and mutex events for the life of
// the process: the profiles of a later sub-benchmark hold those of the
// earlier ones too, so take one sub-benchmark per process
// (-bench 'Build/no-change$') for a build's alone.
func profiler(b *testing.B, dir, treeName string) func(b *testing.B, fn func()) {
	if dir == "" {
		return func(_ *testing.B, fn func()) { fn() }
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	done := map[string]bool{}
	return func(sb *testing.B, fn func()) {
		if done[sb.Name()] {
			fn()
			return
		}
		done[sb.Name()] = true
		prefix := filepath.Join(dir, treeName+"-"+filepath.Base(sb.Name()))
		f, err := os.Create(prefix + ".cpu.pprof")
		if err != nil {
			sb.Fatal(err)
		}
		defer f.Close()
		runtime.SetBlockProfileRate(blockProfileRate)
		runtime.SetMutexProfileFraction(mutexProfileFraction)
		if err := pprof.StartCPUProfile(f); err != nil {
			sb.Fatal(err)
		}
		fn()
		pprof.StopCPUProfile()
		runtime.SetBlockProfileRate(0)
		runtime.SetMutexProfileFraction(0)
		for _, kind := range []string{"block", "mutex"} {
			if err := writeProfile(kind, prefix+"."+kind+".pprof"); err != nil {
				sb.Error(err)
			}
		}
	}
}

// The sampling of the block and mutex profiles: on average one event per
// 10 µs spent blocked (every longer one), and one contention in ten.
const (
	blockProfileRate     = 10_000 // ns
	mutexProfileFraction = 10
)

// writeProfile writes the named runtime profile into path.
func writeProfile(name, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeHeapProfile writes the live heap into dir/<tree>-change.heap.pprof.
func writeHeapProfile(b *testing.B, dir, treeName string) {
	if dir == "" {
		return
	}
	runtime.GC()
	f, err := os.Create(filepath.Join(dir, treeName+"-change.heap.pprof"))
	if err != nil {
		b.Error(err)
		return
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Error(err)
	}
}

// checkTimed checks that a measurement has a wall time, and CPU time from
// the rusage that makes up its cores busy.
func checkTimed(t *testing.T, what string, m *timing) {
	t.Helper()
	if len(m.Samples) != 1 || m.Seconds <= 0 || m.CPUSeconds <= 0 || m.CPUSeconds != m.UserSeconds+m.SysSeconds ||
		m.CoresBusy != m.CPUSeconds/m.Seconds || m.CoresBusyUser != m.UserSeconds/m.Seconds || m.CoresBusySys != m.SysSeconds/m.Seconds {
		t.Errorf("%s: %+v", what, m)
	}
}

// TestUsageErrors: flags the harness cannot honour exit 2 with the usage,
// before it generates or measures anything; so does a --copied-out on the
// file system of --dir, where rsgen would link, not copy, and an --rsgen
// that is not an executable file.
func TestUsageErrors(t *testing.T) {
	sameFS := t.TempDir()
	notExecutable := filepath.Join(t.TempDir(), "rsgen")
	if err := os.WriteFile(notExecutable, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--history", "-1"}, {"--runs", "0"}, {"--trees", "d"}, {"extra"}, {"--copied-out", sameFS},
		{"--rsgen", filepath.Join(sameFS, "missing")}, {"--rsgen", notExecutable}, {"--rsgen", sameFS},
		{"--procs", "0"}, {"--procs", "2,x"}, {"--procs", "2,2"}} {
		var stdout, stderr bytes.Buffer
		dir := t.TempDir()
		if code := run(append(args, "--dir", dir), &stdout, &stderr); code != 2 || stderr.Len() == 0 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and a message", args, code, stderr.String())
		}
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Errorf("%q: the harness wrote into --dir before it refused", args)
		}
	}
}

// TestGivenBinaryIsMeasured: with --rsgen the harness measures that
// binary, by its absolute path, and compiles nothing into --dir.
func TestGivenBinaryIsMeasured(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	bin, err := rsgenBinary(options{rsgen: "old-rsgen", dir: filepath.Join(dir, "work")})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "old-rsgen"); bin != want {
		t.Errorf("measured %s, want %s", bin, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "work")); !os.IsNotExist(err) {
		t.Errorf("the harness compiled into --dir (%v)", err)
	}
}
