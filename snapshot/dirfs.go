package snapshot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Tree is a folder opened for reading as an fs.FS, like os.DirFS but with
// three differences that matter to rsgen:
//
//   - Every name is resolved beneath the folder, and through no symbolic
//     link at all unless links are followed: a file or folder swapped for
//     a link while a build runs cannot make rsgen read, link or publish
//     anything outside the source. (A followed link must stay inside it.)
//     On Linux the kernel resolves names so (openat2 with RESOLVE_BENEATH,
//     see beneath); elsewhere, and on kernels before 5.6, os.Root does,
//     one component at a time (see rooted).
//   - It opens every name a walk of it returns: os.DirFS refuses names
//     that are not valid UTF-8, which Linux file systems hold and rsgen
//     publishes percent-encoded.
//   - An open file can be hard-linked elsewhere (Linker), so that what is
//     linked is what was read.
//
// Names that would leave the folder ("..", absolute paths) are refused.
// Close releases the folder.
type Tree struct {
	dir    string
	follow bool
	names  resolver
}

// A resolver opens names beneath a Tree's folder, as the Tree's methods
// say; the names it is given are valid (validPath).
type resolver interface {
	open(name string) (fs.File, error)
	readDir(name string) ([]fs.DirEntry, error)
	lstat(dir, base string) (fs.FileInfo, error)
	// list reads the folder name, unsorted, as Tree.list says.
	list(name string, stat bool) ([]folderEntry, error)
	// openDir opens the folder dir for the reads of one job (openDir).
	openDir(dir string) (dirFiles, error)
	close() error
}

// OpenTree opens the folder dir; with followSymlinks, names may go
// through symbolic links whose targets stay inside it.
func OpenTree(dir string, followSymlinks bool) (*Tree, error) {
	return openTreeWith(dir, followSymlinks, openNative)
}

// openTreeWith opens the folder dir with the resolver open makes: openNative,
// the system's best, or openRooted, which every system has.
func openTreeWith(dir string, follow bool, open func(t *Tree) (resolver, error)) (*Tree, error) {
	t := &Tree{dir: dir, follow: follow}
	names, err := open(t)
	if err != nil {
		return nil, err
	}
	t.names = names
	return t, nil
}

// Close releases the folder; files opened from it stay usable.
func (t *Tree) Close() error {
	if t.names == nil {
		return nil
	}
	err := t.names.close()
	t.names = nil
	return err
}

// Dir returns the folder's path.
func (t *Tree) Dir() string { return t.dir }

// Open opens a file for reading. A name that a symbolic link (followed or
// not) would take outside the folder fails with ErrOutside. A file that
// is a FIFO, though the walk saw a regular file, is opened without
// blocking, and its read fails.
func (t *Tree) Open(name string) (fs.File, error) {
	if !validPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return t.names.open(name)
}

// ReadDir reads a folder, sorted by name, as os.DirFS does. An entry's
// Info stats it beneath the Tree, as Lstat does.
func (t *Tree) ReadDir(name string) ([]fs.DirEntry, error) {
	if !validPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	entries, err := t.names.readDir(name)
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

// folderEntry is one entry of a folder, as Tree.list reads it.
type folderEntry struct {
	path string      // the entry's name in the Tree: its folder's, a slash, its own
	mode fs.FileMode // the entry's type bits, as the folder's listing gives them
	// stat is a regular file's, taken when the listing stats, unless
	// statErr says why not (fs.ErrNotExist: removed since the listing).
	stat    Stat
	statErr error
	statted bool
}

// name returns the entry's name in its folder.
func (e *folderEntry) name() string { return e.path[strings.LastIndexByte(e.path, '/')+1:] }

// list reads the folder name, sorted by name, as ReadDir does, and, with
// stat, lstats each regular file in it: relative to the folder it read
// (never its path again, which a folder swapped for a link since would
// take elsewhere), with one open of the folder for the listing and every
// stat. The scan's folder readers list a tree's folders so, several at
// once (see folderReaders).
func (t *Tree) list(name string, stat bool) ([]folderEntry, error) {
	if !validPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	entries, err := t.names.list(name, stat)
	if err != nil {
		return nil, err
	}
	sortEntries(entries)
	return entries, nil
}

// listFS lists the folder dir of any fs.FS as Tree.list lists a Tree's,
// through fs.ReadDir and each entry's Info; the entries read before an
// error are returned with it, as fs.ReadDir returns them.
func listFS(fsys fs.FS, dir string, stat bool) ([]folderEntry, error) {
	read, err := fs.ReadDir(fsys, dir)
	entries := make([]folderEntry, 0, len(read))
	for _, d := range read {
		e := folderEntry{path: inFolder(dir, d.Name()), mode: d.Type()}
		if stat && e.mode.IsRegular() {
			e.statted = true
			if info, serr := d.Info(); serr != nil {
				e.statErr = serr
			} else {
				e.stat = StatOf(info)
			}
		}
		entries = append(entries, e)
	}
	sortEntries(entries)
	return entries, err
}

// sortEntries sorts a folder's entries by name, as fs.ReadDir does: the
// walk's order.
func sortEntries(entries []folderEntry) {
	slices.SortFunc(entries, func(a, b folderEntry) int { return strings.Compare(a.path, b.path) })
}

// inFolder returns the name in a Tree of the entry base of the folder dir.
func inFolder(dir, base string) string {
	if dir == "." {
		return base
	}
	return dir + "/" + base
}

// dirFiles opens the files of one folder of a Tree, which it opened once
// for them all.
type dirFiles interface {
	open(name string) (fs.File, error) // name: in the Tree, in the folder
	close()
}

// openDir opens the folder dir for the files of one read job of a scan:
// the files of one folder that one worker reads, one after the other.
// It opens them as Open does, beneath the folder, opened once for them
// all rather than looked up among the folders kept open (openFolders),
// whose lock every worker would take for every file.
func (t *Tree) openDir(dir string) (*treeDir, error) {
	if !validPath(dir) {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: fs.ErrInvalid}
	}
	files, err := t.names.openDir(dir)
	if err != nil {
		return nil, err
	}
	return &treeDir{files: files}, nil
}

