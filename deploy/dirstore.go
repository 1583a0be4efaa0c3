package deploy

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/rsgen/rsgen/internal/sysfile"
	"github.com/rsgen/rsgen/layout"
)

// DirStore publishes into a web server's document root (nginx, Apache):
// each file is written beside its place under a temporary name and renamed
// over it, so that a request gets the old file or the new one, never a
// part. Every path is resolved through an os.Root: nothing outside the
// folder is read, written or removed, whatever links it holds. Headers
// come from the server's configuration (the hosting files rsgen writes,
// which are deployed too), so the store keeps none. The folder is created
// by the first write: a dry run creates nothing.
type DirStore struct {
	dir  string
	reqs dirRequests

	mu   sync.Mutex
	root *os.Root // nil until the folder exists
}

type dirRequests struct {
	put, get, del atomic.Int64
	bytes         atomic.Int64
}

// OpenDir returns the store of the folder dir.
func OpenDir(dir string) (*DirStore, error) {
	d := &DirStore{dir: dir}
	if _, err := d.open(false); err != nil {
		return nil, err
	}
	return d, nil
}

// open returns the folder's root, creating the folder when create is set;
// without, a folder that is not there is a nil root.
func (d *DirStore) open(create bool) (*os.Root, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.root != nil {
		return d.root, nil
	}
	if create {
		if err := os.MkdirAll(d.dir, 0o755); err != nil {
			return nil, fmt.Errorf("deploy to %s: %w", d.dir, err)
		}
	}
	root, err := os.OpenRoot(d.dir)
	if errors.Is(err, fs.ErrNotExist) && !create {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("deploy to %s: %w", d.dir, err)
	}
	d.root = root
	return root, nil
}

// Close releases the folder.
func (d *DirStore) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.root == nil {
		return nil
	}
	return d.root.Close()
}

func (d *DirStore) String() string                   { return "file://" + d.dir }
func (d *DirStore) KeepsHeaders() bool               { return false }
func (d *DirStore) Publishes(_ string) (bool, error) { return true, nil }

// Requests counts file writes as PUTs, reads as GETs and removals as
// DELETEs.
func (d *DirStore) Requests() Requests {
	return Requests{Put: int(d.reqs.put.Load()), Get: int(d.reqs.get.Load()), Delete: int(d.reqs.del.Load()),
		BytesSent: d.reqs.bytes.Load()}
}

// Put copies body to a temporary file beside obj.Key, checks its length
// and SHA-256 against obj's, and renames it into place; with ifAbsent it
// is linked instead, which fails when a file is there.
func (d *DirStore) Put(_ context.Context, obj *Object, body io.ReaderAt, ifAbsent bool) error {
	d.reqs.put.Add(1)
	root, err := d.open(true)
	if err != nil {
		return err
	}
	tmp, err := writeTemp(root, path.Dir(obj.Key), io.NewSectionReader(body, 0, obj.Size+1), obj)
	if err != nil {
		return fmt.Errorf("write %s: %w", obj.Key, err)
	}
	d.reqs.bytes.Add(obj.Size)
	if ifAbsent {
		err = root.Link(tmp, obj.Key)
		root.Remove(tmp)
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("write %s: %w", obj.Key, ErrExists)
		}
	} else {
		err = root.Rename(tmp, obj.Key)
	}
	if err != nil {
		root.Remove(tmp)
		return fmt.Errorf("write %s: %w", obj.Key, err)
	}
	return nil
}

