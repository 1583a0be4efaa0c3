package snapshot

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openNative opens the Tree's folder for the kernel to resolve names
// beneath it (beneath), or, on kernels without openat2 (before Linux 5.6),
// for os.Root to (rooted).
func openNative(t *Tree) (resolver, error) {
	b, err := openBeneath(t)
	if errors.Is(err, syscall.ENOSYS) {
		return openRooted(t)
	}
	return b, err
}

// beneath resolves names with openat2(RESOLVE_BENEATH), which the kernel
// confines to the folder, and RESOLVE_NO_SYMLINKS unless links are
// followed. Its files are bare descriptors, not *os.File: os.Open
// registers every file with the runtime's poller, a system call that
// always fails for regular files and costs as much as a small file's
// read. An open file is hard-linked through its descriptor (LinkTo).
type beneath struct {
	t       *Tree
	root    int // the folder, O_PATH
	folders openFolders[int]
}

// openBeneath opens the Tree's folder, and fails with ENOSYS where the
// kernel has no openat2.
func openBeneath(t *Tree) (*beneath, error) {
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = syscall.Open(t.dir, unix.O_PATH|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: t.dir, Err: err}
	}
	b := &beneath{t: t, root: fd}
	b.folders.open = func(dir string) (int, error) {
		return b.openat(dir, unix.O_PATH|syscall.O_DIRECTORY|syscall.O_CLOEXEC)
	}
	b.folders.close = func(fd int) { syscall.Close(fd) }
	probe, err := b.openat(".", unix.O_PATH|syscall.O_DIRECTORY|syscall.O_CLOEXEC)
	if err != nil {
		syscall.Close(fd)
		return nil, err
	}
	syscall.Close(probe)
	return b, nil
}

func (b *beneath) close() error {
	b.folders.closeAll()
	return syscall.Close(b.root)
}

// open opens the file name. When links are not followed it opens the
// file by its base name, beneath its folder kept open for the next files
// (openFolders): a cold build opens every file, and resolving one name
// costs less than resolving the whole path. A followed link may lead
// anywhere in the Tree, so then the whole name is resolved beneath it.
func (b *beneath) open(name string) (fs.File, error) {
	if b.t.follow || name == "." {
		return b.openIn(b.root, name)
	}
	folder, err := b.folders.acquire(path.Dir(name))
	if err != nil {
		return nil, err
	}
	defer b.folders.release(folder)
	return b.openIn(folder.h, name)
}

// openIn opens the file name in the open folder dir, by its base name, or
// by its whole name beneath the Tree when links are followed (or name is
// the Tree's folder).
func (b *beneath) openIn(dir int, name string) (fs.File, error) {
	// O_NONBLOCK: a file replaced by a FIFO after the walk saw a regular
	// file must not block the scan; regular files ignore the flag.
	const flags = syscall.O_RDONLY | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	var fd int
	var err error
	if b.t.follow || name == "." {
		fd, err = b.openat(name, flags)
	} else {
		fd, err = b.openBeneath(dir, path.Base(name), name, flags)
	}
	if err != nil {
		return nil, err
	}
	return &rawFile{fd: fd, tree: b.t, rel: name}, nil
}

// openDir opens the folder dir for the files of one read job (see
// Tree.openDir); when links are followed every name is resolved whole,
// and no folder is opened.
func (b *beneath) openDir(dir string) (dirFiles, error) {
	if b.t.follow {
		return beneathDir{b: b, fd: -1}, nil
	}
	fd, err := b.openat(dir, unix.O_PATH|syscall.O_DIRECTORY|syscall.O_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return beneathDir{b: b, fd: fd}, nil
}

// beneathDir is a folder opened by openDir.
type beneathDir struct {
	b  *beneath
	fd int
}

func (d beneathDir) open(name string) (fs.File, error) { return d.b.openIn(d.fd, name) }

func (d beneathDir) close() {
	if d.fd >= 0 {
		syscall.Close(d.fd)
	}
}

func (b *beneath) readDir(name string) ([]fs.DirEntry, error) {
	fd, err := b.openat(name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), b.t.join(name))
	defer f.Close()
	return f.ReadDir(-1)
}

