package generator_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/checker"
	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
)

// TestRealTrees builds trees nobody here wrote, present on every Debian
// machine with Go: /usr/share/doc and a copy of Go's own source, with
// every capability on; edits each twice (updates, deletions, creations, a
// folder renamed) and checks every build as the property test does: no
// finding of the checker, every resource read, every document valid.
// Without RSGEN_STRESS=1 only a part of /usr/share/doc is built: the
// packages whose names are prefixes of others (apt, apt-transport-https;
// python3, python3-dev, python3.11), which once failed every build with
// dumps. A tree that is missing is skipped, unless
// RSGEN_REQUIRE_REALTREES=1.
func TestRealTrees(t *testing.T) {
	t.Parallel() // among the longest tests of the package: they overlap
	goroot, _ := exec.Command("go", "env", "GOROOT").Output()
	trees := []struct{ name, dir string }{
		{"usr-share-doc", "/usr/share/doc"},
		{"goroot-src", filepath.Join(strings.TrimSpace(string(goroot)), "src")},
	}
	for _, tree := range trees {
		t.Run(tree.name, func(t *testing.T) {
			if _, err := os.Stat(tree.dir); err != nil {
				if os.Getenv("RSGEN_REQUIRE_REALTREES") == "1" {
					t.Fatalf("%s is missing and RSGEN_REQUIRE_REALTREES=1", tree.dir)
				}
				t.Skipf("%s is missing: not built", tree.dir)
			}
			if !stress() && tree.name != "usr-share-doc" {
				t.Skip("built with RSGEN_STRESS=1")
			}
			var only func(name string) bool
			if !stress() {
				only = func(name string) bool { return strings.HasPrefix(name, "apt") || strings.HasPrefix(name, "python3") }
			}
			buildRealTree(t, tree.dir, only)
		})
	}
}

// buildRealTree builds the tree at dir, or the entries of its top folder
// that only accepts when it is not nil.
func buildRealTree(t *testing.T, dir string, only func(name string) bool) {
	s := newSite(t, testBaseURL, func(c *config.Config) {
		c.ChangeList.Rotate = config.Duration{Duration: time.Hour}
		c.Dumps.ResourceDump, c.Dumps.ChangeDump = true, true
		c.Dumps.PackageSize = 16 << 20
		c.Archives = config.Archives{ChangeLists: true, ChangeDumps: true, ResourceLists: true, ResourceDumps: true,
			SnapshotEvery: config.Duration{Duration: time.Hour}}
		c.Publish.Targets = []config.Target{"github-pages", "netlify", "nginx", "apache"}
		c.Publish.HTMLLink = true
		c.Sets = []config.Set{{Name: "all", SetLinks: config.SetLinks{KeepVersions: true, Patches: true, Alternates: "alternate"}}}
	})
	copyTree(t, dir, s.Source, only)
	start := time.Now()
	files := realBuild(t, s, t0)
	t.Logf("%s: %d resources, first build in %s", dir, files, time.Since(start).Round(time.Millisecond))

	// Two rounds of edits: every 7th file updated, every 11th deleted, new
	// files beside existing ones, and a folder renamed.
	for round := 1; round <= 2; round++ {
		var paths []string
		filepath.WalkDir(s.Source, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				paths = append(paths, p)
			}
			return nil
		})
		slices.Sort(paths)
		for i, p := range paths {
			switch {
			case i%7 == round:
				appendTo(t, p, fmt.Sprintf("\nedited in round %d\n", round))
			case i%11 == round:
				os.Remove(p)
			case i%13 == round:
				os.WriteFile(p+fmt.Sprintf("-new-%d.txt", round), []byte("new\n"), 0o644)
			}
		}
		renameAFolder(t, s.Source, round)
		realBuild(t, s, t0.Add(time.Duration(round)*2*time.Hour))
	}
}

// realBuild builds s at now, allowing the warnings a real tree brings
// (links not followed, pages without a head, JSON that is not), and checks
// the output. It returns the number of resources.
func realBuild(t *testing.T, s *site, now time.Time) int {
	t.Helper()
	sum, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: now, Notify: func(n generator.Note) {
		if isTestWarning(n) && !expectedRealTreeWarning(n.Msg) {
			t.Errorf("build at %s warned: %s: %s", now.Format(time.RFC3339), n.Path, n.Msg)
		}
	}})
	if err != nil {
		t.Fatalf("build at %s: %v", now.Format(time.RFC3339), err)
	}
	rep, err := checker.CheckDir(context.Background(), s.Out, checker.Options{BaseURL: s.Cfg.BaseURL, VerifyContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		t.Errorf("build at %s: rsgen check --strict: %s", now.Format(time.RFC3339), f)
	}
	validateTree(t, s.Out)
	return sum.Files
}

func expectedRealTreeWarning(msg string) bool {
	for _, w := range []string{"symbolic link", "no <head> start tag", "no JSON Patch", "not published:"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// copyTree copies the tree at src to dst as cp -a does, links as links;
// only the entries of its top folder that only accepts, when only is set.
func copyTree(t *testing.T, src, dst string, only func(string) bool) {
	t.Helper()
	os.RemoveAll(dst)
	if only == nil {
		if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
			t.Fatalf("cp -a %s: %v\n%s", src, err, out)
		}
	} else {
		os.MkdirAll(dst, 0o755)
		entries, _ := os.ReadDir(src)
		for _, e := range entries {
			if only(e.Name()) {
				if out, err := exec.Command("cp", "-a", filepath.Join(src, e.Name()), dst).CombinedOutput(); err != nil {
					t.Fatalf("cp -a %s: %v\n%s", e.Name(), err, out)
				}
			}
		}
	}
	// Files the test user cannot write (a root-owned copy) become writable.
	exec.Command("chmod", "-R", "u+w", dst).Run()
}

func appendTo(t *testing.T, p, text string) {
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(text)
	f.Close()
}

// renameAFolder renames the round-th folder directly under root.
func renameAFolder(t *testing.T, root string, round int) {
	entries, _ := os.ReadDir(root)
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			dirs = append(dirs, e.Name())
		}
	}
	if len(dirs) <= round {
		return
	}
	from := filepath.Join(root, dirs[round])
	if err := os.Rename(from, from+"-renamed"); err != nil {
		t.Fatal(err)
	}
}
