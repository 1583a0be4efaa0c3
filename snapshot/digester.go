package snapshot

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"hash"

	"github.com/rsgen/rsgen/rs"
)

// Digester computes the published digests of the bytes written to it: the
// one place where rsgen's digest algorithms are made. The scan's hasher
// uses one per worker; the generator one for the bytes it publishes other
// than a source file's (html_link rewrites, patches).
type Digester struct {
	algs    []rs.HashAlgorithm
	digests [rs.NumHashAlgorithms]hash.Hash
}

// NewDigester returns a Digester of algs.
func NewDigester(algs []rs.HashAlgorithm) *Digester {
	d := &Digester{algs: algs}
	for _, a := range algs {
		switch a {
		case rs.MD5:
			d.digests[a] = md5.New()
		case rs.SHA1:
			d.digests[a] = sha1.New()
		case rs.SHA256:
			d.digests[a] = sha256.New()
		}
	}
	return d
}

// Write feeds p to every digest.
func (d *Digester) Write(p []byte) (int, error) {
	for _, a := range d.algs {
		d.digests[a].Write(p)
	}
	return len(p), nil
}

// Reset starts the digests afresh.
func (d *Digester) Reset() {
	for _, a := range d.algs {
		d.digests[a].Reset()
	}
}

// Digests returns the digests of the bytes written so far.
func (d *Digester) Digests() Digests {
	var out Digests
	for _, a := range d.algs {
		var sum [sha256.Size]byte
		out.Set(a, d.digests[a].Sum(sum[:0]))
	}
	return out
}

// AllAlgorithms are every algorithm rsgen can publish.
var AllAlgorithms = []rs.HashAlgorithm{rs.MD5, rs.SHA1, rs.SHA256}

// DigestsOf returns the digests of data in every algorithm.
func DigestsOf(data []byte) Digests {
	d := NewDigester(AllAlgorithms)
	d.Write(data)
	return d.Digests()
}
