package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// treeSpec describes one synthetic source tree. Every file's path, size
// and bytes follow from the spec and the file's index, so a tree is the
// same on every machine, and the harness can put a file back as it was.
type treeSpec struct {
	Name     string  `json:"name"`
	Files    int     `json:"files"`
	MeanSize int     `json:"mean_size"` // mean of the log-normal sizes, bytes
	Sigma    float64 `json:"sigma"`     // of the underlying normal
	PerDir   int     `json:"per_dir"`   // entries per folder
	Seed     uint64  `json:"seed"`
	Format   int     `json:"format"` // changes whenever generation does
}

// generatorFormat is bumped whenever the way trees are generated changes,
// so that trees left by an older harness are generated again.
const generatorFormat = 1

// The trees of the issue, and the tiny one CI runs.
var (
	treeA    = treeSpec{Name: "a", Files: 100_000, MeanSize: 8 << 10, Sigma: 1, PerDir: 100, Seed: 1, Format: generatorFormat}
	treeB    = treeSpec{Name: "b", Files: 1_000_000, MeanSize: 1 << 10, Sigma: 1, PerDir: 100, Seed: 2, Format: generatorFormat}
	treeTiny = treeSpec{Name: "tiny", Files: 2_000, MeanSize: 8 << 10, Sigma: 1, PerDir: 100, Seed: 3, Format: generatorFormat}
	// treeC is the scale tree, opt-in: ten million tiny files (a block of
	// disk each, about 40 GB), for the memory model.
	treeC = treeSpec{Name: "c", Files: 10_000_000, MeanSize: 64, Sigma: 1, PerDir: 100, Seed: 4, Format: generatorFormat}
)

// genesis is the modification time of every generated file: far enough in
// the past that rsgen trusts its stat on the next build (its "racy git"
// window is a few seconds), and the same on every machine.
var genesis = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

var (
	dirWords  = []string{"Sammlung", "dossier été", "ΑΡΧΕΊΟ", "資料"}
	fileWords = []string{"report", "naïve café", "Übersicht", "données brutes", "日本語 メモ", "Ελληνικά", "plain", "with  two spaces"}
	fileExts  = []string{".txt", ".json", ".html", ".xml", ".pdf", ".jpg", ".csv", ""}
)

// levels is how many folders deep the files lie: enough that no folder
// holds more than PerDir entries.
func (t *treeSpec) levels() int {
	n := 1
	for dirs := (t.Files - 1) / t.PerDir; dirs >= t.PerDir; dirs /= t.PerDir {
		n++
	}
	return n
}

// dir returns the folder of file i, relative to the source root.
func (t *treeSpec) dir(i int) string {
	levels := t.levels()
	elems := make([]string, levels)
	leaf := i / t.PerDir
	for k := levels - 1; k >= 0; k-- {
		elems[k] = fmt.Sprintf("%s %02d", dirWords[k%len(dirWords)], leaf%t.PerDir)
		leaf /= t.PerDir
	}
	return filepath.Join(elems...)
}

// path returns the path of file i, relative to the source root. Names
// carry spaces and non-ASCII letters, which rsgen must percent-encode.
func (t *treeSpec) path(i int) string {
	name := fmt.Sprintf("%s %07d%s", fileWords[i%len(fileWords)], i, fileExts[(i/len(fileWords))%len(fileExts)])
	return filepath.Join(t.dir(i), name)
}

// size returns the size of file i: log-normal with mean MeanSize, capped at
// 64 times the mean.
func (t *treeSpec) size(i int) int {
	r := rand.New(rand.NewPCG(t.Seed, uint64(i)))
	mu := math.Log(float64(t.MeanSize)) - t.Sigma*t.Sigma/2
	return int(min(math.Exp(mu+t.Sigma*r.NormFloat64()), float64(64*t.MeanSize)))
}

// content fills buf with the bytes of file i at the given version (0 as
// generated; the harness's edits count up from 1).
func (t *treeSpec) content(buf []byte, i, version int) {
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[0:], t.Seed)
	binary.LittleEndian.PutUint64(seed[8:], uint64(i))
	binary.LittleEndian.PutUint64(seed[16:], uint64(version))
	rand.NewChaCha8(seed).Read(buf)
}

// tree is a generated tree in the work folder: its spec, the source folder
// and the totals.
type tree struct {
	spec    treeSpec
	root    string // holds marker.json, src/, out/, state/
	src     string
	bytes   int64
	folders int
}

func (t *tree) markerPath() string { return filepath.Join(t.root, "marker.json") }

// marker is what marker.json holds: the spec the tree was generated from,
// and its totals.
type marker struct {
	Spec    treeSpec `json:"spec"`
	Bytes   int64    `json:"bytes"`
	Folders int      `json:"folders"`
}

