package snapshot

import "errors"

func mkfifo(path string) error { return errors.ErrUnsupported }
