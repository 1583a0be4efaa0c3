package zippkg

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
)

// ErrChanged is returned, inside a *ChangedError, when the bytes packaged
// for a bitstream differ in length or digest from its manifest entry: the
// file changed between the scan that produced the manifest and packaging.
var ErrChanged = errors.New("the file changed while packaging")

// ChangedError reports a bitstream whose packaged bytes do not match its
// manifest entry. The package written so far is unusable; the caller drops
// it and rescans the file.
type ChangedError struct {
	Path string // the manifest path of the bitstream
	What string // "length", an algorithm such as "sha-256", or what the opener checked
	Want string // the value when the file was scanned: the manifest's
	Got  string // the value of the bytes packaged
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("zippkg: %s: %v: %s is %s, not %s as scanned", e.Path, ErrChanged, e.What, e.Got, e.Want)
}

// Unwrap makes errors.Is(err, ErrChanged) true.
func (e *ChangedError) Unwrap() error { return ErrChanged }

// digest is one "alg:hex" value of a manifest hash attribute.
type digest struct {
	alg string
	sum []byte
}

// algorithms are the digests rsgen publishes and can check.
var algorithms = map[string]func() hash.Hash{
	"md5":     md5.New,
	"sha-1":   sha1.New,
	"sha-256": sha256.New,
}

// parseHash splits a hash attribute into digests, rejecting unknown
// algorithms, malformed hex, wrong lengths and repeated algorithms.
func parseHash(s string) ([]digest, error) {
	var ds []digest
	for _, f := range strings.Fields(s) {
		alg, hx, ok := strings.Cut(f, ":")
		newHash := algorithms[alg]
		if !ok || newHash == nil {
			return nil, fmt.Errorf("hash %q: want md5:, sha-1: or sha-256:", f)
		}
		sum, err := hex.DecodeString(hx)
		if err != nil || len(sum) != newHash().Size() {
			return nil, fmt.Errorf("hash %q: not a %s digest in hex", f, alg)
		}
		for _, d := range ds {
			if d.alg == alg {
				return nil, fmt.Errorf("hash %q: %s given twice", s, alg)
			}
		}
		ds = append(ds, digest{alg, sum})
	}
	return ds, nil
}

// Vouched wraps a bitstream whose opener vouches that its bytes are those
// its manifest entry's digests were taken of: Write checks its length, as
// of every bitstream, but does not hash it again. The opener still answers
// for a change while the bytes are read, through the error of Close, which
// Write returns. rsgen's generator vouches for a source file whose stat
// shows it is the file its scan hashed, as the scan trusts an unchanged
// file without reading it; packaging then hashes the bytes for the ZIP's
// CRC-32 and the package's digest, not for each digest once more.
func Vouched(r io.ReadCloser) io.ReadCloser { return vouched{r} }

type vouched struct{ io.ReadCloser }

func isVouched(r io.Reader) bool {
	_, ok := r.(vouched)
	return ok
}

// wanted returns the digests to check e's bitstream against: those of its
// hash attribute with verify, none without.
func wanted(e *Entry, verify bool) ([]digest, error) {
	if !verify {
		return nil, nil
	}
	return parseHash(e.Hash)
}

// verifier recomputes the digests of one bitstream as it is written. It
// keeps one hash.Hash per algorithm and resets them between bitstreams.
type verifier struct {
	hashes map[string]hash.Hash
	active []hash.Hash
	want   []digest
	n      int64
}

// reset prepares v for a bitstream with the digests want.
func (v *verifier) reset(want []digest) {
	if v.hashes == nil {
		v.hashes = make(map[string]hash.Hash, len(algorithms))
	}
	v.want, v.active, v.n = want, v.active[:0], 0
	for _, d := range want {
		h := v.hashes[d.alg]
		if h == nil {
			h = algorithms[d.alg]()
			v.hashes[d.alg] = h
		}
		h.Reset()
		v.active = append(v.active, h)
	}
}

func (v *verifier) Write(p []byte) (int, error) {
	for _, h := range v.active {
		h.Write(p)
	}
	v.n += int64(len(p))
	return len(p), nil
}

// check compares what was written with the manifest entry e.
func (v *verifier) check(e *Entry) error {
	switch {
	case v.n > e.Length: // Add reads one byte past the length at most
		return &ChangedError{Path: e.Path, What: "length", Want: fmt.Sprint(e.Length), Got: fmt.Sprint("more than ", e.Length)}
	case v.n < e.Length:
		return &ChangedError{Path: e.Path, What: "length", Want: fmt.Sprint(e.Length), Got: fmt.Sprint(v.n)}
	}
	var buf [sha256.Size]byte
	for i, d := range v.want {
		if got := v.active[i].Sum(buf[:0]); !bytes.Equal(got, d.sum) {
			return &ChangedError{Path: e.Path, What: d.alg, Want: hex.EncodeToString(d.sum), Got: hex.EncodeToString(got)}
		}
	}
	return nil
}
