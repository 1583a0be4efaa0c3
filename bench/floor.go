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
// avoid, measured on the same tree in the same run as rsgen.

// floorRun is what one floor measurement took, and what it saw.
type floorRun struct {
	wall, cpu time.Duration
	files     int
	bytes     int64
}

// readHashFloor walks root and reads every file through the published
// digests of a default rsgen build (sha-256, which is also rsgen's
// fingerprint), with one worker per core, each with its own buffer and
// hasher.
func readHashFloor(root string) (floorRun, error) {
	start, startCPU := time.Now(), processCPU()
	paths := make(chan string, 256)
	workers := runtime.GOMAXPROCS(0)
	files := make([]int, workers)
	bytes := make([]int64, workers)
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
				files[w]++
				bytes[w] += n
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
	r := floorRun{wall: time.Since(start), cpu: processCPU() - startCPU}
	for w := range workers {
		if errs[w] != nil {
			return floorRun{}, errs[w]
		}
		r.files += files[w]
		r.bytes += bytes[w]
	}
	return r, walkErr
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
	start, startCPU := time.Now(), processCPU()
	var r floorRun
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
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
	r.wall, r.cpu = time.Since(start), processCPU()-startCPU
	return r, err
}

// linkFloor walks root and hard-links every file into the empty folder
// dst, creating its folders on the way, with one worker per core: what
// placing the resources of a cold build costs, which the read+hash floor
// leaves out. dst is removed afterwards, untimed.
func linkFloor(root, dst string) (floorRun, error) {
	start, startCPU := time.Now(), processCPU()
	type job struct{ src, dst string }
	jobs := make(chan job, 256)
	workers := runtime.GOMAXPROCS(0)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for j := range jobs {
				if err := os.Link(j.src, j.dst); err != nil && errs[w] == nil {
					errs[w] = err
				}
			}
		})
	}
	var r floorRun
	walkErr := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		case d.Type().IsRegular():
			jobs <- job{p, filepath.Join(dst, rel)}
			r.files++
		}
		return nil
	})
	close(jobs)
	wg.Wait()
	r.wall, r.cpu = time.Since(start), processCPU()-startCPU
	if err := errors.Join(append(errs, walkErr)...); err != nil {
		return floorRun{}, err
	}
	return r, os.RemoveAll(dst)
}
