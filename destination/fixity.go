package destination

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strings"
	"time"

	"github.com/rsgen/rsgen/rs"
)

// sums holds one digest per algorithm rsgen knows, nil where unknown.
type sums [rs.NumHashAlgorithms][]byte

// fixity is what a document says of a resource's bytes: its length (-1
// when not given), the digests it gives and its lastmod.
type fixity struct {
	length  int64
	sums    sums
	lastmod time.Time
}

// hasHash reports whether f gives at least one digest.
func (f *fixity) hasHash() bool {
	for _, s := range f.sums {
		if s != nil {
			return true
		}
	}
	return false
}

// fixityOf reads the length, hash and lastmod of an entry. A hash value
// may hold several digests separated by spaces ("md5:… sha-256:…", as
// resync writes on deletes); an algorithm rsgen cannot compute, a digest
// of the wrong length or one given twice with different values is an
// error: a resource that cannot be verified as its Source asks is not
// mirrored.
func fixityOf(md *rs.MD, lastmod time.Time) (fixity, error) {
	f := fixity{length: -1, lastmod: lastmod}
	if md.HasLength {
		f.length = md.Length
	}
	for _, field := range strings.Fields(md.Hash) {
		name, hx, ok := strings.Cut(field, ":")
		alg, known := rs.ParseHashAlgorithm(name)
		if !ok || !known {
			return f, fmt.Errorf("hash %q: rsgen sync verifies %s only", field, rs.HashNames())
		}
		sum, err := hex.DecodeString(hx)
		if err != nil || len(sum) != newHash(alg).Size() {
			return f, fmt.Errorf("hash %q is not a %s digest in hex", field, alg)
		}
		if prev := f.sums[alg]; prev != nil && !bytes.Equal(prev, sum) {
			return f, fmt.Errorf("hash %q gives two different %s digests", md.Hash, alg)
		}
		f.sums[alg] = sum
	}
	return f, nil
}

func newHash(alg rs.HashAlgorithm) hash.Hash {
	switch alg {
	case rs.MD5:
		return md5.New()
	case rs.SHA1:
		return sha1.New()
	}
	return sha256.New()
}

// MismatchError reports bytes that are not those a document promised.
type MismatchError struct {
	URL  string
	What string // "length" or an algorithm such as "sha-256"
	Want string
	Got  string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s: %s is %s, the Source lists %s", e.URL, e.What, e.Got, e.Want)
}

// verifier computes, while bytes pass through it, the digests a fixity
// gives and always SHA-256, so that the record of a mirrored file can
// answer a later list that gives another algorithm than the first.
type verifier struct {
	hashes [rs.NumHashAlgorithms]hash.Hash
	n      int64
}

// newVerifier returns a verifier of the digests want gives, and SHA-256.
func newVerifier(want *fixity) *verifier {
	v := &verifier{}
	for alg := range rs.NumHashAlgorithms {
		if want.sums[alg] != nil || alg == rs.SHA256 {
			v.hashes[alg] = newHash(alg)
		}
	}
	return v
}

func (v *verifier) Write(p []byte) (int, error) {
	for _, h := range v.hashes {
		if h != nil {
			h.Write(p)
		}
	}
	v.n += int64(len(p))
	return len(p), nil
}

// sums returns the digests of the bytes written so far.
func (v *verifier) sums() sums {
	var s sums
	for alg, h := range v.hashes {
		if h != nil {
			s[alg] = h.Sum(nil)
		}
	}
	return s
}

// check compares the bytes written with want, for the resource at url.
func (v *verifier) check(url string, want *fixity) error {
	if want.length >= 0 && v.n != want.length {
		return &MismatchError{URL: url, What: "length", Want: fmt.Sprint(want.length), Got: fmt.Sprint(v.n)}
	}
	got := v.sums()
	for alg, w := range want.sums {
		if w != nil && !bytes.Equal(got[alg], w) {
			return &MismatchError{URL: url, What: rs.HashAlgorithm(alg).String(), Want: hex.EncodeToString(w), Got: hex.EncodeToString(got[alg])}
		}
	}
	return nil
}

// hashReader reads r to its end through a verifier of want.
func hashReader(r io.Reader, want *fixity) (*verifier, error) {
	v := newVerifier(want)
	_, err := io.Copy(v, r)
	return v, err
}
