package sink

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rsgen/rsgen/layout"
)

// FoldsCase reports whether the file system of the folder dir, which it
// makes if missing, holds names that differ only in case as one name, as
// macOS and Windows do by default: there two source files named so would
// be published as one file. It tells by making a temporary file and
// looking for it under its name in capitals.
func FoldsCase(dir string) (bool, error) {
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
