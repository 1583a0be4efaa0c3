package rs

import (
	"fmt"
	"strings"
)

// HashAlgorithm is a digest algorithm of rs:md hash values (§7.2.1).
type HashAlgorithm uint8

// The digest algorithms rsgen publishes, named as in hash values.
const (
	MD5 HashAlgorithm = iota
	SHA1
	SHA256
	NumHashAlgorithms
)

var hashNames = [NumHashAlgorithms]string{"md5", "sha-1", "sha-256"}

// String returns the algorithm's name in hash values.
func (a HashAlgorithm) String() string { return hashNames[a] }

// HashNames lists the names of the algorithms, joined by ", ", for messages.
func HashNames() string { return strings.Join(hashNames[:], ", ") }

// ParseHashAlgorithm returns the algorithm with the given name.
func ParseHashAlgorithm(name string) (HashAlgorithm, bool) {
	for i, n := range hashNames {
		if n == name {
			return HashAlgorithm(i), true
		}
	}
	return 0, false
}

// UnmarshalText reads an algorithm by its name, so that a configuration
// holds parsed algorithms.
func (a *HashAlgorithm) UnmarshalText(text []byte) error {
	v, ok := ParseHashAlgorithm(strings.TrimSpace(string(text)))
	if !ok {
		return fmt.Errorf("unknown algorithm %q (use %s)", text, HashNames())
	}
	*a = v
	return nil
}

// MarshalText writes the algorithm's name.
func (a HashAlgorithm) MarshalText() ([]byte, error) { return []byte(a.String()), nil }
