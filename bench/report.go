package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"text/tabwriter"
	"time"
)

// The targets of issue 6.
const (
	coldTarget        = 1.25    // × the read+hash floor
	rebuildTarget     = 2       // × the walk+stat floor
	rssTarget         = 300     // bytes per resource above the baseline
	listEntriesTarget = 500_000 // Resource List entries per second
)

// report is the harness's result, as written with --json.
type report struct {
	GOOS         string        `json:"goos"`
	GOARCH       string        `json:"goarch"`
	CPUs         int           `json:"cpus"`
	GoVersion    string        `json:"go_version"`
	RsgenVersion string        `json:"rsgen_version"`
	RsgenBinary  string        `json:"rsgen_binary,omitempty"` // --rsgen's, when given
	Runs         int           `json:"runs"`                   // each figure is the median of this many
	WarmCache    bool          `json:"warm_cache"`             // always: the page cache is never dropped
	BaselineRSS  int64         `json:"baseline_rss_bytes"`
	Trees        []*treeResult `json:"trees"`
}

// treeResult holds the measurements on one tree.
type treeResult struct {
	Spec     treeSpec    `json:"spec"`
	Bytes    int64       `json:"bytes"`
	Folders  int         `json:"folders"`
	Edited   int         `json:"edited_files"` // files touched, or changed, before a 1% rebuild
	ReadHash floorResult `json:"floor_read_hash"`
	WalkStat floorResult `json:"floor_walk_stat"`
	// Link is not a floor of issue 6: it is what hard-linking every file
	// into an empty folder costs, which a cold build must also do.
	Link floorResult `json:"floor_link"`
	// ColdRatioWithLink is the cold build's time over the read+hash and
	// link floors added up.
	ColdRatioWithLink float64       `json:"cold_ratio_with_link"`
	ResourceList      listResult    `json:"resource_list"`
	Steps             []*stepResult `json:"steps"`
	// History is the history step (--history), or nil.
	History *historyResult `json:"history,omitempty"`
	// Copied is the copied step (--copied-out), or nil.
	Copied *copiedResult `json:"copied,omitempty"`
}

// sampled is a time measured once per run.
type sampled struct {
	Seconds float64   `json:"seconds"` // the median
	Samples []float64 `json:"samples_seconds"`
}

func (s *sampled) add(d time.Duration) {
	s.Samples = append(s.Samples, d.Seconds())
	s.Seconds = median(s.Samples)
}

// floorResult is a floor measured once per run.
type floorResult struct {
	sampled
	CPUSeconds float64 `json:"cpu_seconds"` // median user + system time

	cpu []float64
}

func (f *floorResult) add(r floorRun) {
	f.sampled.add(r.wall)
	f.cpu = append(f.cpu, r.cpu.Seconds())
	f.CPUSeconds = median(f.cpu)
}

// listResult is the in-process Resource List measurement.
type listResult struct {
	sampled
	Entries          int     `json:"entries"`
	Parts            int     `json:"parts"`
	EntriesPerSecond float64 `json:"entries_per_second"`
	AllocsPerEntry   float64 `json:"allocs_per_entry"`
	Met              bool    `json:"target_met"`
}

func (l *listResult) add(w listWrite) {
	l.sampled.add(w.elapsed)
	l.Entries, l.Parts = w.entries, w.parts
	l.EntriesPerSecond = float64(w.entries) / l.Seconds
	l.AllocsPerEntry = float64(w.mallocs) / float64(w.entries)
	l.Met = l.EntriesPerSecond >= listEntriesTarget
}

// stepResult is one kind of rsgen build, measured once per run.
type stepResult struct {
	Name           string    `json:"name"`
	Seconds        float64   `json:"seconds"` // median wall time
	Samples        []float64 `json:"samples_seconds"`
	CPUSeconds     float64   `json:"cpu_seconds"`    // median user + system time
	PeakRSS        int64     `json:"peak_rss_bytes"` // median
	RSSPerResource float64   `json:"rss_bytes_per_resource"`
	RSSMet         bool      `json:"rss_target_met"`
	FloorSeconds   float64   `json:"floor_seconds"`
	Ratio          float64   `json:"ratio"`
	TargetSeconds  float64   `json:"target_seconds"`
	Met            bool      `json:"target_met"`
	FilesRead      int       `json:"files_read"` // -1: rsgen did not say
	Events         int       `json:"events"`     // -1: rsgen did not say
	// Rewritten is, for the no-change rebuild, the most output files any
	// run wrote, created or removed.
	Rewritten *int `json:"outputs_rewritten,omitempty"`

	cpu, rss         []float64
	rewrittenSamples []int
}

