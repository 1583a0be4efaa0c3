package generator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rsgen/rsgen/snapshot"
)

// output is the output folder: it places resources in it and removes what
// is obsolete.
type output struct {
	dir     string
	src     string
	enabled bool // copy_resources: resources are placed in the output
	link    bool // source and output share a file system: hard-link
	placed  int
}

func (b *builder) openOutput() (*output, error) {
	o := &output{dir: b.cfg.Out, src: b.cfg.Source, enabled: b.cfg.CopyResources}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return nil, fmt.Errorf("output folder: %w", err)
	}
	o.link = sameDevice(o.src, o.dir)
	return o, nil
}

func sameDevice(a, b string) bool {
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	if errA != nil || errB != nil {
		return false
	}
	sa, okA := ia.Sys().(*syscall.Stat_t)
	sb, okB := ib.Sys().(*syscall.Stat_t)
	return okA && okB && sa.Dev == sb.Dev
}

func (o *output) path(rel string) string { return filepath.Join(o.dir, filepath.FromSlash(rel)) }

// tee returns the scan's tee when resources are copied rather than linked:
// each file read for hashing is copied into the output by the same read.
func (o *output) tee() snapshot.Tee {
	if !o.enabled || o.link {
		return nil
	}
	return func(r *snapshot.Record) (io.Writer, func(bool) error, error) {
		dst := o.path(r.Path)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, nil, err
		}
		tmp, err := os.CreateTemp(filepath.Dir(dst), tempPrefix+"*")
		if err != nil {
			return nil, nil, err
		}
		done := func(ok bool) error {
			err := tmp.Close()
			if ok && err == nil {
				err = finishCopy(tmp.Name(), dst, r.ModTime)
			}
			if err != nil || !ok {
				os.Remove(tmp.Name())
			}
			return err
		}
		return tmp, done, nil
	}
}

// finishCopy gives a copied resource its source's mtime, by which later
// builds recognise it as current, and renames it into place.
func finishCopy(tmp, dst string, mtime int64) error {
	t := time.Unix(0, mtime)
	if err := os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	if err := os.Chtimes(tmp, t, t); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// placeAll makes sure every file has its current bytes in the output,
// placing those that are missing or stale, in parallel.
func (o *output) placeAll(ctx context.Context, files []snapshot.Record) error {
	if !o.enabled {
		return nil
	}
	var next atomic.Int64
	var placed atomic.Int64
	var firstErr error
	var once sync.Once
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(files) {
					return
				}
				did, err := o.place(&files[i])
				if err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
				if did {
					placed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	o.placed = int(placed.Load())
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// place puts one resource in the output unless it is there already. It
// reports whether it wrote anything.
func (o *output) place(r *snapshot.Record) (bool, error) {
	dst := o.path(r.Path)
	if info, err := os.Lstat(dst); err == nil && o.current(info, r) {
		return false, nil
	}
	src := filepath.Join(o.src, filepath.FromSlash(r.Path))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return false, fmt.Errorf("place %s: %w", dst, err)
	}
	if o.link {
		err := linkInto(src, dst)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, syscall.EXDEV) && !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.EMLINK) {
			return false, fmt.Errorf("place %s: %w", dst, err)
		}
	}
	if err := copyInto(src, dst, r); err != nil {
		return false, fmt.Errorf("place %s: %w", dst, err)
	}
	return true, nil
}

// current reports whether the output file info already holds r's bytes: it
// is the same inode (a hard link), or a copy with r's size and mtime.
func (o *output) current(info os.FileInfo, r *snapshot.Record) bool {
	if !info.Mode().IsRegular() || info.Size() != r.Size {
		return false
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Ino == r.Inode {
		return true
	}
	return info.ModTime().UnixNano() == r.ModTime
}

func linkInto(src, dst string) error {
	tmp := filepath.Join(filepath.Dir(dst), fmt.Sprintf("%s%d-%s", tempPrefix, os.Getpid(), filepath.Base(dst)))
	os.Remove(tmp)
	if err := os.Link(src, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func copyInto(src, dst string, r *snapshot.Record) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), tempPrefix+"*")
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, in)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = finishCopy(tmp.Name(), dst, r.ModTime)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// remove deletes an output file rsgen wrote, and the folders it leaves
// empty. A file already gone is not an error.
func (o *output) remove(rel string) error {
	p := o.path(rel)
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	for dir := filepath.Dir(p); dir != o.dir && len(dir) > len(o.dir); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break // not empty, or gone
		}
	}
	return nil
}
