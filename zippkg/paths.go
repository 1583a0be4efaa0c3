package zippkg

import (
	"errors"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// validatePath checks a manifest path: a leading slash, then non-empty
// slash-separated segments other than "." and "..", valid UTF-8, no
// backslash (a separator to some unzip tools) and short enough for a ZIP
// name.
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
	}
	for seg := range strings.SplitSeq(p[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return errors.New("path " + strconv.Quote(p) + " has an empty, . or .. segment")
		}
	}
	return nil
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
