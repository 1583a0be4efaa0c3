package generator_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
)

// TestFileRemovedAfterTheScan: a source file removed after the scan read
// it, before the build placed it, packed it in a dump or kept it as a
// version, is left out as a file removed during the scan is: the build
// scans again and publishes its deletion, or nothing of a file never
// published (#33: the build failed, 4 of 60 under a racer).
func TestFileRemovedAfterTheScan(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tweak   func(*config.Config)
		prepare func(s *site) // before the second build
		when    func(n generator.Note) bool
		gone    string // the file removed
		deleted int    // the deletions the build publishes
	}{
		{"replaced, then removed before its placement", nil,
			func(s *site) { s.replace("a.txt", "a2") },
			func(n generator.Note) bool { return n.Kind == generator.NoteHashed && n.Path == "a.txt" }, "a.txt", 1},
		{"new, removed before its dump package", func(c *config.Config) { c.Dumps.ResourceDump = true },
			func(s *site) { s.write("n.txt", "new"); s.Cfg.Publish.Stylesheet = true },
			stylesheetWritten, "n.txt", 0},
		{"updated in place, removed before its version is kept", func(c *config.Config) {
			c.Sets = []config.Set{{Name: "default", SetLinks: config.SetLinks{KeepVersions: true}}}
		},
			func(s *site) { s.write("a.txt", "a2"); s.Cfg.Publish.Stylesheet = true },
			stylesheetWritten, "a.txt", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, testBaseURL, tc.tweak)
			s.write("a.txt", "a")
			s.write("b.txt", "b")
			s.build(t0)
			tc.prepare(s)
			var once sync.Once
			var warnings []string
			sum, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: t0.Add(time.Hour), Notify: func(n generator.Note) {
				if tc.when(n) {
					once.Do(func() { s.remove(tc.gone) })
				}
				if isTestWarning(n) {
					warnings = append(warnings, n.Path+": "+n.Msg)
				}
			}})
			if err != nil {
				t.Fatalf("the build failed: %v", err)
			}
			if len(warnings) > 0 {
				t.Errorf("warnings: %v", warnings)
			}
			if sum.Deleted != tc.deleted || sum.Created+sum.Updated != 0 {
				t.Errorf("%d created, %d updated, %d deleted; want %d deleted only", sum.Created, sum.Updated, sum.Deleted, tc.deleted)
			}
			for _, e := range s.doc("resourcesync/default/resourcelist.xml").Entries {
				if strings.HasSuffix(e.Loc, "/"+tc.gone) {
					t.Errorf("the Resource List lists %s, removed before the build placed it", tc.gone)
				}
			}
			generator.CheckPublished(t, s.Cfg)
		})
	}
}

// stylesheetWritten reports the note of the stylesheet written: a build
// writes it once it has placed the resources, before it keeps versions
// and writes dumps (turned on for the build that expects it).
func stylesheetWritten(n generator.Note) bool {
	return n.Kind == generator.NoteWritten && n.Path == generator.StylesheetPath
}

// TestFileThatKeepsGoing: a file removed after each scan read it, and
// back for the next scan, fails the build after three scans, naming it.
func TestFileThatKeepsGoing(t *testing.T) {
	s := newSite(t, testBaseURL, nil)
	s.write("a.txt", "a")
	s.build(t0)
	s.replace("a.txt", "a2")
	reads := 0
	_, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: t0.Add(time.Hour), Notify: func(n generator.Note) {
		switch {
		case n.Kind == generator.NoteHashed && n.Path == "a.txt":
			reads++
			s.remove("a.txt")
		case n.Kind == generator.NoteInfo && strings.Contains(n.Msg, "scanning the source again"):
			s.replace("a.txt", "a2")
		}
	}})
	if err == nil || !strings.Contains(err.Error(), "a.txt: removed since the scan") || !strings.Contains(err.Error(), "scanned 3 times") {
		t.Fatalf("err = %v, want a.txt removed since the scan, scanned 3 times", err)
	}
	if reads != 3 {
		t.Errorf("a.txt was read %d times, want 3", reads)
	}
}
