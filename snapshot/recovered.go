package snapshot

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/rsgen/rsgen/rs"
)

// A recovered record is one rebuilt from the published documents rather
// than from a scan (see generator's state recovery): it knows the file's
// path, length, published digests, media type and lastmod, but not its
// fingerprint, inode or modification time. Such a record is never trusted
// without reading the file (Known), and the file it describes is compared
// by its published digests instead of its fingerprint (SameContent), so
// that recovering the state does not turn every resource into an update.
// A record migrated from a state format whose fingerprint cannot be
// converted is treated the same way.

// Known reports whether r has a fingerprint: whether a scan may trust it
// by its stat, and compare a file to it by its fingerprint.
func (r *Record) Known() bool { return r.fingerprintIsSHA256 || r.source != nil }

// SameContent reports whether cur, a file as just scanned, publishes the
// content that prev, its previous record, describes: equal fingerprints
// and equal published length and digests (a file rewritten for publishing,
// see Record.Rewritten, can publish other bytes from the same content);
// or, for a prev without a fingerprint (see Known), equal length and
// every published digest the two have in common (there must be at least
// one). Digests of algorithms only one of them has are not compared, so
// that adding an algorithm changes nothing.
func SameContent(prev, cur *Record) bool {
	if prev.Known() && prev.Fingerprint() != cur.Fingerprint() {
		return false
	}
	if prev.Size != cur.Size {
		return false
	}
	common := prev.Digests.Has() & cur.Digests.Has()
	if common == 0 {
		return prev.Known()
	}
	for a := rs.HashAlgorithm(0); a < rs.NumHashAlgorithms; a++ {
		if common&(1<<a) != 0 && string(prev.Digests.Sum(a)) != string(cur.Digests.Sum(a)) {
			return false
		}
	}
	return true
}

// ParseHash reads an rs:md hash attribute value ("alg:hex" pairs separated
// by spaces, as AppendHash writes them). Algorithms rsgen does not publish
// are ignored; a malformed pair of a known algorithm is an error.
func ParseHash(s string) (Digests, error) {
	var d Digests
	for _, pair := range strings.Fields(s) {
		name, digest, ok := strings.Cut(pair, ":")
		if !ok {
			return Digests{}, fmt.Errorf("hash %q: want alg:hex", pair)
		}
		a, known := rs.ParseHashAlgorithm(name)
		if !known {
			continue
		}
		sum, err := hex.DecodeString(digest)
		if err != nil || len(sum) != digestSizes[a] {
			return Digests{}, fmt.Errorf("hash %q: not a %s digest", pair, name)
		}
		d.Set(a, sum)
	}
	return d, nil
}
