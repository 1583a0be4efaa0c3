package destination

import (
	"crypto/rand"
	"encoding/hex"
)

// A fetch writes its file where nobody sees it and puts it in place in
// one step. Where the file system can, the file is created without a name
// (O_TMPFILE) in the folder it belongs to, and linked to its name once
// verified: a kill before leaves nothing behind, and a new file costs no
// more than creating it in place. A file that replaces another is linked
// to a temporary name beside it, then renamed over it; a kill between the
// two leaves that name, which the next sync removes (removeTemps). Where
// the file system cannot, and on systems other than Linux, every file is
// written under a temporary name and renamed.

// tempName returns a new temporary name.
func tempName() string {
	var b [8]byte
	rand.Read(b[:])
	return tempPrefix + hex.EncodeToString(b[:])
}
