package generator_test

import (
	"context"
	"os"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
)

// TestNoEmptyDocuments: with every capability on, through builds with and
// without changes, across rotations, and for a set that has no files,
// gains one and loses it again, no document but the open Change List is
// published empty: no empty Change List or Change Dump Archive, no empty
// open Change Dump (nor its index before the first change), no Resource
// List, Resource Dump or archived snapshot of a set without files. The
// Capability List lists what is published, always the Change List Index
// (#33). A state rebuilt from such an output, and a wiped output rebuilt
// from the state, give the same output back.
func TestNoEmptyDocuments(t *testing.T) {
	s := newSite(t, testBaseURL, func(c *config.Config) {
		c.ChangeList.Rotate = config.Duration{Duration: time.Hour}
		c.Dumps.ResourceDump, c.Dumps.ChangeDump = true, true
		c.Archives = config.Archives{ChangeLists: true, ChangeDumps: true, ResourceLists: true, ResourceDumps: true,
			SnapshotEvery: config.Duration{Duration: 2 * time.Hour}}
		c.Sets = []config.Set{{Name: "docs", Path: "docs"}, {Name: "later", Path: "later"}}
	})
	empty := ": set later publishes nothing"
	s.write("docs/a.txt", "a")
	steps := []struct {
		change   func()
		warnings []string
		// the capabilities each set's Capability List lists
		docs, later []string
	}{
		{func() {}, []string{empty},
			[]string{"resourcelist", "resourcedump", "changelist", "resourcelist-archive", "resourcedump-archive"},
			[]string{"changelist"}},
		{func() { s.write("docs/a.txt", "a2") }, []string{empty},
			[]string{"resourcelist", "resourcedump", "changelist", "changedump", "resourcelist-archive", "resourcedump-archive"},
			[]string{"changelist"}},
		{func() {}, []string{empty}, // closes the segments; the new open Change Dump is empty
			[]string{"resourcelist", "resourcedump", "changelist", "changedump", "resourcelist-archive", "resourcedump-archive", "changelist-archive", "changedump-archive"},
			[]string{"changelist"}},
		{func() { s.write("later/x.txt", "x") }, nil,
			[]string{"resourcelist", "resourcedump", "changelist", "changedump", "resourcelist-archive", "resourcedump-archive", "changelist-archive", "changedump-archive"},
			[]string{"resourcelist", "resourcedump", "changelist", "changedump", "resourcelist-archive", "resourcedump-archive"}},
		{func() { s.remove("later/x.txt") }, []string{empty},
			[]string{"resourcelist", "resourcedump", "changelist", "changedump", "resourcelist-archive", "resourcedump-archive", "changelist-archive", "changedump-archive"},
			[]string{"changelist", "changedump", "resourcelist-archive", "resourcedump-archive", "changelist-archive", "changedump-archive"}},
	}
	at := t0
	for i, step := range steps {
		step.change()
		at = t0.Add(time.Duration(i) * 90 * time.Minute)
		s.buildExpecting(at, step.warnings...)
		checkNoEmptyDocuments(t, s, at)
		for set, want := range map[string][]string{"docs": step.docs, "later": step.later} {
			var got []string
			for _, e := range s.doc("resourcesync/" + set + "/capabilitylist.xml").Entries {
				got = append(got, e.MD().Capability)
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("build %d: the Capability List of set %s lists %v, want %v", i+1, set, got, want)
			}
		}
	}
	validateTree(t, s.Out)

	before := readTree(t, s.Out)
	for _, lose := range []string{s.State, s.Out} {
		if err := os.RemoveAll(lose); err != nil {
			t.Fatal(err)
		}
		sum, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: at.Add(time.Minute)})
		if err != nil {
			t.Fatalf("build without %s: %v", path.Base(lose), err)
		}
		if len(sum.Events) != 0 {
			t.Errorf("the build without %s found %v", path.Base(lose), sum.Events)
		}
		if d := diffBytes(before, readTree(t, s.Out)); len(d) > 0 {
			t.Errorf("the build without %s changed the output:\n%v", path.Base(lose), d)
		}
	}
}

// checkNoEmptyDocuments fails the test for every document of the output
// without entries but the open Change Lists.
func checkNoEmptyDocuments(t *testing.T, s *site, at time.Time) {
	t.Helper()
	for rel, data := range readTree(t, s.Out) {
		if !strings.HasSuffix(rel, ".xml") && rel != ".well-known/resourcesync" || strings.Contains(rel, "/resourcedump/") || strings.Contains(rel, "/changedump/") {
			continue // resources, and the manifests' copies, which list their packages' files
		}
		d := parseDoc(t, rel, data)
		if len(d.Entries) == 0 && !(d.MD.Capability == "changelist" && d.Root == "urlset" && d.MD.Until == "") {
			t.Errorf("build at %s published %s without entries", at.Format(time.RFC3339), rel)
		}
	}
}
