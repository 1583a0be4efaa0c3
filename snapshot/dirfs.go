package snapshot

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// DirFS returns the file tree rooted at dir, like os.DirFS but able to open
// every name a walk of it returns. os.DirFS refuses names that are not
// valid UTF-8, which Linux file systems hold and which rsgen publishes
// percent-encoded. Names that would leave dir ("..", absolute paths) are
// refused.
func DirFS(dir string) fs.FS { return dirFS(dir) }

type dirFS string

func (d dirFS) Open(name string) (fs.File, error) {
	if !validPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	// O_NONBLOCK: a file replaced by a FIFO after the walk saw a regular
	// file must not block the scan; regular files ignore the flag.
	f, err := os.OpenFile(filepath.Join(string(d), filepath.FromSlash(name)), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	return f, nil
}

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
