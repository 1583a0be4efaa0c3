package zippkg

import "testing"

// TestPathFor: a source file's path inside a package is its own,
// with what a ZIP name or the manifest's XML cannot hold percent-encoded
// byte by byte; UTF-8 letters, spaces, "%" and "#" stay.
func TestPathFor(t *testing.T) {
	for in, want := range map[string]string{
		"a/b c.txt":         "/a/b c.txt",
		"é/e\u0301%41#.txt": "/é/e\u0301%41#.txt",
		"caf\xe9.txt":       "/caf%E9.txt",
		`back\slash`:        "/back%5Cslash",
		"new\nline\r\t":     "/new%0Aline%0D%09",
		"ctl\x01\x7f":       "/ctl%01%7F",
		"non\uFFFEchar":     "/non%EF%BF%BEchar",
		"dir\xff/x\xc3":     "/dir%FF/x%C3",
	} {
		if got := PathFor(in); got != want {
			t.Errorf("PathFor(%q) = %q, want %q", in, got, want)
		}
	}
}
