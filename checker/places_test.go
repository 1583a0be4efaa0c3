package checker

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStagedSource: a Source served on a staging host, before it is
// published at its base URL, is checked there as if it were at the base
// URL: every document and resource read, findings named by the Source's
// URLs. Without the base URL, the check stops at the Source Description,
// whose links lead to another host.
func TestStagedSource(t *testing.T) {
	out := buildSite(t, "testdata/sites/valid.txtar")
	srv := httptest.NewServer(http.FileServer(http.Dir(out)))
	defer srv.Close()
	rep := checkURL(t, srv.URL+"/", Options{BaseURL: "http://example.org/", VerifyContent: true})
	wantRules(t, rep)
	if rep.Documents != 9 || rep.Packages != 2 {
		t.Errorf("read %d documents and %d packages, want 9 and 2", rep.Documents, rep.Packages)
	}
	wantRules(t, checkURL(t, srv.URL+"/", Options{}), "external-skipped")

	// A finding names the document as the Source does.
	broken := httptest.NewServer(onPath("/changelist.xml", http.NotFound)(http.FileServer(http.Dir(out))))
	defer broken.Close()
	f := firstFinding(t, checkURL(t, broken.URL+"/", Options{BaseURL: "http://example.org/"}), "document-missing")
	if f.URL != "http://example.org/capabilitylist.xml" || !strings.Contains(f.Message, "http://example.org/changelist.xml") {
		t.Errorf("got %s, want it about the Source's URLs", f)
	}
	if _, err := CheckURL(t.Context(), srv.URL+"/changelist.xml", Options{BaseURL: "http://example.org/"}); err == nil || !strings.Contains(err.Error(), "ending with /") {
		t.Errorf("a document URL with --base-url: %v, want a refusal", err)
	}
}

// TestResourcesElsewhere: a Source built with copy_resources = false has
// no resources in its output folder; they are published under the
// resource base URL, and read at their own URLs or from where
// Options.Resources says, a folder or a URL.
func TestResourcesElsewhere(t *testing.T) {
	out := buildSite(t, "testdata/sites/valid.txtar")
	files := filepath.Join(t.TempDir(), "files")
	if err := os.Rename(filepath.Join(out, "res"), files); err != nil {
		t.Fatal(err)
	}
	rep := checkDir(t, out, Options{VerifyContent: true})
	wantRules(t, rep, "content-missing")

	wantRules(t, checkDir(t, out, Options{VerifyContent: true, ResourceBaseURL: "http://example.org/res/", Resources: files}))

	srv := httptest.NewServer(http.FileServer(http.Dir(files)))
	defer srv.Close()
	wantRules(t, checkDir(t, out, Options{VerifyContent: true, ResourceBaseURL: "http://example.org/res", Resources: srv.URL}))

	// A resource that changed where it is kept is reported.
	if err := os.WriteFile(filepath.Join(files, "a.txt"), []byte("other!"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := firstFinding(t, checkDir(t, out, Options{VerifyContent: true, ResourceBaseURL: "http://example.org/res/", Resources: files}), "content-hash")
	if !strings.Contains(f.Message, "http://example.org/res/a.txt") {
		t.Errorf("got %s, want the resource's URL", f)
	}
	if _, err := CheckDir(t.Context(), out, Options{BaseURL: "http://example.org/", Resources: files}); err == nil {
		t.Error("resources without a resource base URL: no error")
	}
}
