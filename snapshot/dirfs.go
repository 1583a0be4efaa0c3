package snapshot

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/rsgen/rsgen/layout"
	"golang.org/x/sys/unix"
)

// Tree is a folder opened for reading as an fs.FS, like os.DirFS but with
// three differences that matter to rsgen:
//
//   - Every name is resolved by the kernel beneath the folder (openat2
//     with RESOLVE_BENEATH), and through no symbolic link at all unless
//     links are followed: a file or folder swapped for a link while a
//     build runs cannot make rsgen read, link or publish anything outside
//     the source. (A followed link must stay inside it.)
//   - It opens every name a walk of it returns: os.DirFS refuses names
//     that are not valid UTF-8, which Linux file systems hold and rsgen
//     publishes percent-encoded.
//   - Files are bare descriptors, not *os.File: os.Open registers every
//     file with the runtime's poller, a system call that always fails for
//     regular files and costs as much as a small file's read. An open file
//     can be hard-linked elsewhere through its descriptor (Linker), so that
//     what is linked is what was read.
//
// Names that would leave the folder ("..", absolute paths) are refused.
// Close releases the folder.
type Tree struct {
	dir     string
	follow  bool
	root    int // the folder, O_PATH
	folders openFolders
}

// OpenTree opens the folder dir; with followSymlinks, names may go
// through symbolic links whose targets stay inside it.
func OpenTree(dir string, followSymlinks bool) (*Tree, error) {
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = syscall.Open(dir, unix.O_PATH|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	return &Tree{dir: dir, follow: followSymlinks, root: fd}, nil
}

// Close releases the folder; files opened from it stay usable.
func (t *Tree) Close() error {
	if t.root < 0 {
		return nil
	}
	t.folders.closeAll()
	err := syscall.Close(t.root)
	t.root = -1
	return err
}

// Dir returns the folder's path.
func (t *Tree) Dir() string { return t.dir }

// Open opens a file for reading. A name that a symbolic link (followed or
// not) would take outside the folder fails with ErrOutside.
func (t *Tree) Open(name string) (fs.File, error) {
	// O_NONBLOCK: a file replaced by a FIFO after the walk saw a regular
	// file must not block the scan; regular files ignore the flag.
	fd, err := t.openFile(name, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &rawFile{fd: fd, tree: t, rel: name}, nil
}

// openFile opens the file name. When links are not followed it opens the
// file by its base name, beneath its folder kept open for the next files
// (openFolders): a cold build opens every file, and resolving one name
// costs less than resolving the whole path. A followed link may lead
// anywhere in the Tree, so then the whole name is resolved beneath it.
func (t *Tree) openFile(name string, flags int) (int, error) {
	if t.follow || name == "." || !validPath(name) {
		return t.openat(name, flags)
	}
	folder, err := t.folders.acquire(t, path.Dir(name))
	if err != nil {
		return -1, err
	}
	defer t.folders.release(folder)
	return t.openBeneath(folder.fd, path.Base(name), name, flags)
}

// ReadDir reads a folder, sorted by name, as os.DirFS does. An entry's
// Info stats it beneath the Tree, as Lstat does.
func (t *Tree) ReadDir(name string) ([]fs.DirEntry, error) {
	fd, err := t.openat(name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), t.join(name))
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	inTree := make([]treeEntry, len(entries)) // one allocation for the folder
	for i, e := range entries {
		inTree[i] = treeEntry{DirEntry: e, tree: t, dir: name}
		entries[i] = &inTree[i]
	}
	return entries, nil
}

// treeEntry is an entry of a folder of a Tree.
type treeEntry struct {
	fs.DirEntry
	tree *Tree
	dir  string // the folder's name in the Tree
}

// Info stats the entry beneath the Tree. (The os package's entry would
// lstat the full path, resolving every folder on the way again, and
// through a folder swapped for a link since it was read.)
func (e *treeEntry) Info() (fs.FileInfo, error) { return e.tree.lstat(e.dir, e.Name()) }

// lstat stats the entry base of the folder dir without following a final
// link, as os.Lstat does, relative to the folder's descriptor: a rebuild
// stats every file, and resolving one name costs less than resolving the
// whole path. A link on the way to the folder is refused as Open refuses
// it.
func (t *Tree) lstat(dir, base string) (fs.FileInfo, error) {
	folder, err := t.folders.acquire(t, dir)
	if err != nil {
		return nil, err
	}
	defer t.folders.release(folder)
	fi := &fileInfo{name: base}
	// unix.Stat_t and syscall.Stat_t are the same kernel struct; os and
	// the rest of rsgen read syscall's.
	st := (*unix.Stat_t)(unsafe.Pointer(&fi.st))
	err = ignoringEINTR(func() error { return unix.Fstatat(folder.fd, base, st, unix.AT_SYMLINK_NOFOLLOW) })
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: t.join(path.Join(dir, base)), Err: err}
	}
	return fi, nil
}

