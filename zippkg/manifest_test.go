package zippkg

import (
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/rs"
)

// TestChangeManifestMatchesSpecExample compares, by meaning, the manifest
// of spec example 23 as written by WriteManifest with the specification's
// own file ex-22.xml.
func TestChangeManifestMatchesSpecExample(t *testing.T) {
	spec, err := os.ReadFile("../testdata/spec-examples/ex-22.xml")
	if err != nil {
		t.Skipf("spec examples not available: %v", err)
	}
	m, _ := changeManifest()
	hashes := []string{"md5:1c1b0e264fa9b7e1e9aa6f9db8d6362b", "md5:f906610c3d4aa745cb2b986f25b37c5a", "", "md5:0988647082c8bc51778894a48ec3b576"}
	lengths := []int64{4339, 38297, 0, 5426}
	for i := range m.Entries {
		m.Entries[i].Hash, m.Entries[i].Length = hashes[i], lengths[i]
	}
	got, want := decodeManifest(t, mustManifest(t, m)), decodeManifest(t, spec)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("manifest differs from ex-22.xml:\ngot  %+v\nwant %+v", got, want)
	}
}

func TestManifestValidation(t *testing.T) {
	day := time.Date(2013, 1, 2, 0, 0, 0, 0, time.UTC)
	ok := func() *Manifest { return resourceManifest(sampleTree()) }
	change := func() *Manifest { m, _ := changeManifest(); return m }
	for name, tc := range map[string]struct {
		m    *Manifest
		edit func(m *Manifest)
		want string
	}{
		"no up":               {ok(), func(m *Manifest) { m.Up = "" }, "no up link"},
		"no at":               {ok(), func(m *Manifest) { m.At = time.Time{} }, "without at"},
		"from in resource":    {ok(), func(m *Manifest) { m.From = day }, "with from or until"},
		"change in resource":  {ok(), func(m *Manifest) { m.Entries[0].Change = rs.ChangeCreated }, "change or datetime"},
		"no loc":              {ok(), func(m *Manifest) { m.Entries[0].Loc = "" }, "no loc"},
		"no path":             {ok(), func(m *Manifest) { m.Entries[0].Path = "" }, "does not start with a slash"},
		"relative path":       {ok(), func(m *Manifest) { m.Entries[0].Path = "a/b" }, "does not start with a slash"},
		"dot dot":             {ok(), func(m *Manifest) { m.Entries[0].Path = "/a/../b" }, "segment"},
		"empty segment":       {ok(), func(m *Manifest) { m.Entries[0].Path = "/a//b" }, "segment"},
		"trailing slash":      {ok(), func(m *Manifest) { m.Entries[0].Path = "/a/" }, "segment"},
		"backslash":           {ok(), func(m *Manifest) { m.Entries[0].Path = `/a\b` }, "backslash"},
		"not utf-8":           {ok(), func(m *Manifest) { m.Entries[0].Path = "/a\xff" }, "UTF-8"},
		"manifest path":       {ok(), func(m *Manifest) { m.Entries[0].Path = "/manifest.xml" }, "used twice"},
		"duplicate path":      {ok(), func(m *Manifest) { m.Entries[1].Path = m.Entries[0].Path }, "used twice"},
		"negative length":     {ok(), func(m *Manifest) { m.Entries[0].Length = -1 }, "negative length"},
		"unknown hash":        {ok(), func(m *Manifest) { m.Entries[0].Hash = "blake3:00" }, "want md5:"},
		"short hash":          {ok(), func(m *Manifest) { m.Entries[0].Hash = "md5:00" }, "not a md5 digest"},
		"hash twice":          {ok(), func(m *Manifest) { m.Entries[0].Hash += " " + m.Entries[0].Hash }, "given twice"},
		"too many":            {ok(), func(m *Manifest) { m.Entries = make([]Entry, rs.MaxEntries+1) }, "more than 50000"},
		"no from":             {change(), func(m *Manifest) { m.From = time.Time{} }, "without from"},
		"at in change":        {change(), func(m *Manifest) { m.At = day }, "with at or completed"},
		"until before from":   {change(), func(m *Manifest) { m.Until = day.Add(-time.Hour) }, "until before from"},
		"no change":           {change(), func(m *Manifest) { m.Entries[0].Change = "" }, "is not created"},
		"deletion with path":  {change(), func(m *Manifest) { m.Entries[2].Path = "/x" }, "deletion with path"},
		"update without path": {change(), func(m *Manifest) { m.Entries[1].Path = "" }, "does not start with a slash"},
		"out of order":        {change(), func(m *Manifest) { m.Entries[3].Datetime = day.Add(time.Hour) }, "chronological"},
		"after until":         {change(), func(m *Manifest) { m.Entries[3].Datetime = day.Add(25 * time.Hour) }, "outside [from, until]"},
		"bad xml":             {ok(), func(m *Manifest) { m.Entries[0].Loc = "http://x/\x01" }, "not allowed in XML"},
		"unknown kind":        {ok(), func(m *Manifest) { m.Kind = 7 }, "unknown kind"},
	} {
		tc.edit(tc.m)
		err := WriteManifest(io.Discard, tc.m)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", name, err, tc.want)
		}
		if tc.want != "not allowed in XML" && !errors.Is(err, ErrInvalidManifest) {
			t.Errorf("%s: %v is not ErrInvalidManifest", name, err)
		}
		if _, err := NewWriter(io.Discard, tc.m, nil); err == nil {
			t.Errorf("%s: NewWriter accepted it", name)
		}
	}
}

func TestPathsAssign(t *testing.T) {
	var ps Paths
	var got []string
	for _, p := range []string{
		"/changes/res7.html", "/changes/res7.html", "/changes/res7-v2.html", "/changes/res7.html",
		"/manifest.xml", "/c/.htaccess", "/c/.htaccess", "/c/archive.tar.gz", "/c/archive.tar.gz", "/c/README",
		"/c/README",
	} {
		got = append(got, ps.Assign(p))
	}
	want := []string{
		"/changes/res7.html", "/changes/res7-v2.html", "/changes/res7-v2-v2.html", "/changes/res7-v3.html",
		"/manifest-v2.xml", "/c/.htaccess", "/c/.htaccess-v2", "/c/archive.tar.gz", "/c/archive.tar-v2.gz", "/c/README",
		"/c/README-v2",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
