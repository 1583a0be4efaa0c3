package zippkg

import (
	"errors"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
)

// validatePath checks a manifest path: a leading slash, then non-empty
// slash-separated segments other than "." and "..", valid UTF-8, no
// backslash (a separator to some unzip tools), no character that
// PathFor escapes, and short enough for a ZIP name.
func validatePath(p string) error {
	switch {
	case !strings.HasPrefix(p, "/") || len(p) == 1:
		return errors.New("path " + strconv.Quote(p) + " does not start with a slash and a name")
	case len(p) > 0xffff:
		return errors.New("path longer than a ZIP name can be")
	case !utf8.ValidString(p):
		return errors.New("path " + strconv.Quote(p) + " is not UTF-8")
	case strings.ContainsRune(p, '\\'):
		return errors.New("path " + strconv.Quote(p) + " has a backslash")
	case strings.ContainsFunc(p, unfit):
		return errors.New("path " + strconv.Quote(p) + " has a control character or one XML cannot write")
	}
	for seg := range strings.SplitSeq(p[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return errors.New("path " + strconv.Quote(p) + " has an empty, . or .. segment")
		}
	}
	return nil
}

// unfit reports whether a package path cannot hold r: a backslash (a
// separator to some unzip tools), a control character (the schema's
// pathType refuses a line break, and XML cannot write most of them) or
// another character XML cannot write.
func unfit(r rune) bool {
	return r == '\\' || r < 0x20 || r == 0x7f || !rs.IsXMLChar(r)
}

// PathFor returns the path a file at the slash path src would like in a
// package: src below "/", with the bytes of what a package cannot hold
// (unfit, and bytes that are not UTF-8: a ZIP name is UTF-8, with the
// flag that says so) percent-encoded, as in its URI. A source file named
// so would otherwise have no place in a package. The path may equal another
// file's ("caf%E9.txt" and "caf\xe9.txt"): Paths makes it distinct.
func PathFor(src string) string {
	if utf8.ValidString(src) && !strings.ContainsFunc(src, unfit) {
		return "/" + src
	}
	b := append(make([]byte, 0, len(src)+16), '/')
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRuneInString(src[i:])
		if r == utf8.RuneError && n == 1 || unfit(r) {
			b = layout.AppendEscapedPath(b, src[i:i+n])
		} else {
			b = append(b, src[i:i+n]...)
		}
		i += n
	}
	return string(b)
}

// Paths assigns distinct bitstream paths within one package. The zero value
// is ready to use; use one Paths per package.
//
// Assign returns the wanted path if it is free, and otherwise the first
// free one of stem-v2.ext, stem-v3.ext, ... (the extension is that of the
// last segment), so that the second bitstream of /changes/res7.html in a
// Change Dump package is /changes/res7-v2.html, as in spec example 23.
// "/manifest.xml" is never free. The result depends only on the sequence of
// calls, so the same changes in the same order get the same paths.
type Paths struct {
	used map[string]struct{}
}

// Assign returns a path for a bitstream that would like to be at want and
// marks it used.
func (ps *Paths) Assign(want string) string {
	if ps.used == nil {
		ps.used = map[string]struct{}{"/" + ManifestName: {}}
	}
	p := want
	base := path.Base(want)
	ext := path.Ext(base)
	if ext == base { // a dot file such as .htaccess has no extension
		ext = ""
	}
	stem := strings.TrimSuffix(want, ext)
	for v := 2; ps.taken(p); v++ {
		p = stem + "-v" + strconv.Itoa(v) + ext
	}
	ps.used[p] = struct{}{}
	return p
}

func (ps *Paths) taken(p string) bool {
	_, ok := ps.used[p]
	return ok
}