// treeDir is a folder of a Tree opened by openDir: an fs.FS of the names
// in the Tree of the files in that folder. Close releases the folder.
type treeDir struct{ files dirFiles }

func (d *treeDir) Open(name string) (fs.File, error) {
	if !validPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return d.files.open(name)
}

func (d *treeDir) Close() { d.files.close() }

// treeEntry is an entry of a folder of a Tree.
type treeEntry struct {
	fs.DirEntry
	tree *Tree
	dir  string // the folder's name in the Tree
}

// Info stats the entry beneath the Tree. (The os package's entry would
// lstat the full path, resolving every folder on the way again, and
// through a folder swapped for a link since it was read.)
func (e *treeEntry) Info() (fs.FileInfo, error) { return e.tree.names.lstat(e.dir, e.Name()) }

// openFolders keeps the folders of the last files stat'ed or opened open,
// so that a scan's stats and reads, which come folder by folder from a few
// goroutines, open each folder about once. A folder is closed when it
// falls out of the most recent keptFolders and no stat or open uses it.
// A folder renamed while it is kept is still the one found beneath the
// Tree, as a file opened before its folder was renamed is. H is how a
// resolver holds an open folder.
type openFolders[H any] struct {
	open  func(dir string) (H, error)
	close func(H)

	mu   sync.Mutex
	list []*openFolder[H] // most recently used first
}

type openFolder[H any] struct {
	name  string
	h     H
	users int
}

const keptFolders = 8

// acquire returns the open folder dir, opening it if it is not open.
func (o *openFolders[H]) acquire(dir string) (*openFolder[H], error) {
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
	h, err := o.open(dir)
	if err != nil {
		return nil, err
	}
	f := &openFolder[H]{name: dir, h: h, users: 1}
	o.list = slices.Insert(o.list, 0, f)
	o.closeUnused()
	return f, nil
}

// release ends a use of f.
func (o *openFolders[H]) release(f *openFolder[H]) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f.users--
	o.closeUnused()
}

// closeUnused closes the folders beyond the most recent keptFolders that
// nothing uses.
func (o *openFolders[H]) closeUnused() {
	for i := len(o.list) - 1; i >= keptFolders; i-- {
		if f := o.list[i]; f.users == 0 {
			o.close(f.h)
			o.list = slices.Delete(o.list, i, i+1)
		}
	}
}

// closeAll closes every open folder; no stat or open may be running.
func (o *openFolders[H]) closeAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, f := range o.list {
		o.close(f.h)
	}
	o.list = nil
}

// ErrOutside is returned for a name that a symbolic link takes outside
// the folder, or through any link when links are not followed.
var ErrOutside = errors.New("a symbolic link on the way (rsgen reads nothing through one it does not follow, and nothing outside the source)")

// join returns the path of name, a path in the Tree, for messages.
func (t *Tree) join(name string) string { return filepath.Join(t.dir, filepath.FromSlash(name)) }

// validPath is fs.ValidPath without its UTF-8 check, and, on Windows,
// with os.DirFS's: no backslash or colon, which Windows reads as a
// separator and a stream.
func validPath(name string) bool {
	if name == "." {
		return true
	}
	if runtime.GOOS == "windows" && strings.ContainsAny(name, `\:`) {
		return false
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
// opened from a Tree. Linking the open file, rather than the file's name
// again, links exactly the file that was read.
type Linker interface {
	LinkTo(dst string) error
}

// A FolderLinker is a Linker that links into an open folder: a build
// links the new files of one folder into one folder of the output, which
// it opens once, rather than have every link look up the whole path of
// its new name again.
type FolderLinker interface {
	Linker
	// LinkInto hard-links the open file at name, in the folder dir, where
	// nothing must be.
	LinkInto(dir *os.File, name string) error
}
