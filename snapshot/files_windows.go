package snapshot

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"

	"github.com/rsgen/rsgen/layout"
	"golang.org/x/sys/windows"
)

// unnamedFile makes a file in the folder dir that Windows deletes when its
// last handle is closed, however the process ends. (Windows cannot remove
// an open file that was not opened to allow it, which os.CreateTemp's are
// not.)
func unnamedFile(dir string) (*os.File, error) {
	var random [8]byte
	rand.Read(random[:])
	path := filepath.Join(dir, layout.TempPrefix+"records-"+hex.EncodeToString(random[:]))
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ|windows.GENERIC_WRITE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.CREATE_NEW,
		windows.FILE_ATTRIBUTE_TEMPORARY|windows.FILE_FLAG_DELETE_ON_CLOSE, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}
