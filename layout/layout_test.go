package layout

import (
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestComparePathsIsWalkOrder checks the promise the snapshot's merge relies
// on: sorting with ComparePaths gives the order fs.WalkDir visits files in.
func TestComparePathsIsWalkOrder(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a.txt", "a/b", "a/b.c/d", "a-b", "a0", "a/c", "b", "A", "a/b-", "a b/x", "ä"} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var walked []string
	err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			walked = append(walked, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sorted := slices.Clone(walked)
	slices.Reverse(sorted)
	slices.SortFunc(sorted, ComparePaths)
	if !slices.Equal(walked, sorted) {
		t.Errorf("walk order %q\nComparePaths order %q", walked, sorted)
	}
}

func TestURLEscaping(t *testing.T) {
	base := "https://example.org/data/"
	cases := map[string]string{
		"a/b.html":        "https://example.org/data/a/b.html",
		"da ta#1?.json":   "https://example.org/data/da%20ta%231%3F.json",
		"100%&more+x.txt": "https://example.org/data/100%25%26more%2Bx.txt",
		"ümlaut/ß.txt":    "https://example.org/data/%C3%BCmlaut/%C3%9F.txt",
		"q\"'<>.txt":      "https://example.org/data/q%22%27%3C%3E.txt",
		"bad\xffutf8\x01": "https://example.org/data/bad%FFutf8%01",
		"~user/a_b-c.d":   "https://example.org/data/~user/a_b-c.d",
	}
	for p, want := range cases {
		got := URL(base, p)
		if got != want {
			t.Errorf("URL(%q) = %q, want %q", p, got, want)
		}
		if n := EscapedPathLen(p); n != len(want)-len(base) {
			t.Errorf("EscapedPathLen(%q) = %d, want %d", p, n, len(want)-len(base))
		}
		u, err := url.Parse(got)
		if err != nil {
			t.Errorf("net/url cannot parse %q: %v", got, err)
			continue
		}
		if u.Fragment != "" || u.RawQuery != "" {
			t.Errorf("%q has a fragment or query", got)
		}
		if back, ok := PathFromURL(base, got); !ok || back != p {
			t.Errorf("PathFromURL(%q) = %q, %v; want %q", got, back, ok, p)
		}
	}
}

func TestPathFromURLRefusesOutsideBase(t *testing.T) {
	base := "https://example.org/data/"
	for _, u := range []string{"https://example.org/other/x", "https://example.org/data/", "https://example.org/data/a/../../x", "https://example.org/data/%2e%2e/x"} {
		if p, ok := PathFromURL(base, u); ok {
			t.Errorf("PathFromURL(%q) = %q, want refusal", u, p)
		}
	}
}

func TestParseBaseURL(t *testing.T) {
	good := map[string]string{
		"https://data.example.org":      "https://data.example.org/",
		"http://localhost:8080/a/b/":    "http://localhost:8080/a/b/",
		"http://localhost:65535/":       "http://localhost:65535/",
		"https://example.org/sub%20dir": "https://example.org/sub%20dir/",
	}
	for in, want := range good {
		got, err := ParseBaseURL(in)
		if err != nil || got != want {
			t.Errorf("ParseBaseURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "data.example.org", "/rel/path", "ftp://example.org/", "https://", "https://example.org/?q=1",
		"https://example.org/#f", "https://user:pw@example.org/", "https://example.org/a b/", "https://exa mple.org/",
		"https://example.org/x%0Arm%20-rf/", "https://example.org/%0D/", "https://example.org/a%7F/"} {
		if got, err := ParseBaseURL(bad); err == nil {
			t.Errorf("ParseBaseURL(%q) = %q, want an error", bad, got)
		}
	}
}

func TestMatchGlob(t *testing.T) {
	cases := []struct {
		pattern, path string
		want          bool
	}{
		{"*.tmp", "a/b/c.tmp", true},
		{"*.tmp", "a/b/c.txt", false},
		{"drafts", "drafts/x.html", true},
		{"drafts", "a/drafts/x.html", true},
		{"docs/*.pdf", "docs/a.pdf", true},
		{"docs/*.pdf", "docs/sub/a.pdf", false},
		{"docs/**/*.pdf", "docs/sub/deep/a.pdf", true},
		{"docs/**/*.pdf", "docs/a.pdf", true},
		{"**/secret", "a/b/secret/x", true},
		{"data/**", "data/x/y", true},
		{"data/**", "database/x", false},
		{".well-known", ".well-known/x", true},
	}
	for _, c := range cases {
		if got := MatchGlob(c.pattern, c.path); got != c.want {
			t.Errorf("MatchGlob(%q, %q) = %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
	if err := CheckGlob("a/[b"); err == nil {
		t.Error("CheckGlob accepted a malformed pattern")
	}
}

func TestReservedPaths(t *testing.T) {
	for p, want := range map[string]bool{
		".well-known/resourcesync": true, "resourcesync/x.xml": true, "resourcesync": true,
		"resourcesyncx": false, ".well-known/other": false, "a/resourcesync/x": false,
	} {
		if IsReserved(p) != want {
			t.Errorf("IsReserved(%q) = %v", p, !want)
		}
	}
}

// TestTopics: the topics of notification channels lie in their set's
// folder, and only they are topics.
func TestTopics(t *testing.T) {
	for p, want := range map[string]bool{
		ChangeNotificationTopic("s"): true, FrameworkNotificationTopic("a.b"): true,
		"resourcesync/s/notification/other.xml": false, "resourcesync/notification/change.xml": false,
		"s/notification/change.xml": false, "resourcesync//notification/change.xml": false,
	} {
		if IsTopic(p) != want {
			t.Errorf("IsTopic(%q) = %v", p, !want)
		}
	}
	if got := ChangeNotificationTopic("s"); got != "resourcesync/s/notification/change.xml" {
		t.Errorf("ChangeNotificationTopic = %s", got)
	}
}

// TestPublishStep: every kind of output file is published after the files
// it references.
func TestPublishStep(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for rel, want := range map[string]Step{
		"a/b.txt":                                          StepResources,
		"resourcesync/index.html":                          StepResources,
		"resourcesync/_viewer/v.js":                        StepResources,
		Memento(at, "a/b.txt"):                             StepVersions,
		Patch(at, "d.json"):                                StepVersions,
		TimeMap("a/b.txt"):                                 StepTimeMaps,
		ResourceDumpPackage("s", "x"):                      StepImmutable,
		ManifestCopy(ResourceDumpPackage("s", "x")):        StepImmutable,
		ManifestCopy(ChangeDumpPackage("s", at, "x")):      StepImmutable,
		ChangeList("s", at, 0):                             StepImmutable,
		ChangeDump("s", at, 2):                             StepImmutable,
		ArchivedResourceList("s", at):                      StepImmutable,
		Part(ArchivedResourceDump("s", at), 1):             StepImmutable,
		Part(ResourceList("s"), 3):                         StepParts,
		Part(Archive("s", "changelist"), 1):                StepParts,
		ResourceList("s"):                                  StepLists,
		ResourceDump("s"):                                  StepLists,
		ChangeListIndex("s"):                               StepLists,
		ChangeNotificationTopic("s"):                       StepLists,
		FrameworkNotificationTopic("s"):                    StepLists,
		Archive("s", "resourcedump"):                       StepLists,
		CapabilityList("s"):                                StepCapabilities,
		SourceDescription:                                  StepDescription,
		"resourcesync-not-documents/resourcelist.xml":      StepResources,
		DocumentsDir + "/s-1/resourcelist-12345-extra.xml": StepLists,
	} {
		if got := PublishStep(rel); got != want {
			t.Errorf("PublishStep(%s) = %s, want %s", rel, got, want)
		}
	}
}

// TestCheckAbsoluteURLSaysWhatToWrite: a character that must be escaped
// is named, with what to write instead; a host that is not ASCII is sent
// to its IDNA form, which percent-encoding is not.
func TestCheckAbsoluteURLSaysWhatToWrite(t *testing.T) {
	for in, want := range map[string]string{
		"https://例え.jp/":                    `the host "例え.jp" is not ASCII: write it in its IDNA (punycode) form`,
		"https://data.example.org/my data/": `character ' ' must be percent-encoded, as %20`,
		"https://data.example.org/données/": `character 'é' must be percent-encoded, as %C3%A9`,
		"https://data.example.org/\xe9/":    `byte 0xE9 must be percent-encoded, as %E9`,
		`https://data.example.org/a\b/`:     `character '\\' must be percent-encoded, as %5C`,
		"http://data.example.org:99999999/": `port 99999999 is not a TCP port (1 to 65535)`,
		"http://data.example.org:0/":        `port 0 is not a TCP port (1 to 65535)`,
	} {
		if err := CheckAbsoluteURL(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}
