package viewer

import (
	"path"
	"regexp"
	"strings"
	"testing"
)

// TestFilesArePageFirstUnderTheDocumentsFolder checks the shape the
// generator publishes: the page at Index, first, and its script and
// stylesheet beside it in _viewer.
func TestFilesArePageFirstUnderTheDocumentsFolder(t *testing.T) {
	files := Files()
	if len(files) != 3 || files[0].Path != Index {
		t.Fatalf("Files() = %v, want the page first, then its script and stylesheet", paths(files))
	}
	for _, f := range files[1:] {
		if path.Dir(f.Path) != assetDir || len(f.Data) == 0 {
			t.Errorf("%s: not a non-empty file in %s", f.Path, assetDir)
		}
	}
}

// TestPageLoadsOnlyItsOwnFiles checks that every file the page refers to
// is one of Files, relative to it, and that nothing refers to another
// host: the browser makes no external request.
func TestPageLoadsOnlyItsOwnFiles(t *testing.T) {
	files := Files()
	have := map[string]bool{}
	for _, f := range files {
		have[f.Path] = true
	}
	page := string(files[0].Data)
	refs := regexp.MustCompile(`(?:src|href)="([^"#]+)"`).FindAllStringSubmatch(page, -1)
	loaded := 0
	for _, r := range refs {
		ref := r[1]
		switch {
		case ref == "data:,":
			// the empty icon, so that the browser asks for no favicon.ico
		case ref == "../.well-known/resourcesync":
			// the link to the Source Description for readers without script
		case strings.Contains(ref, ":") || strings.HasPrefix(ref, "/"):
			t.Errorf("the page refers to %s, outside the site", ref)
		default:
			loaded++
			if target := path.Join(path.Dir(Index), ref); !have[target] {
				t.Errorf("the page refers to %s (%s), which is not one of Files", ref, target)
			}
		}
	}
	if loaded != 2 {
		t.Errorf("the page loads %d files of its own, want its script and stylesheet", loaded)
	}
	// The only absolute URIs are XML namespace names, which are never
	// fetched; stylesheets import nothing.
	uri := regexp.MustCompile(`https?://[^\s"'<>)]+`)
	namespaces := regexp.MustCompile(`^http://www\.(sitemaps\.org/schemas/sitemap/0\.9|openarchives\.org/rs/terms/|w3\.org/2000/svg)$`)
	for _, f := range files {
		for _, u := range uri.FindAllString(string(f.Data), -1) {
			if !namespaces.MatchString(u) {
				t.Errorf("%s names %s", f.Path, u)
			}
		}
		if !strings.HasSuffix(f.Path, ".js") && regexp.MustCompile(`(?i)@import|url\(`).MatchString(string(f.Data)) {
			t.Errorf("%s imports a stylesheet or loads a url()", f.Path)
		}
	}
}

func paths(files []File) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}