// openTree returns the tree of spec under work, generating it unless a
// marker says the same spec was generated there before.
func openTree(work string, spec treeSpec, logf func(string, ...any)) (*tree, error) {
	t := &tree{spec: spec, root: filepath.Join(work, "tree-"+spec.Name)}
	t.src = filepath.Join(t.root, "src")
	if data, err := os.ReadFile(t.markerPath()); err == nil {
		var m marker
		if json.Unmarshal(data, &m) == nil && m.Spec == spec {
			t.bytes, t.folders = m.Bytes, m.Folders
			logf("tree %s: reusing %s (%d files, %.0f MB)", spec.Name, t.src, spec.Files, float64(t.bytes)/1e6)
			return t, nil
		}
	}
	logf("tree %s: generating %d files into %s", spec.Name, spec.Files, t.src)
	start := time.Now()
	if err := os.RemoveAll(t.root); err != nil {
		return nil, err
	}
	if err := t.generate(); err != nil {
		return nil, fmt.Errorf("generate tree %s: %w", spec.Name, err)
	}
	if err := t.writeMarker(); err != nil {
		return nil, err
	}
	logf("tree %s: generated %.0f MB in %d folders in %v", spec.Name, float64(t.bytes)/1e6, t.folders, time.Since(start).Round(time.Second))
	return t, nil
}

func (t *tree) writeMarker() error {
	data, err := json.MarshalIndent(marker{Spec: t.spec, Bytes: t.bytes, Folders: t.folders}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(t.markerPath(), append(data, '\n'), 0o644)
}

// generate writes every file of the tree, in parallel.
func (t *tree) generate() error {
	folders := map[string]bool{}
	for i := 0; i < t.spec.Files; i += t.spec.PerDir {
		d := filepath.Join(t.src, t.spec.dir(i))
		for ; d != t.src && !folders[d]; d = filepath.Dir(d) {
			folders[d] = true
		}
	}
	for d := range folders {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	t.folders = len(folders)
	var total atomic.Int64
	err := t.forEach(func(i int, buf *[]byte) error {
		n, err := t.writeFile(i, 0, genesis, buf)
		total.Add(int64(n))
		return err
	})
	t.bytes = total.Load()
	return err
}

// forEach calls fn for every file index, on as many goroutines as cores,
// each with its own reusable buffer.
func (t *tree) forEach(fn func(i int, buf *[]byte) error) error {
	return t.forEachOf(t.spec.Files, func(k int) int { return k }, fn)
}

// forEachOf calls fn for the n files index(0) ... index(n-1) in parallel.
func (t *tree) forEachOf(n int, index func(int) int, fn func(i int, buf *[]byte) error) error {
	var next atomic.Int64
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			var buf []byte
			for {
				k := int(next.Add(1) - 1)
				if k >= n {
					return
				}
				if err := fn(index(k), &buf); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// writeFile writes file i at the given version in place (keeping its inode,
// as most editors do not) and sets its modification time.
func (t *tree) writeFile(i, version int, mtime time.Time, buf *[]byte) (int, error) {
	size := t.spec.size(i)
	if cap(*buf) < size {
		*buf = make([]byte, size)
	}
	b := (*buf)[:size]
	t.spec.content(b, i, version)
	p := filepath.Join(t.src, t.spec.path(i))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		return 0, err
	}
	return size, os.Chtimes(p, mtime, mtime)
}

// An edit is what the harness does to 1% of the files between builds.
type edit int

const (
	touchFiles  edit = iota // a new mtime, the same bytes
	changeFiles             // new bytes of the same size, and a new mtime
)

// editSet returns how many files an edit of the given round selects and
// the index of the k-th: every hundredth file, a different hundredth for
// each round and kind of edit, so that the edited files are spread over the
// whole tree (and every Resource List part).
func (t *tree) editSet(e edit, round int) (int, func(int) int) {
	offset := (2*round + int(e)) % 100
	n := (t.spec.Files - offset + 99) / 100
	return n, func(k int) int { return offset + 100*k }
}

// apply makes an edit of the given round. The tree no longer matches its
// marker until restore puts the files back.
func (t *tree) apply(e edit, round int) error {
	if err := os.Remove(t.markerPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	mtime := genesis.Add(time.Duration(round+1) * time.Hour)
	n, index := t.editSet(e, round)
	return t.forEachOf(n, index, func(i int, buf *[]byte) error {
		if e == touchFiles {
			return os.Chtimes(filepath.Join(t.src, t.spec.path(i)), mtime, mtime)
		}
		_, err := t.writeFile(i, round+1, mtime, buf)
		return err
	})
}

// restore undoes the edits of rounds 0 ... rounds-1 and writes the marker
// again, so that the next run finds the tree as generated.
func (t *tree) restore(rounds int) error {
	for round := range rounds {
		for _, e := range []edit{touchFiles, changeFiles} {
			n, index := t.editSet(e, round)
			err := t.forEachOf(n, index, func(i int, buf *[]byte) error {
				_, err := t.writeFile(i, 0, genesis, buf)
				return err
			})
			if err != nil {
				return err
			}
		}
	}
	return t.writeMarker()
}
