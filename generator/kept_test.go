package generator_test

// Tests of the closed and kept material (items 2, 5, 7, 10-12 of #13):
// closed documents are never empty, Change Dump packages lie inside their
// dump's interval, and what no build can make again survives a kill, a
// lost state, a wiped output and a damaged copy, or is never published
// broken.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
)

// keptSite has every capability whose material cannot be made again:
// dumps, all archives (a snapshot every two hours), versions with patches.
func keptSite(t *testing.T) *site {
	return newSite(t, testBaseURL, func(c *config.Config) {
		c.ChangeList.Rotate = config.Duration{Duration: time.Hour}
		c.Dumps.ResourceDump, c.Dumps.ChangeDump = true, true
		c.Archives = config.Archives{ChangeLists: true, ChangeDumps: true, ResourceLists: true, ResourceDumps: true,
			SnapshotEvery: config.Duration{Duration: 2 * time.Hour}}
		c.Sets = []config.Set{{Name: "default", SetLinks: config.SetLinks{KeepVersions: true, Patches: true}}}
	})
}

// playHistory gives s ten builds an hour apart with creations, updates and
// deletions, so that Change Lists and Change Dumps closed, Resource Lists
// and Resource Dumps were archived and packages of archived dumps are no
// longer live. It returns the time of the last build.
func playHistory(s *site) time.Time {
	at := t0
	for i := range 10 {
		at = t0.Add(time.Duration(i) * time.Hour)
		s.write("a.json", `{"v": `+string(rune('0'+i))+`}`)
		if i%3 == 0 {
			s.write("n"+string(rune('0'+i))+".txt", "new")
		}
		if i%3 == 1 {
			s.remove("n" + string(rune('0'+i-1)) + ".txt")
		}
		s.build(at)
	}
	return at
}

// closedDocuments returns the closed Change Lists and Change Dumps of the
// output, by output path.
func closedDocuments(t *testing.T, s *site) map[string]*doc {
	docs := map[string]*doc{}
	for _, idx := range []string{"resourcesync/default/changelist.xml", "resourcesync/default/changedump.xml"} {
		for _, e := range s.doc(idx).Entries {
			if e.MD().Until != "" {
				rel, d := s.docAt(e.Loc)
				docs[rel] = d
			}
		}
	}
	return docs
}

// TestClosedDocumentsAreNeverEmpty: builds without changes across many
// rotation periods close nothing; the open list closes only once it holds
// a change, and every closed Change List and Change Dump has entries.
func TestClosedDocumentsAreNeverEmpty(t *testing.T) {
	s := newSite(t, testBaseURL, func(c *config.Config) { c.Dumps.ChangeDump = true })
	s.write("a.txt", "a")
	s.build(t0)
	for day := 1; day <= 3; day++ {
		s.build(t0.Add(time.Duration(day) * 25 * time.Hour))
	}
	if n := len(s.doc("resourcesync/default/changelist.xml").Entries); n != 1 {
		t.Errorf("after three rotation periods without changes the index lists %d Change Lists, want the one open list", n)
	}
	s.write("a.txt", "a2")
	s.build(t0.Add(80 * time.Hour))  // into the open list, opened at t0
	s.build(t0.Add(110 * time.Hour)) // closes it: older than a day, and not empty
	s.build(t0.Add(140 * time.Hour)) // the new list is empty: it stays open
	closed := closedDocuments(t, s)
	if len(closed) != 2 {
		t.Fatalf("%d closed documents, want a Change List and a Change Dump", len(closed))
	}
	for rel, d := range closed {
		if len(d.Entries) == 0 {
			t.Errorf("%s is closed and empty", rel)
		}
	}
	validateTree(t, s.Out)
}

