package snapshot

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rsgen/rsgen/rs"
)

// TestCaseFoldsFindClashes: names of one folder that differ only in case,
// by any Unicode case mapping, clash, and name the earlier one; names of
// different folders, and bytes that are not UTF-8, do not.
func TestCaseFoldsFindClashes(t *testing.T) {
	var c caseFolds
	for _, tc := range []struct{ path, clash string }{
		{"Docs", ""}, {"Docs/a.txt", ""}, {"Docs/sub", ""}, {"Docs/sub/x", ""}, {"Docs/A.TXT", "Docs/a.txt"},
		{"README", ""}, {"\xff", ""}, {"\xfe", ""}, {"docs", "Docs"}, {"docs/a.txt", ""},
		{"kelvin", ""}, {"\u212aELVIN", "kelvin"}, {"readme", "README"}, {"x/y/z", ""}, {"x/Y", ""},
	} {
		other, clash := c.add(tc.path)
		if clash != (tc.clash != "") || other != tc.clash {
			t.Errorf("add %q: %q, %v; want clash with %q", tc.path, other, clash, tc.clash)
		}
	}
}

// TestScanRefusesNamesThatDifferInCase: where the output folds case, a
// scan of two names that differ only in case fails naming both; where it
// does not, both are scanned.
func TestScanRefusesNamesThatDifferInCase(t *testing.T) {
	fsys := fstest.MapFS{"docs/Notes.txt": {Data: []byte("a")}, "docs/notes.txt": {Data: []byte("b")}, "other.txt": {}}
	opts := ScanOptions{FS: fsys, Algorithms: []rs.HashAlgorithm{rs.SHA256}}
	recs, _, _, err := scanRecords(context.Background(), &State{}, opts)
	if err != nil || len(recs) != 3 {
		t.Fatalf("scan without FoldCase: %d records, %v", len(recs), err)
	}
	opts.FoldCase = true
	_, _, _, err = scanRecords(context.Background(), &State{}, opts)
	var pe *PathError
	if !errors.Is(err, ErrCaseClash) || !errors.As(err, &pe) || pe.Path != "docs/notes.txt" || !strings.Contains(err.Error(), "docs/Notes.txt and docs/notes.txt") {
		t.Errorf("scan with FoldCase: %v; want ErrCaseClash naming both files", err)
	}
}

// TestWindowsNameProblems: the names Windows cannot hold are found, with
// why; the others pass.
func TestWindowsNameProblems(t *testing.T) {
	for name, want := range map[string]string{
		"a.txt": "", "con.d": "a name Windows keeps for a device", "NUL": "a name Windows keeps for a device",
		"Com1.txt": "a name Windows keeps for a device", "aux .txt": "a name Windows keeps for a device",
		"COM10": "", "console": "", "nul-ish.txt": "", ".well-known": "", "é.txt": "", "\xff": "",
		"a.": "a trailing dot or space, which Windows drops", "b ": "a trailing dot or space, which Windows drops",
		"a:b": `the character ':'`, "a<b": `the character '<'`, `a\b`: `the character '\\'`, "a?": `the character '?'`,
		"a\tb": `the character '\t'`, `"q"`: `the character '"'`, "a|b": `the character '|'`, "a*": `the character '*'`,
	} {
		if got := windowsNameProblem(name); got != want {
			t.Errorf("%q: %q, want %q", name, got, want)
		}
	}
}

// TestScanSkipsWindowsNames: on Windows, a file or folder whose name
// Windows cannot hold is skipped with a note naming it, and the others
// are scanned.
func TestScanSkipsWindowsNames(t *testing.T) {
	defer func(was bool) { checkWindowsNames = was }(checkWindowsNames)
	checkWindowsNames = true
	fsys := fstest.MapFS{"aux.txt": {}, "dir./a.txt": {}, "ok/b.txt": {}}
	var skipped []string
	opts := ScanOptions{FS: fsys, Algorithms: []rs.HashAlgorithm{rs.SHA256}, Notify: func(n Note) {
		if n.Kind == NoteSkipped && n.Code == SkipName && strings.Contains(n.Msg, "Windows cannot hold") {
			skipped = append(skipped, n.Path)
		}
	}}
	recs, _, stats, err := scanRecords(context.Background(), &State{}, opts)
	if err != nil || len(recs) != 1 || recs[0].Path != "ok/b.txt" || stats.Skipped != 2 || strings.Join(skipped, " ") != "aux.txt dir." {
		t.Errorf("scan: %v, %v skipped %v (%d), %v", recs, err, skipped, stats.Skipped, err)
	}
}
