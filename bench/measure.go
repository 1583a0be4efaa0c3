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
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return nil, err
	}
	bin, err := rsgenBinary(o)
	if err != nil {
		return nil, err
	}
	rsgen, err := startLauncher(bin)
	if err != nil {
		return nil, err
	}
	defer rsgen.close()
	rep := &report{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.GOMAXPROCS(0),
		GoVersion: runtime.Version(), Runs: o.runs, WarmCache: true}
	if o.rsgen != "" {
		rep.RsgenBinary = bin
	}
	var baseline []float64
	for range o.runs {
		r, err := rsgen.run("version")
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
		tr.derive(rep.BaselineRSS)
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

// measureTree measures the floors and rsgen on t, o.runs times each, then
// the history step with o.history rebuilds (none when 0) and the copied
// step (when o.copied names a folder), and puts the tree back as
// generated.
func measureTree(t *tree, rsgen *launcher, o options, logf func(string, ...any)) (*treeResult, error) {
	runs, history := o.runs, o.history
	tr := &treeResult{Spec: t.spec, Bytes: t.bytes, Folders: t.folders}
	steps := map[string]*stepResult{}
	for _, name := range stepNames {
		steps[name] = &stepResult{Name: name}
		tr.Steps = append(tr.Steps, steps[name])
	}
	out := filepath.Join(t.root, "out")
	logf("tree %s: warming the page cache", t.spec.Name)
	if _, err := readHashFloor(t.src); err != nil {
		return nil, err
	}
	for round := range runs {
		logf("tree %s: run %d of %d", t.spec.Name, round+1, runs)
		rh, err := readHashFloor(t.src)
		if err != nil {
			return nil, err
		}
		ws, err := walkStatFloor(t.src)
		if err != nil {
			return nil, err
		}
		for _, r := range []floorRun{rh, ws} {
			if r.files != t.spec.Files || r.bytes != t.bytes {
				return nil, fmt.Errorf("found %d files, %d bytes in %s; want %d, %d: delete %s", r.files, r.bytes, t.src, t.spec.Files, t.bytes, t.root)
			}
		}
		ln, err := linkFloor(t.src, filepath.Join(t.root, "links"))
		if err != nil {
			return nil, err
		}
		tr.ReadHash.add(rh)
		tr.WalkStat.add(ws)
		tr.Link.add(ln)

		if err := removeBuild(t); err != nil {
			return nil, err
		}
		if err := steps[stepCold].run(rsgen, t, 0); err != nil {
			return nil, err
		}
		lw, err := writeResourceLists(filepath.Join(t.root, "state"), filepath.Join(t.root, "lists"))
		if err != nil {
			return nil, err
		}
		tr.ResourceList.add(lw)

		before, err := stampOutputs(out)
		if err != nil {
			return nil, err
		}
		if err := steps[stepNoChange].run(rsgen, t, 1); err != nil {
			return nil, err
		}
		after, err := stampOutputs(out)
		if err != nil {
			return nil, err
		}
		steps[stepNoChange].rewrittenSamples = append(steps[stepNoChange].rewrittenSamples, rewritten(before, after))

		if err := t.apply(touchFiles, round); err != nil {
			return nil, err
		}
		if err := steps[stepTouch].run(rsgen, t, 2); err != nil {
			return nil, err
		}
		if err := t.apply(changeFiles, round); err != nil {
			return nil, err
		}
		if err := steps[stepChange].run(rsgen, t, 3); err != nil {
			return nil, err
		}
	}
	tr.Edited, _ = t.editSet(changeFiles, 0)
	if history > 0 {
		h, err := measureHistory(t, rsgen, runs, history, logf)
		if err != nil {
			return nil, err
		}
		tr.History = h
	}
	if o.copied != "" {
		c, err := measureCopied(t, rsgen, o.copied, logf)
		if err != nil {
			return nil, err
		}
		tr.Copied = c
	}
	logf("tree %s: restoring the edited files", t.spec.Name)
	if err := t.restore(runs + history); err != nil {
		return nil, err
	}
	for _, d := range []string{"out", "state", "lists", "links"} {
		if err := os.RemoveAll(filepath.Join(t.root, d)); err != nil {
			return nil, err
		}
	}
	return tr, nil
}

// run times one rsgen build of t, the k-th of its round.
func (s *stepResult) run(rsgen *launcher, t *tree, k int) error {
	r, err := rsgen.run(buildArgs(t, buildEpoch.Add(time.Duration(k)*time.Hour))...)
	if err != nil {
		return err
	}
	s.Samples = append(s.Samples, r.Wall.Seconds())
	s.cpu = append(s.cpu, r.CPU.Seconds())
	s.rss = append(s.rss, float64(r.PeakRSS))
	s.FilesRead, s.Events = buildCounts(r.Stdout)
	return nil
}