// writeTemp writes body into a new temporary file in dir below root,
// checks that it holds obj's bytes (its length only, when obj's SHA-256
// is zero), and returns its path: temporary names
// start with layout.TempPrefix, which servers configured by rsgen never
// serve.
func writeTemp(root *os.Root, dir string, body io.Reader, obj *Object) (string, error) {
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp := path.Join(dir, tempPrefix+randomHex(tempRandomBytes))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && (n != obj.Size || obj.SHA256 != ([32]byte{}) && !bytes.Equal(h.Sum(nil), obj.SHA256[:])) {
		err = errChanged
	}
	if err != nil {
		root.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// The names of the temporary files of a deploy: tempPrefix and
// tempRandomBytes in hex.
const (
	tempPrefix      = layout.TempPrefix + "deploy-"
	tempRandomBytes = 8
)

// isTemp reports whether name is that of a deploy's temporary file.
func isTemp(name string) bool {
	rest, ok := strings.CutPrefix(name, tempPrefix)
	_, err := hex.DecodeString(rest)
	return ok && len(rest) == 2*tempRandomBytes && err == nil && strings.ToLower(rest) == rest
}

// Tidy removes the temporary files of killed deploys from dirs and MetaDir:
// regular files named as writeTemp names them, and nothing else.
func (d *DirStore) Tidy(_ context.Context, dirs iter.Seq[string]) error {
	root, err := d.open(false)
	if err != nil || root == nil {
		return err
	}
	for dir := range dirs {
		if err := removeTemps(root, dir); err != nil {
			return err
		}
	}
	return removeTemps(root, MetaDir)
}

// removeTemps removes the temporary files of deploys from the folder dir.
func removeTemps(root *os.Root, dir string) error {
	f, err := root.Open(dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove the temporary files of killed deploys: %w", err)
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return fmt.Errorf("remove the temporary files of killed deploys from %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() && isTemp(e.Name()) {
			if err := root.Remove(path.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove the temporary file of a killed deploy: %w", err)
			}
		}
	}
	return nil
}

// Reheader does nothing: the server's configuration gives the headers.
func (d *DirStore) Reheader(context.Context, *Object) error { return nil }

// Stat reads the file at key for its length and SHA-256.
func (d *DirStore) Stat(_ context.Context, key string) (*Object, error) {
	d.reqs.get.Add(1)
	root, err := d.open(false)
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, fmt.Errorf("stat %s: %w", key, ErrNotExist)
	}
	f := &localFile{rel: key}
	err = newFileHasher().hash(root, f)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("stat %s: %w", key, ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	return &Object{Key: key, Size: f.size, SHA256: f.sum}, nil
}

// Delete removes the files at objs' keys, and the folders they leave
// empty: only a regular file that holds the object's bytes (its length
// and SHA-256), which rsgen published there. Any other file (replaced
// since, or named by a manifest someone altered) is not rsgen's to
// delete: it is left, and reported to kept, and so is a folder at a key
// (named by an altered manifest, or holding the files of a path that
// became a folder, when the deploy that cleared the way for them was
// interrupted: see planner.inTheWay).
func (d *DirStore) Delete(_ context.Context, objs []Object, kept func(key, why string)) error {
	root, err := d.open(false)
	if err != nil || root == nil {
		return err
	}
	for i := range objs {
		key := objs[i].Key
		d.reqs.del.Add(1)
		why, err := removeIfHolds(root, &objs[i])
		if err != nil {
			return fmt.Errorf("delete %s: %w", key, err)
		}
		if why != "" {
			kept(key, why)
			continue
		}
		for dir := path.Dir(key); dir != "."; dir = path.Dir(dir) {
			if root.Remove(dir) != nil {
				break // not empty, or gone: either way, done climbing
			}
		}
	}
	return nil
}

// removeIfHolds removes the file at obj.Key when it holds obj's bytes.
// Otherwise it says why it is kept; nothing there is removed already.
func removeIfHolds(root *os.Root, obj *Object) (kept string, err error) {
	info, err := root.Lstat(obj.Key)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", err
	case info.IsDir():
		return "a folder, not the file rsgen published there: kept", nil
	case !info.Mode().IsRegular():
		return "not a regular file, as the file rsgen published there was: kept", nil
	}
	f := &localFile{rel: obj.Key}
	if info.Size() == obj.Size {
		err = newFileHasher().hash(root, f)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", err
	case info.Size() != obj.Size || f.sum != obj.SHA256:
		return "its length or SHA-256 is not that of the file rsgen published there (the deploy's manifest): kept", nil
	}
	if err := root.Remove(obj.Key); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	return "", nil
}

// metaTag is the entity tag of one of the deploy's files: its length,
// mtime and inode, which every replacement changes.
func metaTag(info fs.FileInfo) string {
	return fmt.Sprintf("%d-%d-%d", info.Size(), info.ModTime().UnixNano(), sysfile.Inode(info))
}

func (d *DirStore) ReadMeta(_ context.Context, name, etag string, w io.Writer) (string, error) {
	d.reqs.get.Add(1)
	rel := path.Join(MetaDir, name)
	root, err := d.open(false)
	if err != nil {
		return "", err
	}
	if root == nil {
		return "", fmt.Errorf("%s: %w", rel, ErrNotExist)
	}
	f, err := openRegular(root, rel)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s: %w", rel, ErrNotExist)
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("read %s: %w", rel, err)
	}
	tag := metaTag(info)
	if tag == etag {
		return tag, ErrNotModified
	}
	if _, err := io.Copy(w, f); err != nil {
		return "", fmt.Errorf("read %s: %w", rel, err)
	}
	return tag, nil
}

func (d *DirStore) WriteMeta(_ context.Context, name string, body io.ReaderAt, size int64) (string, error) {
	d.reqs.put.Add(1)
	rel := path.Join(MetaDir, name)
	root, err := d.open(true)
	if err != nil {
		return "", err
	}
	// The deploy's own file: its length is checked, its bytes read once.
	tmp, err := writeTemp(root, MetaDir, io.NewSectionReader(body, 0, size+1), &Object{Size: size})
	if err == nil {
		if err = root.Rename(tmp, rel); err != nil {
			root.Remove(tmp)
		}
	}
	if err != nil {
		return "", fmt.Errorf("write %s: %w", rel, err)
	}
	info, err := root.Lstat(rel)
	if err != nil {
		return "", fmt.Errorf("write %s: %w", rel, err)
	}
	return metaTag(info), nil
}

// Lock takes an flock on MetaDir/lock in the folder: the kernel releases
// it when the deploy ends, however it ends, so a web root's lock is never
// stale and breakLock has nothing to do.
func (d *DirStore) Lock(_ context.Context, holder Holder, _ bool) (Lease, error) {
	rel := path.Join(MetaDir, "lock")
	root, err := d.open(true)
	if err != nil {
		return nil, err
	}
	if err := root.MkdirAll(MetaDir, 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", rel, err)
	}
	f, err := root.OpenFile(rel, os.O_RDWR|os.O_CREATE|noFollow, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", rel, err)
	}
	other, err := flockFile(f, rel, holder)
	if errors.Is(err, errHeld) {
		return nil, &LockedError{Store: d.String(), Holder: other}
	}
	if err != nil {
		return nil, err
	}
	return &fileLease{f: f, lost: make(chan struct{})}, nil
}

// fileLease is a held flock: never lost while the process lives.
type fileLease struct {
	f    *os.File
	lost chan struct{}
	once sync.Once
}

func (l *fileLease) Lost() <-chan struct{} { return l.lost }
func (l *fileLease) Err() error            { return nil }
func (l *fileLease) Previous() *Holder     { return nil }
func (l *fileLease) Release(context.Context) error {
	var err error
	l.once.Do(func() { err = l.f.Close() })
	return err
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
