package generator_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestIntentOfAFailedBuildIsCompleted: a build that failed or was killed
// while it renamed its staged files into place leaves a record of what it
// was publishing (intent.go). The next build removes the documents it
// added that nothing lists and the copies of the resources it deleted,
// even though its state never knew them, keeps what it publishes itself,
// and drops the record.
func TestIntentOfAFailedBuildIsCompleted(t *testing.T) {
	s := newSite(t, testBaseURL, nil)
	s.write("kept.txt", "kept\n")
	s.write("back.txt", "back\n")
	s.build(t0)

	// What the failed build left: a Change List of its own time; the copy
	// of a resource it deleted, which the state (rebuilt from the output
	// it published) does not know; and a record naming both, and
	// back.txt, which it deleted but which is in the source again.
	gone := filepath.Join(s.Out, "gone.txt")
	if err := os.WriteFile(gone, []byte("gone\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	orphan := filepath.Join(s.Out, "resourcesync/default/changelists/changelist-20240301T083000Z.xml")
	if err := os.WriteFile(orphan, []byte("<urlset/>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	record := "+ \"resourcesync/default/changelists/changelist-20240301T083000Z.xml\"\n" +
		"+ \"resourcesync/default/resourcelist.xml\"\n" +
		"- \"gone.txt\"\n- \"back.txt\"\n"
	if err := os.WriteFile(filepath.Join(s.State, "publishing"), []byte(record), 0o644); err != nil {
		t.Fatal(err)
	}

	s.build(t0.Add(time.Hour))
	for _, p := range []string{orphan, gone, filepath.Join(s.State, "publishing")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	for _, rel := range []string{"kept.txt", "back.txt", "resourcesync/default/resourcelist.xml"} {
		if _, err := os.Lstat(filepath.Join(s.Out, rel)); err != nil {
			t.Errorf("%s was removed: %v", rel, err)
		}
	}
}
