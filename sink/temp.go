package sink

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/rsgen/rsgen/internal/sysfile"
	"github.com/rsgen/rsgen/layout"
)

// Temporary files
//
// Every file rsgen writes is first a temporary file beside its place,
// named with layout.TempPrefix (which builds remove, hosts are told not to
// serve, and no source file may take), then renamed into place: a reader
// never sees half a file. These are the only functions that create them.

// createTemp creates a temporary file for dst in tempDir(dst).
func createTemp(dst string) (*os.File, error) {
	dir, err := tempDir(dst)
	if err != nil {
		return nil, err
	}
	return os.CreateTemp(dir, layout.TempPrefix+"*")
}

// tempDir returns the folder the temporary file of dst is made in, making
// it when it is missing: the folder of dst, or, where a file stands in the
// way of that folder (a file an earlier build published, which this build
// replaces by a folder: see Displace), the nearest folder above it. Commit
// moves a file from there into place once the way is clear.
func tempDir(dst string) (string, error) {
	dir := filepath.Dir(dst)
	err := os.MkdirAll(dir, 0o755)
	if !errors.Is(err, syscall.ENOTDIR) {
		return dir, err
	}
	for up := filepath.Dir(dir); up != dir; dir, up = up, filepath.Dir(up) {
		if info, serr := os.Lstat(up); serr == nil && info.IsDir() {
			return up, nil
		}
	}
	return "", err
}

// TempName returns a temporary name for a hard link to be renamed to dst,
// which cannot be created under a random name, in tempDir(dst), which it
// makes: the process ID keeps concurrent builds of other states apart,
// and the name of dst keeps the links of one build apart, or, in a folder
// above dst's, where the links of several files may wait, a hash of its
// path.
func TempName(dst string) (string, error) {
	dir, err := tempDir(dst)
	if err != nil {
		return "", err
	}
	name := filepath.Base(dst)
	if dir != filepath.Dir(dst) {
		h := fnv.New64a()
		h.Write([]byte(dst))
		name = fmt.Sprintf("%016x", h.Sum64())
	}
	return filepath.Join(dir, fmt.Sprintf("%s%d-%s", layout.TempPrefix, os.Getpid(), name)), nil
}

// CopyTemp copies the bytes of src into a temporary file beside dst, with
// modification time mtime (nanoseconds) and the mode of a published file,
// and returns its name.
func CopyTemp(src io.Reader, dst string, mtime int64) (string, error) {
	tmp, err := createTemp(dst)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(tmp, src)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = Stamp(tmp.Name(), mtime)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}

// Descriptor is an open file whose descriptor a clone can share blocks
// with (an *os.File, a file of a snapshot.Tree).
type Descriptor interface{ Fd() uintptr }

// CloneTemp clones the open file src into a new temporary file for dst
// (see tempDir), with modification time mtime (nanoseconds) and the mode
// of a published file, and returns its name; ok is false, with nothing
// left behind, where the file system does not clone (the caller copies
// instead).
func CloneTemp(src Descriptor, dst string, mtime int64) (tmp string, ok bool, err error) {
	f, err := createTemp(dst)
	if err != nil {
		return "", false, err
	}
	err = cloneFile(f.Fd(), src.Fd())
	cloned := err == nil
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = Stamp(f.Name(), mtime)
	}
	if err != nil {
		os.Remove(f.Name())
		if !cloned {
			err = nil // not a failure: the caller copies
		}
		return "", false, err
	}
	return f.Name(), true, nil
}

// Stamp gives a copied file its source's mtime, by which later builds
// recognise it as current, and the mode of a published file.
func Stamp(path string, mtime int64) error {
	t := time.Unix(0, mtime)
	if err := os.Chmod(path, 0o644); err != nil {
		return err
	}
	return os.Chtimes(path, t, t)
}

// LinkOrCopyTemp puts the bytes of the file src into a new temporary file
// beside dst and returns its name: a hard link to src where possible, else
// a copy with src's mtime.
func LinkOrCopyTemp(src, dst string) (string, error) {
	tmp, err := TempName(dst)
	if err != nil {
		return "", err
	}
	os.Remove(tmp)
	if err := link(src, tmp); err == nil {
		return tmp, nil
	}
	info, err := os.Stat(src)
	if err != nil {
		return "", err
	}
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	return CopyTemp(in, dst, info.ModTime().UnixNano())
}

// link is os.Link; a test replaces it to stand for a file system without
// hard links.
var link = os.Link

// Keep puts a copy of the file src at dst at once, atomically: a hard link
// where the two share a file system, else a copy with src's mtime. It is
// for the state folder's copies of published files, which are not staged.
func Keep(src, dst string) error {
	tmp, err := LinkOrCopyTemp(src, dst)
	if err == nil {
		if err = sysfile.Rename(tmp, dst); err != nil {
			os.Remove(tmp)
		}
	}
	if err != nil {
		return fmt.Errorf("keep %s: %w", dst, err)
	}
	return nil
}

// RemoveTemps deletes the files under dir named as temporary files
// (layout.TempPrefix), or that more, when set, matches: those of a killed
// build, or those a failed build could not list (see Discard). Only rsgen
// creates such names, and the caller holds the state's lock, so no other
// build is writing them. A folder that does not exist holds none.
func RemoveTemps(dir string, more func(name string) bool) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		name := d.Name()
		if d.IsDir() || !strings.HasPrefix(name, layout.TempPrefix) && (more == nil || !more(name)) {
			return nil
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	})
}