// openFolders keeps the folders of the last files stat'ed or opened open,
// so that a scan's stats and reads, which come folder by folder from a few
// goroutines, open each folder about once. A folder is closed when it
// falls out of the most recent keptFolders and no stat or open uses it.
// A folder renamed while it is kept is still the one found beneath the
// Tree, as a file opened before its folder was renamed is.
type openFolders struct {
	mu   sync.Mutex
	list []*openFolder // most recently used first
}

type openFolder struct {
	name  string
	fd    int // O_PATH
	users int
}

const keptFolders = 8

// acquire returns the open folder dir, opening it if it is not open.
func (o *openFolders) acquire(t *Tree, dir string) (*openFolder, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, f := range o.list {
		if f.name == dir {
			copy(o.list[1:i+1], o.list[:i])
			o.list[0] = f
			f.users++
			return f, nil
		}
	}
	fd, err := t.openat(dir, unix.O_PATH|syscall.O_DIRECTORY|syscall.O_CLOEXEC)
	if err != nil {
		return nil, err
	}
	f := &openFolder{name: dir, fd: fd, users: 1}
	o.list = slices.Insert(o.list, 0, f)
	o.closeUnused()
	return f, nil
}

// release ends a use of f.
func (o *openFolders) release(f *openFolder) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f.users--
	o.closeUnused()
}

// closeUnused closes the folders beyond the most recent keptFolders that
// nothing uses.
func (o *openFolders) closeUnused() {
	for i := len(o.list) - 1; i >= keptFolders; i-- {
		if f := o.list[i]; f.users == 0 {
			syscall.Close(f.fd)
			o.list = slices.Delete(o.list, i, i+1)
		}
	}
}

// closeAll closes every open folder; no stat or open may be running.
func (o *openFolders) closeAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, f := range o.list {
		syscall.Close(f.fd)
	}
	o.list = nil
}

// ErrOutside is returned for a name that a symbolic link takes outside
// the folder, or through any link when links are not followed.
var ErrOutside = errors.New("a symbolic link on the way (rsgen reads nothing through one it does not follow, and nothing outside the source)")

// openat opens name beneath the folder.
func (t *Tree) openat(name string, flags int) (int, error) {
	if !validPath(name) {
		return -1, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return t.openBeneath(t.root, name, name, flags)
}

// openBeneath opens rel beneath the open folder dir, which is the Tree's
// folder or one inside it; name is rel's name in the Tree.
func (t *Tree) openBeneath(dir int, rel, name string, flags int) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	if !t.follow {
		how.Resolve |= unix.RESOLVE_NO_SYMLINKS
	}
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = unix.Openat2(dir, rel, &how)
		return err
	})
	switch {
	case errors.Is(err, syscall.ENOSYS):
		return t.openatByComponent(name, flags)
	case errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.ELOOP) && !t.follow:
		return -1, &fs.PathError{Op: "open", Path: t.join(name), Err: ErrOutside}
	case err != nil:
		return -1, &fs.PathError{Op: "open", Path: t.join(name), Err: err}
	}
	return fd, nil
}

// openatByComponent is openat for kernels without openat2 (before Linux
// 5.6): one openat per component, none following a link unless the Tree
// follows links; then the file opened must lie inside the folder, as
// /proc names it.
func (t *Tree) openatByComponent(name string, flags int) (int, error) {
	dir := t.root
	elems := strings.Split(name, "/")
	if name == "." {
		elems = []string{"."}
	}
	nofollow := syscall.O_NOFOLLOW
	if t.follow {
		nofollow = 0
	}
	for i, elem := range elems {
		f := unix.O_PATH | syscall.O_DIRECTORY | syscall.O_CLOEXEC | nofollow
		if i == len(elems)-1 {
			f = flags | nofollow
		}
		var fd int
		err := ignoringEINTR(func() (err error) {
			fd, err = unix.Openat(dir, elem, f, 0)
			return err
		})
		if dir != t.root {
			syscall.Close(dir)
		}
		if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.ENOTDIR) && i < len(elems)-1 {
			return -1, &fs.PathError{Op: "open", Path: t.join(name), Err: ErrOutside}
		}
		if err != nil {
			return -1, &fs.PathError{Op: "open", Path: t.join(name), Err: err}
		}
		dir = fd
	}
	if t.follow && !t.holds(dir) {
		syscall.Close(dir)
		return -1, &fs.PathError{Op: "open", Path: t.join(name), Err: ErrOutside}
	}
	return dir, nil
}

