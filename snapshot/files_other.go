//go:build !linux && !windows

package snapshot

import (
	"errors"
	"os"
)

// unnamedFile fails: the system has no O_TMPFILE, and a temporary file
// removed at once does as well.
func unnamedFile(dir string) (*os.File, error) { return nil, errors.ErrUnsupported }