// TestChangeDumpPackagesInsideTheirDump: a package written by a build that
// rotates the lists lies in the new Change Dump, from its from.
func TestChangeDumpPackagesInsideTheirDump(t *testing.T) {
	s := newSite(t, testBaseURL, func(c *config.Config) {
		c.Dumps.ChangeDump = true
		c.ChangeList.Rotate = config.Duration{Duration: time.Hour}
	})
	s.write("a.txt", "a")
	s.build(t0)
	for i := 1; i <= 4; i++ {
		s.write("a.txt", strings.Repeat("a", i+1))
		s.build(t0.Add(time.Duration(i*50) * time.Minute))
	}
	for _, e := range s.doc("resourcesync/default/changedump.xml").Entries {
		_, d := s.docAt(e.Loc)
		from, until := parseTime(t, d.MD.From), time.Unix(1<<40, 0)
		if d.MD.Until != "" {
			until = parseTime(t, d.MD.Until)
		}
		for _, p := range d.Entries {
			if pf, pu := parseTime(t, p.MD().From), parseTime(t, p.MD().Until); pf.Before(from) || pu.After(until) {
				t.Errorf("%s lists %s from %s until %s, outside its own %s to %s", e.Loc, p.Loc, p.MD().From, p.MD().Until, d.MD.From, d.MD.Until)
			}
		}
	}
}

// TestHTMLLinkToggleIsAnUpdate: switching html_link changes the published
// bytes of the HTML resources, so each such switch publishes them as
// updated with their new hash (CheckPublished compares every hash with
// the bytes).
func TestHTMLLinkToggleIsAnUpdate(t *testing.T) {
	s := newSite(t, testBaseURL, nil)
	s.write("p.html", "<html><head><title>p</title></head></html>")
	s.write("q.txt", "q")
	s.build(t0)
	for i, on := range []bool{true, false, true} {
		s.Cfg.Publish.HTMLLink = on
		sum := s.build(t0.Add(time.Duration(i+1) * time.Minute))
		if sum.Updated != 1 || len(sum.Events) != 1 || sum.Events[0].Record.Path != "p.html" {
			t.Errorf("html_link = %v: events %v, want p.html updated", on, sum.Events)
		}
	}
	if sum := s.build(t0.Add(10 * time.Minute)); len(sum.Events) != 0 {
		t.Errorf("a build without a change found %v", sum.Events)
	}
}

// TestStateLossKeepsArchivesAndVersions: with the state folder lost, the
// next build rebuilds it from the output, archives, kept versions and
// TimeMaps included, and publishes the same documents as before the loss.
func TestStateLossKeepsArchivesAndVersions(t *testing.T) {
	t.Parallel() // builds a history of its own: overlaps the other long tests
	s := keptSite(t)
	last := playHistory(s)
	before := readTree(t, s.Out)
	if err := os.RemoveAll(s.State); err != nil {
		t.Fatal(err)
	}
	s.buildExpecting(last.Add(time.Minute))
	if d := diffBytes(before, readTree(t, s.Out)); len(d) > 0 {
		t.Errorf("the output after a lost state differs from the output before:\n%v", d)
	}
	generator.CheckReferences(t, s.Cfg)
}

// TestRecoveryKeepsArchivedPackages: a state rebuilt from the output (as
// after a killed build) goes on listing, and publishing, the packages of
// archived Resource Dumps that the live dump no longer lists.
func TestRecoveryKeepsArchivedPackages(t *testing.T) {
	t.Parallel() // builds a history of its own: overlaps the other long tests
	s := keptSite(t)
	last := playHistory(s)
	before := readTree(t, s.Out)
	s.buildWithOpts(generator.Options{Now: last.Add(time.Minute), StateFromOutput: true})
	if d := diffBytes(before, readTree(t, s.Out)); len(d) > 0 {
		t.Errorf("a build from a recovered state changed the output:\n%v", d)
	}
	generator.CheckReferences(t, s.Cfg)
}

// TestWipedOutputIsRebuiltWhole: an output folder built afresh (a CI
// runner that keeps only the state) gets back every closed document,
// archived document, package and version, byte for byte.
func TestWipedOutputIsRebuiltWhole(t *testing.T) {
	t.Parallel() // builds a history of its own: overlaps the other long tests
	s := keptSite(t)
	last := playHistory(s)
	before := readTree(t, s.Out)
	if err := os.RemoveAll(s.Out); err != nil {
		t.Fatal(err)
	}
	s.buildExpecting(last.Add(time.Minute))
	if d := diffBytes(before, readTree(t, s.Out)); len(d) > 0 {
		t.Errorf("the rebuilt output differs:\n%v", d)
	}
}

