package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// workflow is the part of a GitHub Actions workflow the test reads.
type workflow struct {
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Steps []struct {
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// TestGitHubPagesWorkflowKeepsTheState parses the documented GitHub Pages
// workflow and runs its rsgen steps as two runs on fresh runners, locally
// and without network: the state folder is carried from one run to the
// next as its cache steps say, or, when the cache is gone, the previous
// run's output is put back as its fallback step does. Either way the
// second run publishes only the file that changed, not every file as
// created.
func TestGitHubPagesWorkflowKeepsTheState(t *testing.T) {
	data, err := os.ReadFile("../../example-site/github-pages-workflow.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf workflow
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("github-pages-workflow.yml: %v", err)
	}
	build, ok := wf.Jobs["build"]
	if !ok {
		t.Fatal("the workflow has no build job")
	}
	var rsgenSteps []string
	installs := 0
	var restorePath, savePath, uploadPath string
	for _, st := range build.Steps {
		switch {
		case strings.HasPrefix(st.Uses, "actions/cache/restore@"):
			restorePath = st.With["path"]
		case strings.HasPrefix(st.Uses, "actions/cache/save@"):
			savePath = st.With["path"]
		case strings.HasPrefix(st.Uses, "actions/upload-pages-artifact@"):
			uploadPath = st.With["path"]
			if st.With["include-hidden-files"] != "true" {
				t.Error("the Pages artifact leaves out hidden files, and so .well-known/resourcesync: set include-hidden-files: true")
			}
		case strings.HasPrefix(strings.TrimSpace(st.Run), "rsgen "):
			rsgenSteps = append(rsgenSteps, st.Run)
		case strings.Contains(st.Run, "go install"):
			installs++
			// @latest would bring in any new release between two pushes.
			if !strings.Contains(st.Run, "@${RSGEN_VERSION}") || !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(wf.Env["RSGEN_VERSION"]) {
				t.Errorf("the workflow installs rsgen with %q (RSGEN_VERSION %q): pin a release, vX.Y.Z, in RSGEN_VERSION", st.Run, wf.Env["RSGEN_VERSION"])
			}
		}
	}
	if installs != 1 {
		t.Errorf("%d steps install rsgen, want 1", installs)
	}
	if restorePath == "" || restorePath != savePath || restorePath != wf.Env["RSGEN_STATE"] {
		t.Fatalf("the cache steps restore %q and save %q; the build's state is %q", restorePath, savePath, wf.Env["RSGEN_STATE"])
	}
	if uploadPath != wf.Env["RSGEN_OUT"] {
		t.Fatalf("the workflow uploads %q, but builds into %q", uploadPath, wf.Env["RSGEN_OUT"])
	}
	if len(rsgenSteps) < 2 || !strings.Contains(rsgenSteps[0], "rsgen build") {
		t.Fatalf("rsgen steps %q: want a build, then more", rsgenSteps)
	}

	bin := filepath.Dir(rsgenBinary(t)) // a folder of rsgen alone, for PATH
	// checkout gives a fresh copy of the repository on every run.
	checkout := func(edit bool) string {
		ws := t.TempDir()
		copyTree(t, "../../example-site/site", filepath.Join(ws, "site"))
		cfg, err := os.ReadFile("../../example-site/rsgen.toml")
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(ws, wf.Env["RSGEN_CONFIG"]), string(cfg))
		if edit {
			writeFile(t, filepath.Join(ws, "site/data/catalogue.csv"), "id,title\n1,changed\n")
		}
		return ws
	}
	// runSteps runs the workflow's rsgen steps in ws at a build time and
	// returns the build's --json summary.
	runSteps := func(ws, epoch string) jsonSummary {
		for _, script := range rsgenSteps {
			cmd := exec.Command("sh", "-e", "-c", script)
			cmd.Dir = ws
			cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "SOURCE_DATE_EPOCH="+epoch)
			for k, v := range wf.Env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("step %q: %v\n%s", script, err, out)
			}
		}
		var sum jsonSummary
		data, err := os.ReadFile(filepath.Join(ws, "rsgen-summary.json"))
		if err == nil {
			err = json.Unmarshal(data, &sum)
		}
		if err != nil {
			t.Fatalf("the build step's --json summary: %v", err)
		}
		return sum
	}

	first := checkout(false)
	sum := runSteps(first, "1767225600")
	if !sum.OK || sum.Resources.Total == 0 || sum.Resources.Created != sum.Resources.Total {
		t.Fatalf("first run: %+v", sum.Resources)
	}

	t.Run("cached state", func(t *testing.T) {
		ws := checkout(true)
		copyTree(t, filepath.Join(first, restorePath), filepath.Join(ws, restorePath))
		sum := runSteps(ws, "1767229200")
		if sum.Resources.Created != 0 || sum.Resources.Updated != 1 || sum.Resources.Deleted != 0 {
			t.Errorf("second run with the cached state: %+v, want exactly one update", sum.Resources)
		}
		checkPublishedEvents(t, filepath.Join(ws, wf.Env["RSGEN_OUT"]))
	})
	t.Run("state recovered from the published output", func(t *testing.T) {
		ws := checkout(true)
		copyTree(t, filepath.Join(first, uploadPath), filepath.Join(ws, wf.Env["RSGEN_OUT"]))
		runSteps(ws, "1767229200")
		// Files in no set are in no document, so a recovered state does not
		// know them and counts them as created; no Change List lists them.
		checkPublishedEvents(t, filepath.Join(ws, wf.Env["RSGEN_OUT"]))
	})
}

// checkPublishedEvents checks that the Change Lists in out publish one
// event, the update of the edited file.
func checkPublishedEvents(t *testing.T, out string) {
	t.Helper()
	lists, err := filepath.Glob(filepath.Join(out, "resourcesync", "*", "changelists", "*.xml"))
	if err != nil || len(lists) == 0 {
		t.Fatalf("no Change Lists in %s: %v", out, err)
	}
	var events []string
	for _, l := range lists {
		data, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, strings.Split(string(data), "<url>")[1:]...)
	}
	if len(events) != 1 || !strings.Contains(events[0], "data/catalogue.csv</loc>") || !strings.Contains(events[0], `change="updated"`) {
		t.Errorf("the Change Lists publish %d events, want the update of data/catalogue.csv alone:\n%s", len(events), strings.Join(events, "\n"))
	}
}

// copyTree copies the regular files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		writeFile(t, filepath.Join(dst, rel), string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