// list reads the folder name with getdents and, where asked, fstatats
// its entries relative to the descriptor it read: one resolution of the
// folder's name beneath the Tree for the listing and every stat, and no
// allocation per entry beyond its share of one buffer of paths.
func (b *beneath) list(name string, stat bool) ([]folderEntry, error) {
	fd, err := b.openat(name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	entries, unknown, err := readDirents(fd, name)
	if err != nil {
		return nil, &fs.PathError{Op: "readdirent", Path: b.t.join(name), Err: err}
	}
	kept := entries[:0]
	for i := range entries {
		e := entries[i]
		if !unknown[i] && !(stat && e.mode.IsRegular()) {
			kept = append(kept, e)
			continue
		}
		var st unix.Stat_t
		err := ignoringEINTR(func() error { return unix.Fstatat(fd, e.name(), &st, unix.AT_SYMLINK_NOFOLLOW) })
		if unknown[i] {
			// A file system that does not say the type in the listing
			// (as os.ReadDir, drop what is gone, fail on the rest).
			switch {
			case errors.Is(err, syscall.ENOENT):
				continue
			case err != nil:
				return nil, &fs.PathError{Op: "lstat", Path: b.t.join(e.path), Err: err}
			}
			e.mode = (&fileInfo{st: *(*syscall.Stat_t)(unsafe.Pointer(&st))}).Mode().Type()
		}
		if stat && e.mode.IsRegular() {
			e.statted = true
			if err != nil {
				e.statErr = &fs.PathError{Op: "lstat", Path: b.t.join(e.path), Err: err}
			} else {
				e.stat = Stat{Size: st.Size, ModTime: st.Mtim.Nano(), Inode: st.Ino}
			}
		}
		kept = append(kept, e)
	}
	return kept, nil
}

// direntBuffers hold the getdents buffers of the folders being listed.
var direntBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// readDirents reads the entries of the open folder fd, whose name in the
// Tree is dir, but "." and "..", with their types as getdents gives them;
// unknown[i] says that entry i's type is not given (DT_UNKNOWN).
func readDirents(fd int, dir string) (entries []folderEntry, unknown []bool, err error) {
	bufp := direntBuffers.Get().(*[]byte)
	defer direntBuffers.Put(bufp)
	buf := *bufp
	var paths []byte // every entry's path, end to end: one string in the end
	var ends []int
	for {
		var n int
		err := ignoringEINTR(func() (err error) {
			n, err = unix.Getdents(fd, buf)
			return err
		})
		if err != nil {
			return nil, nil, err
		}
		if n <= 0 {
			break
		}
		// Room for every entry of the buffer at once: a folder of a
		// hundred files grew each slice seven times.
		count := 0
		for off := 0; off < n; off += int((*unix.Dirent)(unsafe.Pointer(&buf[off])).Reclen) {
			count++
		}
		entries, unknown, ends = slices.Grow(entries, count), slices.Grow(unknown, count), slices.Grow(ends, count)
		paths = slices.Grow(paths, n+count*(len(dir)+1))
		for off := 0; off < n; {
			d := (*unix.Dirent)(unsafe.Pointer(&buf[off]))
			rec := buf[off : off+int(d.Reclen)]
			off += int(d.Reclen)
			name := rec[unsafe.Offsetof(unix.Dirent{}.Name):]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if d.Ino == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			if dir != "." {
				paths = append(append(paths, dir...), '/')
			}
			paths = append(paths, name...)
			ends = append(ends, len(paths))
			mode, known := direntMode(d.Type)
			entries = append(entries, folderEntry{mode: mode})
			unknown = append(unknown, !known)
		}
	}
	all, start := string(paths), 0
	for i := range entries {
		entries[i].path, start = all[start:ends[i]], ends[i]
	}
	return entries, unknown, nil
}

// direntMode returns the type bits of an entry of getdents' type t, and
// false for DT_UNKNOWN.
func direntMode(t uint8) (fs.FileMode, bool) {
	switch t {
	case unix.DT_REG:
		return 0, true
	case unix.DT_DIR:
		return fs.ModeDir, true
	case unix.DT_LNK:
		return fs.ModeSymlink, true
	case unix.DT_FIFO:
		return fs.ModeNamedPipe, true
	case unix.DT_SOCK:
		return fs.ModeSocket, true
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case unix.DT_BLK:
		return fs.ModeDevice, true
	}
	return 0, false
}

// lstat stats the entry base of the folder dir without following a final
// link, as os.Lstat does, relative to the folder's descriptor: a rebuild
// stats every file, and resolving one name costs less than resolving the
// whole path. A link on the way to the folder is refused as Open refuses
// it.
func (b *beneath) lstat(dir, base string) (fs.FileInfo, error) {
	folder, err := b.folders.acquire(dir)
	if err != nil {
		return nil, err
	}
	defer b.folders.release(folder)
	fi := &fileInfo{name: base}
	// unix.Stat_t and syscall.Stat_t are the same kernel struct; os and
	// the rest of rsgen read syscall's.
	st := (*unix.Stat_t)(unsafe.Pointer(&fi.st))
	err = ignoringEINTR(func() error { return unix.Fstatat(folder.h, base, st, unix.AT_SYMLINK_NOFOLLOW) })
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: b.t.join(path.Join(dir, base)), Err: err}
	}
	return fi, nil
}