// holds reports whether the open file fd lies inside the folder.
func (t *Tree) holds(fd int) bool {
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return false
	}
	root, err := filepath.EvalSymlinks(t.dir)
	return err == nil && layout.Within(real, root)
}

func (t *Tree) join(name string) string { return filepath.Join(t.dir, filepath.FromSlash(name)) }

// validPath is fs.ValidPath without its UTF-8 check.
func validPath(name string) bool {
	if name == "." {
		return true
	}
	if name == "" || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.Contains(name, "\x00") {
		return false
	}
	for _, elem := range strings.Split(name, "/") {
		if elem == "" || elem == "." || elem == ".." {
			return false
		}
	}
	return true
}

// A Linker is an open file that can be hard-linked at a new path: a file
// opened from a Tree. Linking through the open descriptor, rather than by
// the file's name again, links exactly the file that was read.
type Linker interface {
	LinkTo(dst string) error
}

// rawFile is an open file read with plain system calls.
type rawFile struct {
	fd   int
	tree *Tree
	rel  string // the file's name in the Tree
}

// name returns the file's path, for errors: a cold build opens every file,
// and most never need it.
func (f *rawFile) name() string { return f.tree.join(f.rel) }

func (f *rawFile) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	err := ignoringEINTR(func() (err error) {
		n, err = syscall.Read(f.fd, p)
		return err
	})
	switch {
	case err != nil:
		return 0, &fs.PathError{Op: "read", Path: f.name(), Err: err}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (f *rawFile) Stat() (fs.FileInfo, error) {
	fi := &fileInfo{name: path.Base(f.rel)}
	if err := ignoringEINTR(func() error { return syscall.Fstat(f.fd, &fi.st) }); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: f.name(), Err: err}
	}
	return fi, nil
}

// Fd returns the file's descriptor, for a clone of the file
// (sink.CloneTemp): what is cloned is the file that was opened.
func (f *rawFile) Fd() uintptr { return uintptr(f.fd) }

// LinkTo hard-links the open file at dst, which must not exist, through
// /proc's name of its descriptor.
func (f *rawFile) LinkTo(dst string) error {
	fds, err := procFDs()
	if err == nil {
		err = unix.Linkat(fds, strconv.Itoa(f.fd), unix.AT_FDCWD, dst, unix.AT_SYMLINK_FOLLOW)
	}
	if err != nil {
		return &os.LinkError{Op: "link", Old: f.name(), New: dst, Err: err}
	}
	return nil
}

// procFDs is /proc/self/fd, opened once: naming a descriptor relative to
// it spares every link the lookup of /proc, self and fd, a third of the
// cost of linking a file.
var procFDs = sync.OnceValues(func() (int, error) {
	return syscall.Open("/proc/self/fd", unix.O_PATH|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
})

func (f *rawFile) Close() error {
	if f.fd < 0 {
		return &fs.PathError{Op: "close", Path: f.name(), Err: fs.ErrClosed}
	}
	err := syscall.Close(f.fd)
	f.fd = -1
	if err != nil {
		return &fs.PathError{Op: "close", Path: f.name(), Err: err}
	}
	return nil
}

func ignoringEINTR(call func() error) error {
	for {
		if err := call(); err != syscall.EINTR {
			return err
		}
	}
}

// fileInfo is the fs.FileInfo of a stat, as os builds it.
type fileInfo struct {
	name string
	st   syscall.Stat_t
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.st.Size }
func (fi *fileInfo) ModTime() time.Time { return time.Unix(fi.st.Mtim.Unix()) }
func (fi *fileInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *fileInfo) Sys() any           { return &fi.st }

func (fi *fileInfo) Mode() fs.FileMode {
	m := fs.FileMode(fi.st.Mode & 0o777)
	switch fi.st.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if fi.st.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if fi.st.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if fi.st.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
