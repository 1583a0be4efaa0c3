package main

import (
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

// The floors are what a plain Go program needs for the work a build cannot
// avoid, measured on the same tree in the same run as rsgen. The parallel
// ones use one worker per core: runtime.GOMAXPROCS, which the harness sets
// to each value of --procs in turn (withProcs).

// cpuTimes is the user and system time of a process.
type cpuTimes struct{ user, sys time.Duration }

func (c cpuTimes) sub(d cpuTimes) cpuTimes { return cpuTimes{c.user - d.user, c.sys - d.sys} }

// floorRun is what one floor measurement took, and what it saw.
type floorRun struct {
	wall  time.Duration
	cpu   cpuTimes
	files int
	bytes int64
}

// timed runs fn and returns what it took: wall time, and this process's
// CPU time, in which nothing else runs while a floor is measured.
func timed(fn func(r *floorRun) error) (floorRun, error) {
	var r floorRun
	start, startCPU := time.Now(), processCPU()
	err := fn(&r)
	r.wall, r.cpu = time.Since(start), processCPU().sub(startCPU)
	return r, err
}

// withProcs runs fn with runtime.GOMAXPROCS set to procs, and puts it back.
func withProcs(procs int, fn func() error) error {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	return fn()
}

// readHashFloor walks root and reads every file through the published
// digests of a default rsgen build (sha-256, which is also rsgen's
// fingerprint), with one worker per core, each with its own buffer and
// hasher.
func readHashFloor(root string) (floorRun, error) {
	return timed(func(r *floorRun) error {
		paths := make(chan string, 256)
		workers := runtime.GOMAXPROCS(0)
		counts := make([]floorRun, workers)
		errs := make([]error, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				sha := sha256.New()
				buf := make([]byte, 256<<10)
				var sum [32]byte
				for p := range paths {
					if errs[w] != nil {
						continue
					}
					sha.Reset()
					n, err := hashFile(p, buf, sha)
					if err != nil {
						errs[w] = err
						continue
					}
					sha.Sum(sum[:0])
					counts[w].files++
					counts[w].bytes += n
				}
			})
		}
		walkErr := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				paths <- p
			}
			return err
		})
		close(paths)
		wg.Wait()
		for _, c := range counts {
			r.files += c.files
			r.bytes += c.bytes
		}
		return errors.Join(append(errs, walkErr)...)
	})
}

// hashFile feeds the bytes of the file at p to the hash, as rsgen does:
// one read through one buffer.
func hashFile(p string, buf []byte, h io.Writer) (int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n int64
	for {
		k, err := f.Read(buf)
		h.Write(buf[:k])
		n += int64(k)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// walkStatFloor walks root on one goroutine and stats every file, which is
// all a build that trusts unchanged files must do with the tree.
func walkStatFloor(root string) (floorRun, error) {
	return timed(func(r *floorRun) error {
		return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			r.files++
			r.bytes += info.Size()
			return nil
		})
	})
}

// walkStatParallelFloor does the work of walkStatFloor with one worker per
// core, each reading whole folders and stat'ing their files (issue 37): the
// floor of a rebuild that spreads its walk, not only its stats, over the
// cores.
func walkStatParallelFloor(root string) (floorRun, error) {
	return timed(func(r *floorRun) error {
		workers := runtime.GOMAXPROCS(0)
		q := newFolderQueue(root)
		counts := make([]floorRun, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				var c floorRun // not counts[w]: the workers would share its cache line
				for dir, ok := q.next(); ok; dir, ok = q.next() {
					q.done(statFolder(dir, &c))
				}
				counts[w] = c
			})
		}
		wg.Wait()
		for _, c := range counts {
			r.files += c.files
			r.bytes += c.bytes
		}
		return q.err
	})
}

// statFolder reads the folder dir, sorted as filepath.WalkDir reads it,
// stats its regular files into r, and returns its subfolders.
func statFolder(dir string, r *floorRun) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var subfolders []string
	for _, e := range entries {
		switch {
		case e.IsDir():
			subfolders = append(subfolders, filepath.Join(dir, e.Name()))
		case e.Type().IsRegular():
			info, err := e.Info()
			if err != nil {
				return nil, err
			}
			r.files++
			r.bytes += info.Size()
		}
	}
	return subfolders, nil
}

// folderQueue hands the folders of a tree to workers: each worker takes a
// folder (next), reads it, and hands back its subfolders (done). The walk
// ends when no folder is queued or being read, or at the first error.
type folderQueue struct {
	mu      sync.Mutex
	ready   sync.Cond // a folder was queued, or the walk ended
	folders []string  // a stack: depth first, so that it stays short
	pending int       // folders queued or being read
	err     error     // the first error
}

func newFolderQueue(root string) *folderQueue {
	q := &folderQueue{folders: []string{root}, pending: 1}
	q.ready.L = &q.mu
	return q
}

// next returns a folder to read, waiting for one while others are read;
// false when the walk has ended.
func (q *folderQueue) next() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.folders) == 0 && q.pending > 0 && q.err == nil {
		q.ready.Wait()
	}
	if len(q.folders) == 0 || q.err != nil {
		return "", false
	}
	dir := q.folders[len(q.folders)-1]
	q.folders = q.folders[:len(q.folders)-1]
	return dir, true
}

// done queues the subfolders of a folder read, or records why it could not
// be read.
func (q *folderQueue) done(subfolders []string, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err != nil && q.err == nil {
		q.err = err
	}
	q.folders = append(q.folders, subfolders...)
	q.pending += len(subfolders) - 1
	q.ready.Broadcast()
}

// linkJob is one file for a link floor to hard-link.
type linkJob struct{ src, dst string }

// linkFloor walks root on one goroutine and hard-links every file into the
// empty folder dst, creating its folders on the way, with one worker per
// core: what placing the resources of a cold build costs, which the
// read+hash floor leaves out. The walk deals the files out one by one, as
// rsgen's placement does, so the workers link into one folder at once;
// byFolder deals out a folder's files together instead, so that no two
// workers link into one folder, which tells whether linking contends on
// the folder's lock in the kernel (issue 37). dst is removed afterwards,
// untimed.
func linkFloor(root, dst string, byFolder bool) (floorRun, error) {
	r, err := timed(func(r *floorRun) error {
		jobs := make(chan []linkJob, 256)
		workers := runtime.GOMAXPROCS(0)
		errs := make([]error, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for batch := range jobs {
					for _, j := range batch {
						if err := os.Link(j.src, j.dst); err != nil && errs[w] == nil {
							errs[w] = err
						}
					}
				}
			})
		}
		var walkErr error
		r.files, walkErr = linkBatches(root, dst, byFolder, func(batch []linkJob) { jobs <- batch })
		close(jobs)
		wg.Wait()
		return errors.Join(append(errs, walkErr)...)
	})
	if err != nil {
		return floorRun{}, err
	}
	return r, os.RemoveAll(dst)
}

// linkBatches walks root, creates the folders of dst that mirror its
// folders, and hands send the files to link: one file a batch, or, with
// byFolder, the files of one folder (found one after the other) a batch.
// It returns how many files it found.
func linkBatches(root, dst string, byFolder bool, send func([]linkJob)) (int, error) {
	files := 0
	var batch []linkJob
	flush := func() {
		if len(batch) > 0 {
			send(batch)
			batch = nil
		}
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			flush()
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		case d.Type().IsRegular():
			batch = append(batch, linkJob{p, filepath.Join(dst, rel)})
			files++
			if !byFolder {
				flush()
			}
		}
		return nil
	})
	flush()
	return files, err
}
