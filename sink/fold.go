package sink

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/rsgen/rsgen/layout"
)

// FoldsCase reports whether the file system of the output folder dir,
// which it makes if missing, holds names that differ only in case as one
// name, as macOS's and Windows' do by default: there two source files
// named so would be published as one file. It asks only on those systems
// (probeCase): elsewhere the file systems of an output tell case apart,
// and a build leaves the output folder's entries as they were.
func FoldsCase(dir string) (bool, error) {
	if !probeCase {
		return false, nil
	}
	return foldsCase(dir)
}

// probeCase is whether FoldsCase asks the file system.
var probeCase = runtime.GOOS == "darwin" || runtime.GOOS == "windows"

// foldsCase tells whether the file system of dir folds case by making a
// temporary file and looking for it under its name in capitals.
func foldsCase(dir string) (bool, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("output folder: %w", err)
	}
	f, err := os.CreateTemp(dir, layout.TempPrefix+"case-*")
	if err != nil {
		return false, fmt.Errorf("output folder: %w", err)
	}
	name := f.Name()
	defer os.Remove(name)
	info, err := f.Stat()
	f.Close()
	if err != nil {
		return false, fmt.Errorf("output folder: %w", err)
	}
	upper, err := os.Stat(filepath.Join(dir, strings.ToUpper(filepath.Base(name))))
	return err == nil && os.SameFile(info, upper), nil
}
