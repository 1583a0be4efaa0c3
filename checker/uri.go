package checker

import (
	"fmt"
	"net/url"
	"strings"
)

// uriProblem returns why s is not a correctly percent-encoded URI reference
// (RFC 3986), or "".
func uriProblem(s string) string {
	hashes := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return fmt.Sprintf("%q at offset %d is not a percent-escape %%XX", s[i:min(i+3, len(s))], i)
			}
		case c == '#':
			if hashes++; hashes > 1 {
				return "a second '#' must be written %23"
			}
		case c >= 0x80:
			return "non-ASCII characters must be percent-encoded as UTF-8"
		case c == ' ':
			return "spaces must be percent-encoded as %20"
		case !uriChar(c):
			return fmt.Sprintf("character %q must be percent-encoded", c)
		}
	}
	return ""
}

// uriChar reports whether c may appear unescaped in a URI: unreserved,
// reserved or '%'.
func uriChar(c byte) bool {
	if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
		return true
	}
	return strings.IndexByte("-._~:/?#[]@!$&'()*+,;=", c) >= 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// isAbsoluteURI reports whether s starts with a scheme (RFC 3986 §3.1) and,
// for http and https, names a host.
func isAbsoluteURI(s string) bool {
	i := strings.IndexByte(s, ':')
	if i < 1 || !isAlpha(s[0]) {
		return false
	}
	for j := 1; j < i; j++ {
		c := s[j]
		if !isAlpha(c) && !('0' <= c && c <= '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	scheme := strings.ToLower(s[:i])
	if scheme == "http" || scheme == "https" {
		u, err := url.Parse(s)
		return err == nil && u.Host != ""
	}
	return true
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// isRelName reports whether s is a registered-style relation type
// (RFC 5988: LOALPHA *( LOALPHA / DIGIT / "." / "-" )).
func isRelName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z') && !('0' <= c && c <= '9') && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// resolve returns ref resolved against base, or ref itself when either does
// not parse.
func resolve(base, ref string) string {
	b, err := url.Parse(base)
	if err != nil {
		return ref
	}
	r, err := url.Parse(ref)
	if err != nil {
		return ref
	}
	return b.ResolveReference(r).String()
}
