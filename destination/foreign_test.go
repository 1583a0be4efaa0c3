package destination_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rsgen/rsgen/destination"
)

// foreignDir holds the Sources that resync 2.0.1's own resync-build
// wrote: what nobody here wrote (a copy of shared/foreign-sources; see
// its README).
const foreignDir = "../testdata/foreign-sources/resync-build-2.0.1"

// foreignStage returns the folders of one stage of a foreign Source, as
// its README says they are served: documents/ at /, files/ at /files/.
func foreignStage(t *testing.T, source, stage string) map[string]string {
	t.Helper()
	dir := filepath.Join(foreignDir, source, stage)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the foreign Sources are not there: %v", err)
	}
	return map[string]string{"/": filepath.Join(dir, "documents"), "/files/": filepath.Join(dir, "files")}
}

// TestForeignSources mirrors the two Sources resync-build wrote, v1 byte
// for byte, then follows them to v2 through their Change Lists: a Change
// List without from or until, fractional seconds, several digests in one
// hash attribute, a Capability List that names changelist.xml at the
// top, and (split) a Resource List index over resourcelist0000N.xml.
func TestForeignSources(t *testing.T) {
	for _, source := range []string{"plain", "split"} {
		for _, dumps := range []destination.DumpPolicy{destination.DumpsNever, destination.DumpsAlways} {
			t.Run(source+"/dumps-"+dumps.String(), func(t *testing.T) {
				srv := serveFolders(t, foreignStage(t, source, "v1"))
				dir := filepath.Join(t.TempDir(), "mirror")
				o := destination.Options{Source: "https://sample.example/", Dir: dir, Dumps: dumps,
					Maps: []destination.Map{{From: "https://sample.example/", To: srv.URL()}}}

				sum := mustSync(t, o)
				if sum.Mode != "baseline" {
					t.Errorf("first sync: mode %q, want baseline", sum.Mode)
				}
				if dumps == destination.DumpsAlways && sum.FromDumps == 0 {
					t.Errorf("--dumps always: no file came from the Resource Dump")
				}
				sameTree(t, treeOf(t, dir), prefixed(treeOf(t, filepath.Join(foreignDir, source, "v1", "files")), "files/"))

				srv.set(foreignStage(t, source, "v2"))
				sum, events, err := run(t, o)
				if err != nil {
					t.Fatalf("second sync: %v%s", err, describe(events))
				}
				if sum.Mode != "incremental" {
					t.Errorf("second sync: mode %q, want incremental", sum.Mode)
				}
				if !hasEvent(events, destination.EventInfo, "changelist.xml gives no from") {
					t.Errorf("no word that the Change List gives no from:%s", describe(events))
				}
				if sum.Fetched != 3 || sum.Deleted != 2 {
					t.Errorf("second sync: %d fetched, %d deleted; want the 3 updates and creates and the 2 deletes", sum.Fetched, sum.Deleted)
				}
				sameTree(t, treeOf(t, dir), prefixed(treeOf(t, filepath.Join(foreignDir, source, "v2", "files")), "files/"))
				if empty := emptyFolders(t, dir); len(empty) > 0 {
					t.Errorf("empty folders left: %v", empty)
				}
				if _, events, err := audit(t, o); err != nil {
					t.Errorf("audit after v2: %v%s", err, describe(events))
				}
			})
		}
	}
}
