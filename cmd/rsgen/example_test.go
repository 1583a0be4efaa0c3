package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestExampleSiteBuildsCleanly runs the README's first command on a copy of
// the example site: it builds with no warning (a newcomer's first build
// should not look broken), and the output passes rsgen check --strict with
// the content of every resource verified. Build and check count the same
// documents and packages.
func TestExampleSiteBuildsCleanly(t *testing.T) {
	ws := t.TempDir()
	copyTree(t, "../../example-site/site", filepath.Join(ws, "site"))
	copyTree(t, "../../example-site/rsgen.toml", filepath.Join(ws, "rsgen.toml"))
	var stdout, stderr bytes.Buffer
	cio := cliIO{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	if code := run(context.Background(), cio, []string{"build", "--json", "--config", filepath.Join(ws, "rsgen.toml")}); code != exitOK || stderr.Len() > 0 {
		t.Fatalf("build: exit %d\n%s", code, stderr.String())
	}
	var built jsonSummary
	if err := json.Unmarshal(stdout.Bytes(), &built); err != nil || len(built.Warnings) > 0 {
		t.Fatalf("build: %v, warnings %v", err, built.Warnings)
	}
	stdout.Reset()
	if code := run(context.Background(), cio, []string{"check", "--strict", "--verify-content", "--format", "json", filepath.Join(ws, "public")}); code != exitOK || stderr.Len() > 0 {
		t.Fatalf("check: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	var checked struct{ Documents, Packages, Errors, Warnings int }
	if err := json.Unmarshal(stdout.Bytes(), &checked); err != nil || checked.Errors+checked.Warnings > 0 {
		t.Fatalf("check: %v\n%s", err, stdout.String())
	}
	if built.Documents.Written != checked.Documents || built.Packages.Written != checked.Packages || checked.Packages == 0 {
		t.Errorf("build wrote %d documents and %d packages, check read %d and %d",
			built.Documents.Written, built.Packages.Written, checked.Documents, checked.Packages)
	}
}
