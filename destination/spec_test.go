package destination_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rsgen/rsgen/destination"
)

// specExample copies the specification's example NN to path p of the
// folder dir.
func specExample(t *testing.T, dir, nn, p string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "spec-examples", "ex-"+nn+".xml"))
	if err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSpecExamples follows the specification's examples where they make
// a Source: the Source Description of example 7 leads to the Capability
// List of example 6, whose Resource List is example 1 (no digests, no
// lengths) and whose Change List is example 18 (an event without a time,
// a deletion of what was never there); the Resource Dump of example 4
// lists a package of unknown length, which is not worth fetching. With
// the Resource List of example 2, whose digests are of bytes nobody has,
// nothing is replaced. Example 11 lists three Capability Lists.
func TestSpecExamples(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"res1": "one", "res2": "two"}
	for p, c := range files {
		os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644)
	}
	specExample(t, dir, "07", ".well-known/resourcesync")
	specExample(t, dir, "06", "dataset1/capabilitylist.xml")
	specExample(t, dir, "01", "dataset1/resourcelist.xml")
	specExample(t, dir, "04", "dataset1/resourcedump.xml")
	srv := serveFolders(t, map[string]string{"/": dir})
	mirror := filepath.Join(t.TempDir(), "mirror")
	o := destination.Options{Source: "http://example.com/", Dir: mirror, Maps: []destination.Map{{From: "http://example.com/", To: srv.URL()}}}
	if sum := mustSync(t, o); sum.Set != "dataset1" || sum.Fetched != 2 {
		t.Errorf("baseline: set %q, %d fetched", sum.Set, sum.Fetched)
	}
	sameTree(t, treeOf(t, mirror), files)

	specExample(t, dir, "18", "dataset1/changelist.xml")
	os.WriteFile(filepath.Join(dir, "res1.html"), []byte("<p>1</p>"), 0o644)
	os.WriteFile(filepath.Join(dir, "res2.pdf"), []byte("%PDF"), 0o644)
	if sum := mustSync(t, o); sum.Mode != "incremental" || sum.Fetched != 2 || sum.Deleted != 0 {
		t.Errorf("example 18: %s, %d fetched, %d deleted; want incremental, 2, 0", sum.Mode, sum.Fetched, sum.Deleted)
	}
	sameTree(t, treeOf(t, mirror), map[string]string{"res1": "one", "res2": "two", "res1.html": "<p>1</p>", "res2.pdf": "%PDF"})

	specExample(t, dir, "02", "dataset1/resourcelist.xml")
	o.Baseline = true
	sum, events, err := run(t, o)
	if !errors.Is(err, destination.ErrIncomplete) || sum.Failed != 2 || !hasEvent(events, destination.EventFailed, "md5 is ") {
		t.Errorf("example 2: %v, %d failed:%s", err, sum.Failed, describe(events))
	}
	sameTree(t, treeOf(t, mirror), files)

	specExample(t, dir, "11", ".well-known/resourcesync")
	_, _, err = run(t, destination.Options{Source: "http://example.com/", Dir: filepath.Join(t.TempDir(), "m"), Maps: o.Maps})
	var usage *destination.UsageError
	if !errors.As(err, &usage) || strings.Count(err.Error(), "http://example.com/capabilitylist") != 3 {
		t.Errorf("example 11: %v, want the three sets listed", err)
	}
}
