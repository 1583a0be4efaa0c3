//go:build unix

package deploy

import "syscall"

// noFollow opens no symbolic link as the last component of a name.
const noFollow = syscall.O_NOFOLLOW
