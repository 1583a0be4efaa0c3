package deploy

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/rsgen/rsgen/internal/sysfile"
	"github.com/rsgen/rsgen/layout"
)

// localFile is a file of the output folder as the deploy found it.
type localFile struct {
	rel   string
	size  int64
	mtime int64 // Unix nanoseconds
	ino   uint64
	sum   [32]byte
}

// object returns what the store should hold for f under the policy.
func (f *localFile) object(policy HeaderPolicy) Object {
	return Object{Key: f.rel, Size: f.size, SHA256: f.sum, Headers: policy(f.rel)}
}

// scanResult counts what scanOutput found.
type scanResult struct {
	files       int   // files the store publishes
	hashed      int   // of them, read because their stat was new or changed
	hashedBytes int64 // their bytes
}

// scanBatch is how many files the walk hands to the hashing at a time: the
// files of a batch are hashed in parallel while the walk lists the next,
// and written to the file list in order.
const scanBatch = 1024

// scanned is a batch of the walk: files in order, and those of them whose
// SHA-256 the cache did not give.
type scanned struct {
	files, toHash []*localFile
}

// scanOutput lists the regular files of the output folder that store
// publishes, in the byte order of their paths, and writes each with its
// SHA-256 to list: the SHA-256 from cache when its stat did not change,
// else by reading the file. The build's temporary files are left out;
// other files that are not regular (symbolic links, pipes) are left out
// with a warning, and nothing is followed out of the folder.
func scanOutput(ctx context.Context, root *os.Root, publishes func(string) (bool, error), cache *hashCache, notify func(Event), list *fileListWriter) (*scanResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan scanned, 1)
	var walkErr error
	go func() {
		defer close(batches)
		walkErr = listOutput(ctx, root, publishes, cache, notify, batches)
	}()
	res := &scanResult{}
	var err error
	for b := range batches {
		if err == nil {
			if err = res.add(ctx, root, b, list); err != nil {
				cancel() // the walk stops at its next file
			}
		}
	}
	if err == nil {
		err = walkErr
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// add hashes the files of b that need it and writes b to list.
func (res *scanResult) add(ctx context.Context, root *os.Root, b scanned, list *fileListWriter) error {
	if err := hashAll(ctx, root, b.toHash); err != nil {
		return err
	}
	for _, f := range b.toHash {
		res.hashed++
		res.hashedBytes += f.size
	}
	for _, f := range b.files {
		if err := list.add(f); err != nil {
			return fmt.Errorf("scan the output: %w", err)
		}
	}
	res.files += len(b.files)
	return nil
}

// listOutput walks the output and sends its files to batches, with their
// SHA-256 when the cache has it.
func listOutput(ctx context.Context, root *os.Root, publishes func(string) (bool, error), cache *hashCache, notify func(Event), batches chan<- scanned) error {
	var b scanned
	send := func() error {
		select {
		case batches <- b:
			b = scanned{}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	err := walkOutput(root, func(rel string, d fs.DirEntry) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if ok, err := publishes(rel); err != nil || !ok {
			return err
		}
		if !d.Type().IsRegular() {
			notify(Event{Kind: EventWarning, Path: rel, Msg: "not a regular file: not deployed"})
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("scan the output: %w", err)
		}
		f := &localFile{rel: rel}
		f.setStat(info)
		var ok bool
		if f.sum, ok = cache.lookup(f); !ok {
			b.toHash = append(b.toHash, f)
		}
		b.files = append(b.files, f)
		if len(b.files) == scanBatch {
			return send()
		}
		return nil
	})
	if err == nil && len(b.files) > 0 {
		err = send()
	}
	return err
}

// walkOutput calls visit with every entry of the output folder but its
// folders, in the byte order of their paths, the order of the manifest
// and of the hash cache, so that they can be read in step. Within a
// folder the entries are sorted by name, a folder's name followed by the
// slash its files' paths have after it: "a-b" < "a.b" < "a/b" < "a0". It
// never follows a symbolic link, leaves out the build's temporary files
// (and folders), and refuses an output holding MetaDir.
func walkOutput(root *os.Root, visit func(rel string, d fs.DirEntry) error) error {
	return walkFolder(root, ".", visit)
}

func walkFolder(root *os.Root, dir string, visit func(rel string, d fs.DirEntry) error) error {
	entries, err := readFolder(root, dir)
	if err != nil {
		return fmt.Errorf("scan the output: %w", err)
	}
	for _, e := range entries {
		rel := e.Name()
		if dir != "." {
			rel = dir + "/" + rel
		}
		switch {
		case rel == MetaDir:
			return fmt.Errorf("the output holds %s, the name of the deploy's own folder on the target: rename it", rel)
		case e.IsDir():
			err = walkFolder(root, rel, visit)
		default:
			err = visit(rel, e.DirEntry)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// sortedEntry is an entry of a folder with the name it sorts by.
type sortedEntry struct {
	fs.DirEntry
	key string // the name, and a slash for a folder
}

// readFolder returns the entries of the folder dir but the build's
// temporary files, sorted as walkOutput says.
func readFolder(root *os.Root, dir string) ([]sortedEntry, error) {
	f, err := root.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	list, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	entries := make([]sortedEntry, 0, len(list))
	for _, d := range list {
		if strings.HasPrefix(d.Name(), layout.TempPrefix) {
			continue
		}
		e := sortedEntry{DirEntry: d, key: d.Name()}
		if d.IsDir() {
			e.key += "/"
		}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b sortedEntry) int { return strings.Compare(a.key, b.key) })
	return entries, nil
}

// setStat records the stat that decides whether f must be read again.
func (f *localFile) setStat(info fs.FileInfo) {
	f.size, f.mtime = info.Size(), info.ModTime().UnixNano()
	f.ino = sysfile.Inode(info)
}

// hashAll reads files with one worker per CPU and sets their SHA-256.
func hashAll(ctx context.Context, root *os.Root, files []*localFile) error {
	work := make(chan *localFile)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Go(func() {
			h := newFileHasher()
			for f := range work {
				if err := h.hash(root, f); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for _, f := range files {
		if len(errs) > 0 || ctx.Err() != nil {
			break
		}
		work <- f
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return ctx.Err()
	}
}

// fileHasher reads files through one SHA-256 and one buffer: a new
// buffer for each file, as io.Copy makes, was 32 KiB of garbage per file
// of a deploy, 32 GB at a million.
type fileHasher struct {
	h   hash.Hash
	buf []byte
}

func newFileHasher() *fileHasher { return &fileHasher{h: sha256.New(), buf: make([]byte, 64<<10)} }

// hash reads f and sets its SHA-256 and the stat of the bytes read:
// a file that changed while it was read (its size or mtime differ before
// and after) fails, for a build is then replacing it.
func (fh *fileHasher) hash(root *os.Root, f *localFile) error {
	file, err := openRegular(root, f.rel)
	if err != nil {
		return err
	}
	defer file.Close()
	before, err := file.Stat()
	if err != nil {
		return fmt.Errorf("read %s: %w", f.rel, err)
	}
	fh.h.Reset()
	// The struct hides the file's WriteTo, which would copy through a
	// buffer of its own.
	if _, err := io.CopyBuffer(fh.h, struct{ io.Reader }{file}, fh.buf); err != nil {
		return fmt.Errorf("read %s: %w", f.rel, err)
	}
	after, err := file.Stat()
	if err != nil {
		return fmt.Errorf("read %s: %w", f.rel, err)
	}
	if before.Size() != after.Size() || !before.ModTime().Equal(after.ModTime()) {
		return fmt.Errorf("read %s: %w", f.rel, errChanged)
	}
	f.setStat(after)
	fh.h.Sum(f.sum[:0])
	return nil
}

// errChanged says that an output file changed under the deploy.
var errChanged = errors.New("the file changed while the deploy read it (is a build running? deploy again once it is done)")

// openRegular opens the regular file at rel below root, never through a
// symbolic link and never a pipe or a device.
func openRegular(root *os.Root, rel string) (*os.File, error) {
	file, err := root.OpenFile(rel, os.O_RDONLY|noFollow|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", rel, err)
	}
	info, err := file.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = errors.New("not a regular file")
	}
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("read %s: %w", rel, err)
	}
	return file, nil
}
