package generator_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/rsgen/rsgen/generator"
)

// The scale test's tree: with RSGEN_STRESS=1, past two full Resource List
// parts of 50,000 entries; by default the same shape at a hundredth of the
// size, with parts of 500 entries.
var (
	scaleFiles   = 1_200
	scalePerDir  = 100
	maxListItems = 500
)

func init() {
	if stress() {
		scaleFiles, scalePerDir, maxListItems = 120_000, 1000, 50_000
	}
}

// scaleName and scaleContent give file i of the tree its path and bytes.
func scaleName(i int) string    { return fmt.Sprintf("d%03d/f%06d.txt", i/scalePerDir, i) }
func scaleContent(i int) string { return fmt.Sprintf("%d\n", i) }

// TestResourceListIndexAtScale builds 120,000 small files (1,200 by
// default, in parts of 500) and checks that the Resource List becomes an
// index of three parts that together list every file exactly once.
func TestResourceListIndexAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds many files; skipped with -short")
	}
	s := newSite(t, testBaseURL, nil)
	start := time.Now()
	writeScaleTree(t, s.Source)
	t.Logf("wrote %d files in %v", scaleFiles, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	opts := generator.Options{Now: t0}
	if !stress() {
		opts = generator.WithEntryLimit(opts, maxListItems)
	}
	sum := s.buildWith(opts)
	t.Logf("built in %v", time.Since(start).Round(time.Millisecond))
	defer func(start time.Time) { t.Logf("checked in %v", time.Since(start).Round(time.Millisecond)) }(time.Now())
	if sum.Files != scaleFiles {
		t.Fatalf("build saw %d files, want %d", sum.Files, scaleFiles)
	}

	sdURL := testBaseURL + ".well-known/resourcesync"
	_, sd := s.docAt(sdURL)
	if len(sd.Entries) != 1 {
		t.Fatalf("Source Description lists %d Capability Lists, want 1", len(sd.Entries))
	}
	capURL := sd.Entries[0].Loc
	_, capList := s.docAt(capURL)
	var rlURL string
	for _, e := range capList.Entries {
		if e.MD().Capability == "resourcelist" {
			rlURL = e.Loc
		}
	}
	if rlURL == "" {
		t.Fatal("Capability List has no Resource List")
	}
	_, idx := s.docAt(rlURL)
	if idx.Root != "sitemapindex" || idx.MD.Capability != "resourcelist" {
		t.Fatalf("Resource List: root %s capability %q, want a sitemapindex with capability resourcelist", idx.Root, idx.MD.Capability)
	}
	if idx.MD.At == "" {
		t.Error("Resource List Index has no at")
	}
	if up := idx.link("up"); up != capURL {
		t.Errorf("Resource List Index: up %q, want %q", up, capURL)
	}
	if len(idx.Entries) != 3 {
		t.Fatalf("Resource List Index has %d parts, want 3", len(idx.Entries))
	}

	listed := make(map[string]int, scaleFiles)
	for i, e := range idx.Entries {
		rel, part := s.docAt(e.Loc)
		if part.Root != "urlset" || part.MD.Capability != "resourcelist" {
			t.Errorf("part %d %s: root %s capability %q", i+1, rel, part.Root, part.MD.Capability)
		}
		if part.MD.At != idx.MD.At {
			t.Errorf("part %d %s: at %q, index says %q", i+1, rel, part.MD.At, idx.MD.At)
		}
		if up := part.link("up"); up != capURL {
			t.Errorf("part %d %s: up %q, want %q", i+1, rel, up, capURL)
		}
		if ix := part.link("index"); ix != rlURL {
			t.Errorf("part %d %s: index %q, want %q", i+1, rel, ix, rlURL)
		}
		n := len(part.Entries)
		if n == 0 || n > maxListItems {
			t.Errorf("part %d %s: %d entries, want 1 to %d", i+1, rel, n, maxListItems)
		}
		t.Logf("part %d %s: %d entries", i+1, rel, n)
		for _, ue := range part.Entries {
			p := locPath(t, testBaseURL, ue.Loc)
			listed[p]++
			var j int
			if _, err := fmt.Sscanf(p, "d%03d/f%06d.txt", new(int), &j); err != nil {
				t.Errorf("part %d: unexpected resource %s", i+1, p)
				continue
			}
			m := ue.MD()
			data := []byte(scaleContent(j))
			if sha256Of(m) != sha256Hex(data) || lengthOf(m) != int64(len(data)) {
				t.Errorf("part %d: %s: hash %q length %q, want sha-256:%s length %d", i+1, p, m.Hash, m.Length, sha256Hex(data), len(data))
			}
			if ue.Lastmod == "" {
				t.Errorf("part %d: %s: no lastmod", i+1, p)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	if len(listed) != scaleFiles {
		t.Errorf("the parts list %d distinct files, want %d", len(listed), scaleFiles)
	}
	for i := range scaleFiles {
		if n := listed[scaleName(i)]; n != 1 {
			t.Errorf("%s listed %d times, want once", scaleName(i), n)
		}
	}
	validateTree(t, s.Out)
}

// writeScaleTree writes the tree's files in parallel, one folder per job.
func writeScaleTree(t *testing.T, root string) {
	t.Helper()
	dirs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range runtime.GOMAXPROCS(0) * 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range dirs {
				if err := writeScaleDir(root, d); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
				}
			}
		}()
	}
	for d := range scaleFiles / scalePerDir {
		dirs <- d
	}
	close(dirs)
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
}

func writeScaleDir(root string, d int) error {
	if err := os.MkdirAll(filepath.Join(root, fmt.Sprintf("d%03d", d)), 0o755); err != nil {
		return err
	}
	for i := d * scalePerDir; i < (d+1)*scalePerDir; i++ {
		if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(scaleName(i))), []byte(scaleContent(i)), 0o644); err != nil {
			return err
		}
	}
	return nil
}
