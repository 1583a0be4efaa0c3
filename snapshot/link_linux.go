package snapshot

import "os"

// linkOpenFile hard-links the open file f at dst, which must not exist,
// through its descriptor (see linkDescriptor).
func linkOpenFile(f *os.File, dst string) error {
	conn, err := f.SyscallConn()
	if err != nil {
		return &os.LinkError{Op: "link", Old: f.Name(), New: dst, Err: err}
	}
	var linkErr error
	if err := conn.Control(func(fd uintptr) { linkErr = linkDescriptor(int(fd), f.Name(), dst) }); err != nil {
		return &os.LinkError{Op: "link", Old: f.Name(), New: dst, Err: err}
	}
	return linkErr
}
