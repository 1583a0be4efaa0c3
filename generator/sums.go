package generator

import (
	"crypto/sha256"
	"io"
	"os"

	"github.com/rsgen/rsgen/snapshot"
)

// sums identify the bytes of a kept file: its length (-1: unknown) and
// SHA-256 (zero: unknown, as in states written before format 3).
type sums struct {
	size   int64
	sha256 [32]byte
}

// keptSums returns the sums of a kept document or package.
func keptSums(k snapshot.Kept) sums {
	if k.SHA256 == ([32]byte{}) && k.Size == 0 {
		return sums{size: -1}
	}
	return sums{size: k.Size, sha256: k.SHA256}
}

// match reports whether got, measured from a file, has the bytes want
// describes.
func (want sums) match(got sums) bool {
	return (want.size < 0 || want.size == got.size) &&
		(want.sha256 == [32]byte{} || want.sha256 == got.sha256)
}

// measure reads the file at path and returns its sums.
func measure(path string) (sums, error) {
	f, err := os.Open(path)
	if err != nil {
		return sums{}, err
	}
	defer f.Close()
	return copyMeasured(io.Discard, f)
}

// copyMeasured copies src to dst and returns the sums of the bytes.
func copyMeasured(dst io.Writer, src io.Reader) (sums, error) {
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(dst, h), src)
	if err != nil {
		return sums{}, err
	}
	s := sums{size: n}
	h.Sum(s.sha256[:0])
	return s, nil
}

// countingWriter counts the bytes written to it.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}
