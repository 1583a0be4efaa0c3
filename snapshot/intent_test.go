package snapshot

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestIntentRoundTrip: a record names any path, newlines and quotes
// included; a torn last line is ignored; Clear removes it; and an empty
// record writes no file.
func TestIntentRoundTrip(t *testing.T) {
	dir := t.TempDir()
	in := Intent{Added: []string{"resourcesync/s/a.xml", "odd \"name\"\nwith a newline"}, Deleted: []string{"gone.txt"}}
	save := func(in Intent) error {
		return SaveIntent(dir, func(w *IntentWriter) error {
			for _, p := range in.Added {
				w.Add(p)
			}
			for _, p := range in.Deleted {
				w.Delete(p)
			}
			return nil
		})
	}
	if err := save(in); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, PublishingFile)
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`+ "torn`) // a crash while the record was written
	f.Close()
	got, err := LoadIntent(dir)
	if err != nil || !slices.Equal(got.Added, in.Added) || !slices.Equal(got.Deleted, in.Deleted) {
		t.Fatalf("LoadIntent: %+v, %v; want %+v", got, err, in)
	}
	if err := ClearIntent(dir); err != nil {
		t.Fatal(err)
	}
	if got, _ := LoadIntent(dir); len(got.Added)+len(got.Deleted) != 0 {
		t.Errorf("after ClearIntent: %+v", got)
	}
	if err := save(Intent{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("an empty record wrote %s", p)
	}
}
