//go:build !linux

package sink

import "errors"

// cloneFile clones nothing here: the callers copy instead (see the Linux
// version).
func cloneFile(dst, src uintptr) error { return errors.ErrUnsupported }
