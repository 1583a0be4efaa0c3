package layout

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParseBaseURL checks that s can serve as a base URL: absolute http or
// https, with a host, and no query, fragment or user information. It
// returns s with a trailing slash.
func ParseBaseURL(s string) (string, error) {
	if err := CheckAbsoluteURL(s); err != nil {
		return "", err
	}
	u, _ := url.Parse(s)
	if u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(s, "?#") {
		return "", fmt.Errorf("%q: a base URL cannot have a query or fragment", s)
	}
	if u.User != nil {
		return "", fmt.Errorf("%q: a base URL cannot carry user information", s)
	}
	// Hosting files and server configurations name the decoded path: a
	// control character in it could end a line of theirs.
	if i := strings.IndexFunc(u.Path, func(r rune) bool { return r < 0x20 || r == 0x7f }); i >= 0 {
		return "", fmt.Errorf("%q: its path decodes to the control character %q", s, u.Path[i])
	}
	if !strings.HasSuffix(s, "/") {
		s += "/"
	}
	return s, nil
}

// CheckAbsoluteURL checks that s is an absolute http or https URL with a
// host, a port from 1 to 65535 if any, and nothing that would need
// escaping.
func CheckAbsoluteURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w", s, errors.Unwrap(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: must be an absolute http:// or https:// URL", s)
	}
	if u.Host == "" {
		return fmt.Errorf("%q: has no host", s)
	}
	// url.Parse takes any digits for a port; a port out of range would
	// be published in every URI, and no client could follow one.
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%q: port %s is not a TCP port (1 to 65535)", s, p)
		}
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '\\' {
			return unescapedError(s, u.Host, i)
		}
	}
	return nil
}

// unescapedError says what to write instead of the character at s[i]: a
// host in its IDNA (punycode) form, anything else percent-encoded, as the
// bytes of its UTF-8.
func unescapedError(s, host string, i int) error {
	if strings.ContainsFunc(host, func(r rune) bool { return r >= utf8.RuneSelf }) {
		return fmt.Errorf("%q: the host %q is not ASCII: write it in its IDNA (punycode) form, xn--…", s, host)
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	what := fmt.Sprintf("character %q", r)
	if r == utf8.RuneError && n == 1 {
		what = fmt.Sprintf("byte 0x%02X", s[i])
	}
	return fmt.Errorf("%q: %s must be percent-encoded, as %s", s, what, AppendEscapedPath(nil, s[i:i+n]))
}

// URL returns the URI of the source path p under base, which must end
// with "/" (ParseBaseURL ensures it).
func URL(base, p string) string {
	return string(AppendURL(make([]byte, 0, len(base)+len(p)+16), base, p))
}

// AppendURL appends the URI of p under base to b.
func AppendURL(b []byte, base, p string) []byte {
	b = append(b, base...)
	return AppendEscapedPath(b, p)
}

const upperhex = "0123456789ABCDEF"

// AppendEscapedPath appends p with every byte percent-encoded except the
// unreserved characters of RFC 3986 and "/".
func AppendEscapedPath(b []byte, p string) []byte {
	last := 0
	for i := 0; i < len(p); i++ {
		if c := p[i]; !pathKept[c] {
			b = append(b, p[last:i]...)
			b = append(b, '%', upperhex[c>>4], upperhex[c&15])
			last = i + 1
		}
	}
	return append(b, p[last:]...)
}

// EscapedPathLen returns the length of AppendEscapedPath's encoding of p,
// without encoding it.
func EscapedPathLen(p string) int {
	n := len(p)
	for i := 0; i < len(p); i++ {
		if !pathKept[p[i]] {
			n += 2
		}
	}
	return n
}

// pathKept marks the bytes AppendEscapedPath copies as they are: the
// unreserved characters of RFC 3986, and "/".
var pathKept = func() (kept [256]bool) {
	for c := range 256 {
		kept[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.ContainsRune("-._~/", rune(c))
	}
	return kept
}()

// PathFromURL inverts URL: it returns the source path that u names under
// base, and false when u is not under base or does not decode to a clean
// path.
func PathFromURL(base, u string) (string, bool) {
	rest, ok := strings.CutPrefix(u, base)
	if !ok || rest == "" {
		return "", false
	}
	p, err := url.PathUnescape(rest)
	if err != nil || !Clean(p) {
		return "", false
	}
	return p, true
}