// openat opens name beneath the folder.
func (b *beneath) openat(name string, flags int) (int, error) {
	return b.openBeneath(b.root, name, name, flags)
}

// openBeneath opens rel beneath the open folder dir, which is the Tree's
// folder or one inside it; name is rel's name in the Tree.
func (b *beneath) openBeneath(dir int, rel, name string, flags int) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	if !b.t.follow {
		how.Resolve |= unix.RESOLVE_NO_SYMLINKS
	}
	var fd int
	var err error
	// EAGAIN: a name through ".." (a followed link's) met a rename
	// anywhere on the system, and the kernel could not tell that it stayed
	// beneath; it asks to try again, which on a busy machine is needed.
	for tries := 0; tries == 0 || errors.Is(err, syscall.EAGAIN) && tries < maxBeneathTries; tries++ {
		err = ignoringEINTR(func() (err error) {
			fd, err = unix.Openat2(dir, rel, &how)
			return err
		})
	}
	switch {
	case errors.Is(err, syscall.ENOSYS):
		return -1, err
	case errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.ELOOP) && !b.t.follow:
		return -1, &fs.PathError{Op: "open", Path: b.t.join(name), Err: ErrOutside}
	case err != nil:
		return -1, &fs.PathError{Op: "open", Path: b.t.join(name), Err: err}
	}
	return fd, nil
}

// maxBeneathTries bounds the tries of an openat2 the kernel asks to try
// again (EAGAIN).
const maxBeneathTries = 64

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

// LinkTo hard-links the open file at dst, which must not exist.
// Fd returns the file's descriptor, for a clone of the file
// (sink.CloneTemp): what is cloned is the file that was opened.
func (f *rawFile) Fd() uintptr { return uintptr(f.fd) }

func (f *rawFile) LinkTo(dst string) error { return linkDescriptor(f.fd, f.name(), dst) }

// LinkInto hard-links the open file at name in the open folder dir, which
// must not hold it, through /proc's name of the descriptor.
func (f *rawFile) LinkInto(dir *os.File, name string) error {
	conn, err := dir.SyscallConn()
	if err == nil {
		cerr := conn.Control(func(d uintptr) { err = linkDescriptorAt(f.fd, int(d), name) })
		err = cmp.Or(cerr, err)
	}
	if err != nil {
		return &os.LinkError{Op: "link", Old: f.name(), New: filepath.Join(dir.Name(), name), Err: err}
	}
	return nil
}

// linkDescriptor hard-links the open file fd, whose path is name, at dst,
// which must not exist, through /proc's name of the descriptor.
func linkDescriptor(fd int, name, dst string) error {
	if err := linkDescriptorAt(fd, unix.AT_FDCWD, dst); err != nil {
		return &os.LinkError{Op: "link", Old: name, New: dst, Err: err}
	}
	return nil
}

// linkDescriptorAt hard-links the open file fd at dst, relative to the
// open folder dir (or the working folder, AT_FDCWD).
func linkDescriptorAt(fd, dir int, dst string) error {
	fds, err := procFDs()
	if err != nil {
		return err
	}
	return unix.Linkat(fds, strconv.Itoa(fd), dir, dst, unix.AT_SYMLINK_FOLLOW)
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
