package snapshot

import (
	"errors"
	"fmt"
	"path"
	"runtime"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Names the output cannot hold apart
//
// A file system that folds case (macOS's and Windows' by default, FAT and
// exFAT everywhere) holds README and readme as one name: two source files
// named so would be published as one file, and a folder Docs and a folder
// docs as one folder. When the output's file system folds case
// (ScanOptions.FoldCase), the scan refuses two names of one folder that
// differ only in case, naming both (ErrCaseClash). Case is folded rune by
// rune, as strings.EqualFold does; macOS also takes the composed and
// decomposed forms of an accented letter for one name, which this does not
// see.
//
// Windows cannot hold some names at all (see windowsNameProblem): read
// there, such a name would be taken for another file (a trailing dot is
// dropped), a device (NUL) or a stream (a:b). On Windows the scan skips
// them with a note naming the file (SkipName).

// ErrCaseClash is returned, in a *PathError, for two names of one folder
// that differ only in case where the output folds case.
var ErrCaseClash = errors.New("names that differ only in case")

// SkipName is the code of the note of a name Windows cannot hold.
const SkipName = "name"

// checkWindowsNames is whether the scan skips names Windows cannot hold:
// on Windows.
var checkWindowsNames = runtime.GOOS == "windows"

// checkName checks the name of p, which the scan does not exclude. It
// reports a name skipped with a note, and fails for a name that differs
// only in case from an earlier one of its folder, where the output folds
// case.
func (s *scan) checkName(p string) (skipped bool, err error) {
	if checkWindowsNames {
		if problem := windowsNameProblem(path.Base(p)); problem != "" {
			s.skip(p, SkipName, "name Windows cannot hold ("+problem+"): skipped")
			return true, nil
		}
	}
	if !s.opts.FoldCase {
		return false, nil
	}
	if other, clash := s.folds.add(p); clash {
		return false, &PathError{Path: p, Err: fmt.Errorf("%w: %s and %s are one name in the output folder, whose file system does not tell case apart; rename one", ErrCaseClash, other, p)}
	}
	return false, nil
}

// caseFolds finds the names of a folder that differ only in case, as a
// walk visits them: it holds the folded names of the folders on the way
// to the path visited last, and so as many names as those folders hold,
// not the whole tree.
type caseFolds struct {
	folders []foldedFolder // the outermost first
}

type foldedFolder struct {
	dir   string
	names map[string]string // folded name: name
}

// add records the path p, visited in walk order, and returns the path of
// an earlier entry of its folder whose name differs from p's only in case.
func (c *caseFolds) add(p string) (other string, clash bool) {
	dir, base := path.Dir(p), path.Base(p)
	for len(c.folders) > 0 {
		top := c.folders[len(c.folders)-1].dir
		if top == dir || top == "." || strings.HasPrefix(dir, top+"/") {
			break
		}
		c.folders = c.folders[:len(c.folders)-1] // the walk has left it
	}
	if len(c.folders) == 0 || c.folders[len(c.folders)-1].dir != dir {
		c.folders = append(c.folders, foldedFolder{dir: dir, names: map[string]string{}})
	}
	names := c.folders[len(c.folders)-1].names
	key := foldCase(base)
	if earlier, ok := names[key]; ok {
		return path.Join(dir, earlier), true
	}
	names[key] = base
	return "", false
}

// foldCase returns name with every letter in one case, so that two names
// that strings.EqualFold takes for one are equal. Bytes that are not
// UTF-8 are kept as they are.
func foldCase(name string) string {
	var b strings.Builder
	for len(name) > 0 {
		r, size := utf8.DecodeRuneInString(name)
		if r == utf8.RuneError && size == 1 {
			b.WriteByte(name[0])
		} else {
			b.WriteRune(unicode.ToUpper(unicode.ToLower(r)))
		}
		name = name[size:]
	}
	return b.String()
}

// windowsReserved are the names Windows keeps for devices, with any
// extension.
var windowsReserved = []string{"CON", "PRN", "AUX", "NUL",
	"COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9",
	"LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9"}

// windowsNameProblem says why Windows cannot hold a file or folder named
// name, or returns "" when it can.
func windowsNameProblem(name string) string {
	for _, r := range name {
		if r < 0x20 || strings.ContainsRune(`<>:"|?*\`, r) {
			return fmt.Sprintf("the character %q", r)
		}
	}
	if strings.HasSuffix(name, ".") || strings.HasSuffix(name, " ") {
		return "a trailing dot or space, which Windows drops"
	}
	stem, _, _ := strings.Cut(name, ".")
	stem = strings.TrimRight(stem, " ")
	for _, device := range windowsReserved {
		if strings.EqualFold(stem, device) {
			return "a name Windows keeps for a device"
		}
	}
	return ""
}
