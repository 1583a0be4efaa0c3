//go:build unix

package destination

import "syscall"

// The flags of the portable way's opens (dir.go).
const (
	openDirectory = syscall.O_DIRECTORY
	openNoFollow  = syscall.O_NOFOLLOW
)
