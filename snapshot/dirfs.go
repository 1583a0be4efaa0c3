package snapshot

import (
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// DirFS returns the file tree rooted at dir, like os.DirFS but able to open
// every name a walk of it returns. os.DirFS refuses names that are not
// valid UTF-8, which Linux file systems hold and which rsgen publishes
// percent-encoded. Names that would leave dir ("..", absolute paths) are
// refused.
func DirFS(dir string) fs.FS { return dirFS(dir) }

type dirFS string

// Open opens a file for reading. The file is a bare descriptor, not an
// *os.File: os.Open registers every file with the runtime's poller, a
// system call that always fails for regular files and costs as much as a
// small file's read. Folders are read with ReadDir.
func (d dirFS) Open(name string) (fs.File, error) {
	if !validPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	// O_NONBLOCK: a file replaced by a FIFO after the walk saw a regular
	// file must not block the scan; regular files ignore the flag.
	full := d.join(name)
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = syscall.Open(full, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: full, Err: err}
	}
	return &rawFile{fd: fd, name: full}, nil
}

// ReadDir reads a folder, sorted by name, as os.DirFS does.
func (d dirFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !validPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	return os.ReadDir(d.join(name))
}

func (d dirFS) join(name string) string { return filepath.Join(string(d), filepath.FromSlash(name)) }

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

// rawFile is an open file read with plain system calls.
type rawFile struct {
	fd   int
	name string
}

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
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: err}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (f *rawFile) Stat() (fs.FileInfo, error) {
	fi := &fileInfo{name: path.Base(filepath.ToSlash(f.name))}
	if err := ignoringEINTR(func() error { return syscall.Fstat(f.fd, &fi.st) }); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: f.name, Err: err}
	}
	return fi, nil
}

func (f *rawFile) Close() error {
	if f.fd < 0 {
		return &fs.PathError{Op: "close", Path: f.name, Err: fs.ErrClosed}
	}
	err := syscall.Close(f.fd)
	f.fd = -1
	if err != nil {
		return &fs.PathError{Op: "close", Path: f.name, Err: err}
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
