package snapshot

import (
	"encoding/hex"
	"time"

	"github.com/rsgen/rsgen/rs"
)

// Record is what the snapshot knows of one published file.
type Record struct {
	Path    string // slash-separated, relative to the source root
	Size    int64
	ModTime int64 // nanoseconds since the Unix epoch
	Inode   uint64
	// Fingerprint is the SHA-256 of the source file's bytes, computed
	// whether or not SHA-256 is published; zero when unknown (a recovered
	// record, or one migrated from format 3 without a SHA-256 of its own
	// bytes), which SameContent compares by its published digests.
	Fingerprint [32]byte
	Digests     Digests
	Type        string // media type, without parameters
	Seen        int64  // Unix seconds when this content was first seen
	// Rewritten marks a file published with other bytes than its source's
	// (html_link): its Size and Digests describe the published bytes, and
	// a later build that no longer rewrites it must read it again.
	Rewritten bool
	// Placed marks a record whose file a Tee already put in the output
	// while the scan read it. It is never saved.
	Placed bool
	// Change is what the scan found: Created or Updated when this build
	// publishes a new version of the file, 0 when it does not. It is
	// never saved.
	Change Change
	// Unchanged marks a record the scan found equal to the previous one,
	// stat and bytes (so the output's copy of the file can be trusted).
	// It is never saved.
	Unchanged bool
}

// Lastmod returns the lastmod rsgen publishes for the record: when the
// content was first seen, or the file's modification time.
func (r *Record) Lastmod(fromMtime bool) time.Time {
	if fromMtime {
		return time.Unix(0, r.ModTime).UTC().Truncate(time.Second)
	}
	return time.Unix(r.Seen, 0).UTC()
}

var digestSizes = [rs.NumHashAlgorithms]int{16, 20, 32}

// Digests holds the published digests of one content.
type Digests struct {
	Has    uint8 // bit a set when the digest of algorithm a is present
	MD5    [16]byte
	SHA1   [20]byte
	SHA256 [32]byte
}

// sum returns the storage of algorithm a's digest.
func (d *Digests) sum(a rs.HashAlgorithm) []byte {
	switch a {
	case rs.MD5:
		return d.MD5[:]
	case rs.SHA1:
		return d.SHA1[:]
	}
	return d.SHA256[:]
}

// has reports whether d holds the digest of algorithm a.
func (d *Digests) has(a rs.HashAlgorithm) bool { return d.Has&(1<<a) != 0 }

// HasAll reports whether d holds a digest for each of algs.
func (d *Digests) HasAll(algs []rs.HashAlgorithm) bool {
	for _, a := range algs {
		if !d.has(a) {
			return false
		}
	}
	return true
}

// AppendHash appends the rs:md hash attribute value for algs: "alg:hex"
// pairs separated by spaces, lowercase hex.
func (d *Digests) AppendHash(b []byte, algs []rs.HashAlgorithm) []byte {
	for i, a := range algs {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, a.String()...)
		b = append(b, ':')
		b = hex.AppendEncode(b, d.sum(a))
	}
	return b
}

// Hash returns the rs:md hash attribute value for algs.
func (d *Digests) Hash(algs []rs.HashAlgorithm) string {
	return string(d.AppendHash(nil, algs))
}