// derive computes the medians, floors, ratios and targets of the steps.
// The floor of a 1% rebuild is the walk+stat floor plus the share of the
// read+hash floor of the edited files, plus, when content changed, the
// in-process time to write the Resource List (the edits are spread over
// every part of it).
func (tr *treeResult) derive(baselineRSS int64) {
	files := float64(tr.Spec.Files)
	hashEdited := float64(tr.Edited) / files * tr.ReadHash.Seconds
	walk := tr.WalkStat.Seconds
	for _, s := range tr.Steps {
		s.Seconds = median(s.Samples)
		s.CPUSeconds = median(s.cpu)
		s.PeakRSS = int64(median(s.rss))
		s.RSSPerResource = float64(s.PeakRSS-baselineRSS) / files
		s.RSSMet = s.RSSPerResource <= rssTarget
		switch s.Name {
		case stepCold:
			s.FloorSeconds, s.TargetSeconds = tr.ReadHash.Seconds, coldTarget*tr.ReadHash.Seconds
			tr.ColdRatioWithLink = s.Seconds / (tr.ReadHash.Seconds + tr.Link.Seconds)
		case stepNoChange:
			s.FloorSeconds, s.TargetSeconds = walk, rebuildTarget*walk
		case stepTouch:
			s.FloorSeconds, s.TargetSeconds = walk+hashEdited, rebuildTarget*walk+hashEdited
		case stepChange:
			docs := tr.ResourceList.Seconds
			s.FloorSeconds, s.TargetSeconds = walk+hashEdited+docs, rebuildTarget*walk+hashEdited+docs
		}
		s.Ratio = s.Seconds / s.FloorSeconds
		s.Met = s.Seconds <= s.TargetSeconds
		if len(s.rewrittenSamples) > 0 {
			n := slices.Max(s.rewrittenSamples)
			s.Rewritten = &n
			s.Met = s.Met && n == 0
		}
	}
}

// median returns the median of xs, which must not be empty.
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// writeTable prints the report for people.
func (r *report) writeTable(w io.Writer) {
	fmt.Fprintf(w, "%s, %s %s/%s, %d CPUs; median of %d runs; warm page cache\n",
		r.RsgenVersion, r.GoVersion, r.GOOS, r.GOARCH, r.CPUs, r.Runs)
	if r.RsgenBinary != "" {
		fmt.Fprintf(w, "measured binary: %s\n", r.RsgenBinary)
	}
	fmt.Fprintf(w, "baseline RSS (rsgen version): %.1f MiB\n", mib(r.BaselineRSS))
	for _, tr := range r.Trees {
		fmt.Fprintf(w, "\ntree %s: %d files, %.0f MB in %d folders; %d files edited for each 1%% rebuild\n",
			tr.Spec.Name, tr.Spec.Files, float64(tr.Bytes)/1e6, tr.Folders, tr.Edited)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "step\trsgen\tcpu\tfloor\tratio\ttarget\tmet\tpeak RSS\tB/resource (≤ 300)\tread\tevents\t")
		fmt.Fprintf(tw, "floor read+hash\t\t%.2fs\t%.2fs\t\t\t\t\t\t%d\t\t\n", tr.ReadHash.CPUSeconds, tr.ReadHash.Seconds, tr.Spec.Files)
		fmt.Fprintf(tw, "floor walk+stat\t\t%.2fs\t%.2fs\t\t\t\t\t\t\t\t\n", tr.WalkStat.CPUSeconds, tr.WalkStat.Seconds)
		fmt.Fprintf(tw, "link (not a floor)\t\t%.2fs\t%.2fs\t\t\t\t\t\t\t\t\n", tr.Link.CPUSeconds, tr.Link.Seconds)
		for _, s := range tr.Steps {
			fmt.Fprintf(tw, "%s\t%.2fs\t%.2fs\t%.2fs\t%.2f\t≤ %.2fs\t%s\t%.0f MiB\t%.0f (%s)\t%d\t%d\t\n",
				s.Name, s.Seconds, s.CPUSeconds, s.FloorSeconds, s.Ratio, s.TargetSeconds, yesNo(s.Met),
				mib(s.PeakRSS), s.RSSPerResource, yesNo(s.RSSMet), s.FilesRead, s.Events)
		}
		tw.Flush()
		for _, s := range tr.Steps {
			if s.Rewritten != nil {
				fmt.Fprintf(w, "%s rebuild: %d output files rewritten\n", s.Name, *s.Rewritten)
			}
		}
		fmt.Fprintf(w, "cold build against read+hash plus link: %.2fs + %.2fs, ratio %.2f\n",
			tr.ReadHash.Seconds, tr.Link.Seconds, tr.ColdRatioWithLink)
		l := &tr.ResourceList
		fmt.Fprintf(w, "resource list (in process): %d entries in %d parts in %.3fs: %.0f entries/s (target ≥ %d: %s), %.1f allocations per entry\n",
			l.Entries, l.Parts, l.Seconds, l.EntriesPerSecond, listEntriesTarget, yesNo(l.Met), l.AllocsPerEntry)
		if h := tr.History; h != nil {
			first, last := h.Builds[0], h.Builds[len(h.Builds)-1]
			fmt.Fprintf(w, "history (kept versions, Change Dumps, archives): cold %.2fs %.0f MiB; after %d rebuilds of 1%%: %.2fs %.0f MiB; %.0f bytes per past event\n",
				first.Seconds, mib(first.PeakRSS), len(h.Builds)-1, last.Seconds, mib(last.PeakRSS), h.BytesPerPastEvent)
		}
		if c := tr.Copied; c != nil {
			fmt.Fprintf(w, "copied (the output on another file system): cold %.2fs %.0f MiB; --verify %.2fs %.0f MiB\n",
				c.Cold.Seconds, mib(c.Cold.PeakRSS), c.Verify.Seconds, mib(c.Verify.PeakRSS))
		}
	}
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

// writeJSON writes the report into path.
func (r *report) writeJSON(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
