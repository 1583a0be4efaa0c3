//go:build !linux

package sink

import "os"

// syncOutput is nil: no other system syncs one file system and reports
// its write-back errors (sync(2) on the BSDs and macOS only schedules the
// writes), so every file is synced on its own (see syncNow).
var syncOutput func(d *os.File) error
