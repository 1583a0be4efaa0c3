package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestExampleSiteBuildsCleanly runs the README's first command on a copy of
// the example site: it builds with no warning (a newcomer's first build
// should not look broken), and the output passes rsgen check --strict with
// the content of every resource verified.
func TestExampleSiteBuildsCleanly(t *testing.T) {
	ws := t.TempDir()
	copyTree(t, "../../example-site/site", filepath.Join(ws, "site"))
	copyTree(t, "../../example-site/rsgen.toml", filepath.Join(ws, "rsgen.toml"))
	var stdout, stderr bytes.Buffer
	cio := cliIO{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	if code := run(context.Background(), cio, []string{"build", "--config", filepath.Join(ws, "rsgen.toml")}); code != exitOK || stderr.Len() > 0 {
		t.Fatalf("build: exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "0 updated, 0 deleted") {
		t.Errorf("build: %s", stdout.String())
	}
	stdout.Reset()
	if code := run(context.Background(), cio, []string{"check", "--strict", "--verify-content", filepath.Join(ws, "public")}); code != exitOK || stderr.Len() > 0 {
		t.Fatalf("check: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "0 errors, 0 warnings") {
		t.Errorf("check: %s", stdout.String())
	}
}