// TestWipedOutputSharedPackages: a Resource Dump package that the live
// dump and archived dumps both list is restored once into a wiped output,
// whatever else keeps files (the reproduction of #33: the package was
// restored three times under one temporary name, and the build failed).
func TestWipedOutputSharedPackages(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tweak func(*config.Config)
	}{
		{"live and archived Resource Dumps", func(c *config.Config) {
			c.Dumps.ResourceDump = true
			c.Archives = config.Archives{ResourceDumps: true, SnapshotEvery: config.Duration{Duration: 12 * time.Hour}}
		}},
		{"every kept file", func(c *config.Config) {
			c.Dumps.ResourceDump, c.Dumps.ChangeDump = true, true
			c.Archives = config.Archives{ChangeLists: true, ChangeDumps: true, ResourceLists: true, ResourceDumps: true,
				SnapshotEvery: config.Duration{Duration: 12 * time.Hour}}
			c.Sets = []config.Set{{Name: "default", SetLinks: config.SetLinks{KeepVersions: true, Patches: true}}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, testBaseURL, func(c *config.Config) {
				tc.tweak(c)
				c.Dumps.PackageSize = 1 << 10
			})
			s.write("a.json", `{"v": 1}`)
			s.build(t0)
			s.write("b.txt", "b")
			s.build(t0.Add(13 * time.Hour))
			s.write("a.json", `{"v": 2}`)
			s.build(t0.Add(26 * time.Hour))
			before := readTree(t, s.Out)
			if err := os.RemoveAll(s.Out); err != nil {
				t.Fatal(err)
			}
			s.build(t0.Add(27 * time.Hour))
			if d := diffBytes(before, readTree(t, s.Out)); len(d) > 0 {
				t.Errorf("the rebuilt output differs:\n%v", d)
			}
		})
	}
}

// TestDamagedKeptFiles: a kept file damaged in the state folder is
// repaired from the output's copy; damaged in both (or in the state with
// the output wiped) it is never published: the documents that need it
// leave their indexes, with a warning, and the site stays valid.
func TestDamagedKeptFiles(t *testing.T) {
	t.Parallel() // builds a history of its own: overlaps the other long tests
	s := keptSite(t)
	last := playHistory(s)
	closed := closedDocuments(t, s)
	var victim string
	for rel := range closed {
		if strings.Contains(rel, "/changelists/") && (victim == "" || rel > victim) {
			victim = rel // the newest closed Change List
		}
	}
	damage := func(p string) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		data[len(data)/2] ^= 0x20
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	good := s.outFile(victim)
	inState := filepath.Join(s.State, "closed", filepath.FromSlash(victim))
	// Hard links share the damage: break the link first.
	os.Remove(inState)
	if err := os.WriteFile(inState, good, 0o644); err != nil {
		t.Fatal(err)
	}
	damage(inState)
	os.Remove(filepath.Join(s.Out, filepath.FromSlash(victim))) // the output lost it: the state's copy is needed, and damaged
	s.buildExpecting(last.Add(time.Minute), ": set default: the closed documents "+victim)
	if _, err := os.Stat(filepath.Join(s.Out, filepath.FromSlash(victim))); err == nil {
		t.Errorf("%s was published from a damaged copy", victim)
	}
	for _, e := range s.doc("resourcesync/default/changelist.xml").Entries {
		if strings.HasSuffix(e.Loc, victim) {
			t.Errorf("the index still lists %s", victim)
		}
	}
	validateTree(t, s.Out)
	generator.CheckReferences(t, s.Cfg)
}

// buildWithOpts runs one build with opts and fails on error or warning.
func (s *site) buildWithOpts(opts generator.Options) {
	s.t.Helper()
	if _, err := generator.Build(context.Background(), s.Cfg, opts); err != nil {
		s.t.Fatal(err)
	}
	generator.CheckPublished(s.t, s.Cfg)
}
