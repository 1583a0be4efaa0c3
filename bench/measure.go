package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// buildEpoch is the --now of the first build of each round; later builds of
// the round are an hour apart, within one Change List segment.
var buildEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// measure runs the whole benchmark described by o.
func measure(o options, logf func(string, ...any)) (*report, error) {
	rsgen, err := launchRsgen(o)
	if err != nil {
		return nil, err
	}
	defer rsgen.close()
	rep := &report{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.GOMAXPROCS(0),
		GoVersion: runtime.Version(), Runs: o.runs, WarmCache: true}
	if o.rsgen != "" {
		rep.RsgenBinary = rsgen.bin
	}
	var baseline []float64
	for range o.runs {
		r, err := rsgen.run(0, "version")
		if err != nil {
			return nil, err
		}
		rep.RsgenVersion = strings.TrimSpace(r.Stdout)
		baseline = append(baseline, float64(r.PeakRSS))
	}
	rep.BaselineRSS = int64(median(baseline))
	for _, spec := range o.trees {
		t, err := openTree(o.dir, spec, logf)
		if err != nil {
			return nil, err
		}
		tr, err := measureTree(t, rsgen, o, logf)
		if err != nil {
			return nil, fmt.Errorf("tree %s: %w", spec.Name, err)
		}
		for _, p := range tr.Procs {
			p.derive(tr, rep.BaselineRSS)
		}
		rep.Trees = append(rep.Trees, tr)
	}
	return rep, nil
}

// The steps of one round, in order.
const (
	stepCold     = "cold"
	stepNoChange = "no-change"
	stepTouch    = "touch 1%"
	stepChange   = "change 1%"
)

var stepNames = []string{stepCold, stepNoChange, stepTouch, stepChange}

// measureTree measures the floors and rsgen on t, o.runs times each and at
// each GOMAXPROCS of o.procs, then the history step with o.history rebuilds
// (none when 0) and the copied step (when o.copied names a folder), both
// at the first GOMAXPROCS, and puts the tree back as generated.
func measureTree(t *tree, rsgen *launcher, o options, logf func(string, ...any)) (*treeResult, error) {
	tr := &treeResult{Spec: t.spec, Bytes: t.bytes, Folders: t.folders}
	for _, procs := range o.procs {
		p := &procsResult{GOMAXPROCS: procs}
		for _, name := range stepNames {
			p.Steps = append(p.Steps, &stepResult{Name: name})
		}
		tr.Procs = append(tr.Procs, p)
	}
	logf("tree %s: warming the page cache", t.spec.Name)
	if _, err := readHashFloor(t.src); err != nil {
		return nil, err
	}
	// Each round of edits, one per run and GOMAXPROCS, touches and changes
	// other files than the others, so that each finds something to do.
	rounds := 0
	for run := range o.runs {
		ws, err := walkStatFloor(t.src)
		if err := t.check(ws, err); err != nil {
			return nil, err
		}
		tr.WalkStat.add(ws)
		for k, p := range tr.Procs {
			logf("tree %s: run %d of %d, GOMAXPROCS %d", t.spec.Name, run+1, o.runs, p.GOMAXPROCS)
			list := &tr.ResourceList // measured once per run: one goroutine
			if k > 0 {
				list = nil
			}
			if err := p.measure(t, rsgen, rounds, list); err != nil {
				return nil, err
			}
			rounds++
		}
	}
	tr.Edited, _ = t.editSet(changeFiles, 0)
	if o.history > 0 {
		h, err := measureHistory(t, rsgen, o.procs[0], rounds, o.history, logf)
		if err != nil {
			return nil, err
		}
		tr.History = h
	}
	if o.copied != "" {
		c, err := measureCopied(t, rsgen, o.procs[0], o.copied, logf)
		if err != nil {
			return nil, err
		}
		tr.Copied = c
	}
	logf("tree %s: restoring the edited files", t.spec.Name)
	if err := t.restore(rounds + o.history); err != nil {
		return nil, err
	}
	for _, d := range []string{"out", "state", "lists", "links", "links-by-folder"} {
		if err := os.RemoveAll(filepath.Join(t.root, d)); err != nil {
			return nil, err
		}
	}
	return tr, nil
}

// check reports a floor's failure, or that it found other files than the
// tree's.
func (t *tree) check(r floorRun, err error) error {
	if err != nil {
		return err
	}
	if r.files != t.spec.Files || r.bytes != t.bytes {
		return fmt.Errorf("found %d files, %d bytes in %s; want %d, %d: delete %s", r.files, r.bytes, t.src, t.spec.Files, t.bytes, t.root)
	}
	return nil
}

// measure measures the parallel floors and rsgen's builds on t at
// p.GOMAXPROCS, with the edits of the given round; with list, also the
// Resource List in process, after the cold build.
func (p *procsResult) measure(t *tree, rsgen *launcher, round int, list *listResult) error {
	err := withProcs(p.GOMAXPROCS, func() error {
		rh, err := readHashFloor(t.src)
		if err := t.check(rh, err); err != nil {
			return err
		}
		pws, err := walkStatParallelFloor(t.src)
		if err := t.check(pws, err); err != nil {
			return err
		}
		ln, err := linkFloor(t.src, filepath.Join(t.root, "links"), false)
		if err != nil {
			return err
		}
		lf, err := linkFloor(t.src, filepath.Join(t.root, "links-by-folder"), true)
		if err != nil {
			return err
		}
		p.ReadHash.add(rh)
		p.WalkStatParallel.add(pws)
		p.Link.add(ln)
		p.LinkByFolder.add(lf)
		return nil
	})
	if err != nil {
		return err
	}

	steps := map[string]*stepResult{}
	for _, s := range p.Steps {
		steps[s.Name] = s
	}
	build := func(name string, k int) error { return steps[name].run(rsgen, t, p.GOMAXPROCS, k) }
	if err := removeBuild(t); err != nil {
		return err
	}
	if err := build(stepCold, 0); err != nil {
		return err
	}
	if list != nil {
		lw, err := writeResourceLists(filepath.Join(t.root, "state"), filepath.Join(t.root, "lists"))
		if err != nil {
			return err
		}
		list.add(lw)
	}

	out := filepath.Join(t.root, "out")
	before, err := stampOutputs(out)
	if err != nil {
		return err
	}
	if err := build(stepNoChange, 1); err != nil {
		return err
	}
	after, err := stampOutputs(out)
	if err != nil {
		return err
	}
	steps[stepNoChange].rewrittenSamples = append(steps[stepNoChange].rewrittenSamples, rewritten(before, after))

	if err := t.apply(touchFiles, round); err != nil {
		return err
	}
	if err := build(stepTouch, 2); err != nil {
		return err
	}
	if err := t.apply(changeFiles, round); err != nil {
		return err
	}
	return build(stepChange, 3)
}

// run times one rsgen build of t at GOMAXPROCS procs, the k-th of its
// round.
func (s *stepResult) run(rsgen *launcher, t *tree, procs, k int) error {
	r, err := rsgen.run(procs, buildArgs(t, buildEpoch.Add(time.Duration(k)*time.Hour))...)
	if err != nil {
		return err
	}
	s.add(r.Wall, cpuTimes{r.User, r.Sys})
	s.rss = append(s.rss, float64(r.PeakRSS))
	s.FilesRead, s.Events = buildCounts(r.Stdout)
	return nil
}
