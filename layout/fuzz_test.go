package layout

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzURL: every clean path maps to an absolute URI with no query or
// fragment that net/url parses, made of ASCII that XML needs no escaping
// for, and PathFromURL maps it back to the same path.
func FuzzURL(f *testing.F) {
	for _, p := range []string{"a/b.html", "da ta#1?.json", "100%&more+x.txt", "ümlaut/ß.txt", "q\"'<>.txt",
		"bad\xffutf8\x01", "~user/a_b-c.d", "e\u0301", "a/./b", "../x", "a//b", "%2e%2e", "a\x00b", "\n\r\t"} {
		f.Add(p)
	}
	const base = "https://example.org/data/"
	f.Fuzz(func(t *testing.T, p string) {
		u := URL(base, p)
		if n := EscapedPathLen(p); n != len(u)-len(base) {
			t.Fatalf("EscapedPathLen(%q) = %d, want %d", p, n, len(u)-len(base))
		}
		for i := 0; i < len(u); i++ {
			if c := u[i]; c <= ' ' || c >= 0x7f || strings.IndexByte("\"'<>&#?\\", c) >= 0 {
				t.Fatalf("URL(%q) = %q holds %q", p, u, c)
			}
		}
		parsed, err := url.Parse(u)
		if err != nil || parsed.RawQuery != "" || parsed.Fragment != "" {
			t.Fatalf("URL(%q) = %q: parse %v, query %q, fragment %q", p, u, err, parsed.RawQuery, parsed.Fragment)
		}
		back, ok := PathFromURL(base, u)
		if Clean(p) && (!ok || back != p) {
			t.Fatalf("PathFromURL(URL(%q)) = %q, %v", p, back, ok)
		}
		if !Clean(p) && ok && back == p {
			t.Fatalf("PathFromURL accepted the unclean path %q", p)
		}
	})
}

// FuzzPathFromURL: whatever URI it is given, PathFromURL returns a clean
// path under the base, or refuses; and the path's URI names it again.
func FuzzPathFromURL(f *testing.F) {
	const base = "https://example.org/data/"
	for _, u := range []string{base + "a/b", base + "%2e%2e/x", base + "a/../../x", base + "%zz", base + "%00", base,
		"https://example.org/other", base + "a%2Fb", base + "./a", base + "a?b#c"} {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, u string) {
		p, ok := PathFromURL(base, u)
		if !ok {
			return
		}
		if !Clean(p) {
			t.Fatalf("PathFromURL(%q) = %q, not clean", u, p)
		}
		if back, ok := PathFromURL(base, URL(base, p)); !ok || back != p {
			t.Fatalf("round trip of %q via %q gives %q, %v", u, p, back, ok)
		}
	})
}
