package checker

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"io"
	"strconv"
	"strings"
	"sync"
)

// hashAlgs are the algorithms the checker knows, with their digest sizes.
var hashAlgs = map[string]func() hash.Hash{
	"md5":     md5.New,
	"sha-1":   sha1.New,
	"sha-256": sha256.New,
}

// digest is one alg:value of a hash attribute.
type digest struct {
	alg   string
	value string
	sum   []byte // the decoded digest, nil when it cannot be decoded
}

// hashProblem is one thing wrong with a hash attribute.
type hashProblem struct {
	rule string
	msg  string
}

// parseHash splits a hash attribute into digests and lists its problems.
// Algorithms are compared in lower case, so that a digest written MD5:
// is still verified, but clients match the names and the hex digits
// exactly: upper case and a repeated algorithm are problems of their own.
func parseHash(s string) ([]digest, []hashProblem) {
	var ds []digest
	var ps []hashProblem
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil, []hashProblem{{"hash-syntax", "hash is empty"}}
	}
	seen := map[string]bool{}
	for _, f := range fields {
		alg, val, ok := strings.Cut(f, ":")
		if !ok || alg == "" || val == "" {
			ps = append(ps, hashProblem{"hash-syntax", "hash value " + strconv.Quote(f) + " is not alg:digest"})
			continue
		}
		lower := strings.ToLower(alg)
		if lower != alg {
			ps = append(ps, hashProblem{"hash-alg-case", "hash algorithm " + strconv.Quote(alg) + " must be written in lower case, " + lower + "; clients match the name exactly"})
		}
		if seen[lower] {
			ps = append(ps, hashProblem{"hash-alg-repeated", "hash gives " + lower + " more than once; clients cannot tell which digest counts"})
		}
		seen[lower] = true
		d, p := decodeDigest(lower, val)
		ds = append(ds, d)
		if p != nil {
			ps = append(ps, *p)
		}
	}
	return ds, ps
}

func decodeDigest(alg, val string) (digest, *hashProblem) {
	d := digest{alg: alg, value: val}
	newHash, known := hashAlgs[alg]
	if !known {
		return d, &hashProblem{"hash-alg", "hash algorithm " + strconv.Quote(alg) + " is not md5, sha-1 or sha-256; clients may not check it"}
	}
	size := newHash().Size()
	if b, err := hex.DecodeString(val); err == nil {
		if len(b) != size {
			return d, &hashProblem{"hash-digest", alg + " digest has " + strconv.Itoa(len(val)) + " hex digits; want " + strconv.Itoa(2*size)}
		}
		d.sum = b
		if val != strings.ToLower(val) {
			return d, &hashProblem{"hash-hex-case", alg + " digest " + strconv.Quote(val) + " has upper-case hex digits; clients compare lower-case hex"}
		}
		return d, nil
	}
	if isHexDigits(val) {
		return d, &hashProblem{"hash-digest", alg + " digest has an odd number of hex digits"}
	}
	if b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(val, "=")); err == nil && len(b) == size {
		d.sum = b
	}
	return d, &hashProblem{"hash-encoding", alg + " digest " + strconv.Quote(val) + " is not hex-encoded"}
}

func isHexDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

// copyBuffers lends the buffers digestsOf reads through: --verify-content
// reads every resource, and a new 32 KiB buffer for each was 32 GB of
// garbage for a million of them, which the collector's pace let pile up.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// digestsOf reads r to the end and returns its length and its digests for
// the known algorithms among want.
func digestsOf(r io.Reader, want []digest) (int64, map[string][]byte, error) {
	hs := map[string]hash.Hash{}
	var ws []io.Writer
	for _, d := range want {
		if newHash, ok := hashAlgs[d.alg]; ok && hs[d.alg] == nil {
			hs[d.alg] = newHash()
			ws = append(ws, hs[d.alg])
		}
	}
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	// The struct hides r's WriteTo, which an *os.File has and which copies
	// through a buffer of its own.
	n, err := io.CopyBuffer(io.MultiWriter(append(ws, io.Discard)...), struct{ io.Reader }{r}, *buf)
	if err != nil {
		return n, nil, err
	}
	sums := make(map[string][]byte, len(hs))
	for alg, h := range hs {
		sums[alg] = h.Sum(nil)
	}
	return n, sums, nil
}
