package layout

import (
	"fmt"
	"path"
	"strings"
)

// CheckGlob checks that pattern is a valid glob: path.Match syntax in each
// slash-separated element, plus "**" as a whole element matching any
// number of elements.
func CheckGlob(pattern string) error {
	if pattern == "" {
		return fmt.Errorf("empty pattern")
	}
	for _, elem := range strings.Split(pattern, "/") {
		if elem == "**" {
			continue
		}
		if _, err := path.Match(elem, ""); err != nil {
			return fmt.Errorf("bad pattern %q: %w", pattern, err)
		}
	}
	return nil
}

// MatchGlob reports whether the slash-separated path p matches pattern. A
// pattern without "/" matches against the last element of p (as .gitignore
// does), so "*.tmp" matches "a/b/c.tmp". A pattern that matches a folder
// also matches everything inside it.
func MatchGlob(pattern, p string) bool {
	pat := strings.Split(pattern, "/")
	elems := strings.Split(p, "/")
	if len(pat) == 1 && pat[0] != "**" {
		for _, e := range elems {
			if ok, _ := path.Match(pat[0], e); ok {
				return true
			}
		}
		return false
	}
	return matchElems(pat, elems)
}

// matchElems matches pattern elements against path elements; a match of a
// prefix of the path counts, since it names a folder holding the rest.
func matchElems(pat, elems []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(elems); i++ {
				if matchElems(pat[1:], elems[i:]) {
					return true
				}
			}
			return false
		}
		if len(elems) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], elems[0]); !ok {
			return false
		}
		pat, elems = pat[1:], elems[1:]
	}
	return true
}
