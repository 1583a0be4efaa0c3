package generator_test

// Regression tests for the items of the real-trees issue (#13): each
// reproduces a tree, a sequence of builds or an input that once broke a
// build, lost data or leaked a file.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
)

// everything turns on every capability that has its own code path:
// dumps in small packages, all archives, versions and patches, links.
func everything(c *config.Config) {
	c.Dumps.ResourceDump, c.Dumps.ChangeDump = true, true
	c.Dumps.PackageSize = 16 << 10
	c.Archives = config.Archives{ChangeLists: true, ChangeDumps: true, ResourceLists: true, ResourceDumps: true,
		SnapshotEvery: config.Duration{Duration: time.Hour}}
	c.Publish.Targets = config.Targets
	c.Publish.HTMLLink = true
}

// TestFolderBesideDashedName: a folder X beside names X-… and X.… (apt/
// and apt-transport-https/ in /usr/share/doc) sort differently byte by
// byte than in a walk; dump planning once used the byte order and failed
// the build.
func TestFolderBesideDashedName(t *testing.T) {
	s := newSite(t, testBaseURL, everything)
	for _, p := range []string{"apt/copyright", "apt-transport-https/copyright", "apt.conf/x", "apt_x", "python3/README", "python3-dev/README", "python3.11/README"} {
		s.write(p, "text of "+p)
	}
	s.build(t0)
	s.write("apt/copyright", "changed")
	s.write("apt-transport-https/copyright", "changed too")
	s.write("python3.11/NEWS", "new")
	s.build(t0.Add(time.Minute))
	s.remove("apt.conf/x")
	s.build(t0.Add(2 * time.Minute))
}

// TestMtimeLastmodAgrees: with lastmod = "mtime", a Change List entry and
// the Resource List entry of the same version carry the same lastmod (the
// reference client's audit compares them), and the Change Dump manifest
// too; the change time stays in datetime.
func TestMtimeLastmodAgrees(t *testing.T) {
	s := newSite(t, testBaseURL, func(c *config.Config) {
		c.Lastmod = "mtime"
		c.Dumps.ChangeDump = true
	})
	s.write("a.txt", "a")
	s.write("b.txt", "b")
	s.touch("a.txt", t0.Add(-48*time.Hour))
	s.build(t0)
	s.write("a.txt", "a, revised")
	s.touch("a.txt", t0.Add(-time.Hour))
	s.write("c.txt", "c")
	s.touch("c.txt", t0.Add(-2*time.Hour))
	s.build(t0.Add(time.Minute))

	lastmod := map[string]string{}
	for _, e := range s.doc("resourcesync/default/resourcelist.xml").Entries {
		lastmod[e.Loc] = e.Lastmod
	}
	cl := s.doc("resourcesync/default/changelists/changelist-20240301T080000Z.xml")
	if len(cl.Entries) != 2 {
		t.Fatalf("Change List has %d entries, want 2", len(cl.Entries))
	}
	for _, e := range cl.Entries {
		if e.Lastmod != lastmod[e.Loc] {
			t.Errorf("%s: Change List lastmod %s, Resource List lastmod %s", e.Loc, e.Lastmod, lastmod[e.Loc])
		}
		if e.MD().Datetime != "2024-03-01T08:01:00Z" {
			t.Errorf("%s: datetime %s, want the build's time", e.Loc, e.MD().Datetime)
		}
	}
}

// TestURITooLongLeftOut: a file whose URI would pass the 2,048 characters
// of a <loc> is left out with a warning and counted, never published in a
// list that fails the schema; a folder whose own URI is that long is left
// out whole, with one warning.
func TestURITooLongLeftOut(t *testing.T) {
	s := newSite(t, testBaseURL, nil)
	long := pathOfLength(2048 - len(testBaseURL) - len("ok/")) // a URI of exactly 2,048
	s.write("ok/"+long, "fits")
	s.write("ok/"+long+"x", "one too many")
	s.write(pathOfLength(2100)+"/deep.txt", "below a folder whose URI is too long")
	s.write("a.txt", "a")
	var notes []generator.Note
	sum, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: t0, Notify: func(n generator.Note) {
		if isTestWarning(n) {
			notes = append(notes, n)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	generator.CheckPublished(t, s.Cfg)
	if sum.LeftOut != 2 || sum.Files != 2 {
		t.Errorf("summary: %d left out, %d resources; want 2 and 2", sum.LeftOut, sum.Files)
	}
	if n := len(notes); n != 2 {
		t.Errorf("%d warnings, want 2: %v", n, notes)
	}
	for _, n := range notes {
		if !strings.Contains(n.Msg, "longer than the 2048 characters a <loc> may have") {
			t.Errorf("warning %q does not say why", n.Msg)
		}
	}
	got := published(t, s)
	if !slices.Contains(got, "ok/"+long) || len(got) != 2 {
		t.Errorf("published %d resources, want a.txt and the 2,048-character one", len(got))
	}
	validateTree(t, s.Out)
}

// pathOfLength returns a path of n bytes in elements a file system takes.
func pathOfLength(n int) string {
	var elems []string
	for n > 0 {
		k := min(n, 200)
		if n-k == 1 { // no empty last element
			k--
		}
		elems = append(elems, strings.Repeat(string(rune('a'+len(elems)%26)), k))
		n -= k + 1
	}
	return strings.Join(elems, "/")
}

// TestInterruptDuringPackaging: an interrupt while dump packages are
// written stops the build with the context's error, before the next
// package, and leaves the output and the state of the last complete build;
// the next build completes the work.
func TestInterruptDuringPackaging(t *testing.T) {
	s := newSite(t, testBaseURL, func(c *config.Config) {
		c.Dumps.ResourceDump, c.Dumps.ChangeDump = true, true
		c.Dumps.PackageSize = 64 << 10
	})
	for i := range 20 {
		s.write(fmt.Sprintf("f%02d.bin", i), randomBytes(40<<10))
	}
	s.build(t0)
	for i := range 20 {
		s.write(fmt.Sprintf("f%02d.bin", i), "v2"+randomBytes(40<<10))
	}
	out, state := statTree(t, s.Out), statTree(t, s.State)

	ctx, cancel := context.WithCancel(context.Background())
	packages := 0
	_, err := generator.Build(ctx, s.Cfg, generator.Options{Now: t0.Add(time.Minute), Notify: func(n generator.Note) {
		if n.Kind == generator.NoteWritten && strings.HasSuffix(n.Path, ".zip") {
			packages++
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted build returned %v, want context.Canceled", err)
	}
	if packages != 1 {
		t.Errorf("%d packages written after the interrupt, want 1", packages)
	}
	if d := diffTrees(out, statTree(t, s.Out), true); len(d) > 0 {
		t.Errorf("the interrupted build changed the output:\n%v", d)
	}
	if d := diffTrees(state, statTree(t, s.State), true); len(d) > 0 {
		t.Errorf("the interrupted build changed the state:\n%v", d)
	}
	if sum := s.build(t0.Add(2 * time.Minute)); sum.Updated != 20 {
		t.Errorf("the build after the interrupt published %d updates, want 20", sum.Updated)
	}
}

// TestNameEndingInSpaceInDumps: a file whose name ends in a space keeps
// it in a dump manifest's path (found by the property test: the checker
// trimmed the path, which xsd:string keeps as it is).
func TestNameEndingInSpaceInDumps(t *testing.T) {
	s := newSite(t, testBaseURL, func(c *config.Config) { c.Dumps.ResourceDump, c.Dumps.ChangeDump = true, true })
	s.write("xa b ", "trailing space")
	s.write(" lead", "leading space")
	s.build(t0)
	s.write("xa b ", "trailing space, changed")
	s.build(t0.Add(time.Minute)) // CheckPublished reads every package against its manifest
}

// TestVersionsOfRewrittenPages: the kept version of a page published with
// an inserted <link> (html_link) holds the published bytes, which its
// memento link's hash and length describe (found by the property test:
// the version kept the source's bytes, and the next build found it
// damaged).
func TestVersionsOfRewrittenPages(t *testing.T) {
	s := newSite(t, testBaseURL, func(c *config.Config) {
		c.Publish.HTMLLink = true
		c.Sets = []config.Set{{Name: "pages", SetLinks: config.SetLinks{KeepVersions: true}}}
	})
	s.write("p.html", "<html><head><title>1</title></head></html>")
	s.build(t0)
	s.write("p.html", "<html><head><title>2</title></head></html>")
	s.build(t0.Add(time.Minute))
	s.build(t0.Add(2 * time.Minute)) // no warning: both versions whole
	mementos, _ := filepath.Glob(filepath.Join(s.Out, "resourcesync", "mementos", "*", "p.html"))
	if len(mementos) != 2 {
		t.Fatalf("%d mementos of p.html, want 2", len(mementos))
	}
	for _, m := range mementos {
		if data, _ := os.ReadFile(m); !strings.Contains(string(data), `<link rel="resourcesync"`) {
			t.Errorf("%s holds the source's bytes, not the published ones", m)
		}
	}
}

// TestArchivedPackageComesBack: resources that leave a Resource Dump
// package and come back (a file deleted, then restored with its time,
// lastmod = "mtime") make a package of the same name as the one an
// archived Resource Dump lists. It must have the same bytes. A build whose
// state was recovered from the output knew that package only as archived,
// gave it a new at, hence other bytes under that name, which replaced the
// archived package's; the build was refused by the check, and one killed
// after placing the package left an output that no build could recover
// its state from (found by the kill -9 test with other seeds).
func TestArchivedPackageComesBack(t *testing.T) {
	s := newSite(t, testBaseURL, func(c *config.Config) {
		c.Lastmod = "mtime"
		c.Dumps.ResourceDump = true
		c.Archives = config.Archives{ResourceDumps: true, SnapshotEvery: config.Duration{Duration: time.Hour}}
	})
	mtime := t0.Add(-24 * time.Hour)
	s.write("a.txt", "a")
	s.write("b.txt", "b")
	s.touch("a.txt", mtime)
	s.touch("b.txt", mtime)
	s.build(t0)
	first := s.doc("resourcesync/default/resourcedump.xml").Entries[0]

	s.remove("b.txt")
	s.build(t0.Add(2 * time.Hour))
	if err := os.RemoveAll(s.Cfg.State); err != nil { // recovered from the output
		t.Fatal(err)
	}
	s.write("b.txt", "b")
	s.touch("b.txt", mtime)
	s.build(t0.Add(4 * time.Hour))
	again := s.doc("resourcesync/default/resourcedump.xml").Entries[0]
	if again.Loc != first.Loc || again.MD().Hash != first.MD().Hash || again.MD().At != first.MD().At {
		t.Fatalf("the package came back as %s %s at %s, want %s %s at %s", again.Loc, again.MD().Hash, again.MD().At,
			first.Loc, first.MD().Hash, first.MD().At)
	}

	// The state can be recovered from the output.
	if err := os.RemoveAll(s.Cfg.State); err != nil {
		t.Fatal(err)
	}
	s.build(t0.Add(5 * time.Hour))
}

// TestRecoveryDropsDamagedArchivedDump: an output whose archived Resource
// Dump lists a package whose bytes were replaced (as the bug of
// TestArchivedPackageComesBack did) or lost still gives up its state: the
// archived Resource Dump leaves its archive with a warning, as it does
// for a build that kept its state, and the rest is recovered.
func TestRecoveryDropsDamagedArchivedDump(t *testing.T) {
	for name, damage := range map[string]func(p string) error{
		"replaced": func(p string) error { return os.WriteFile(p, []byte("not the package"), 0o644) },
		"lost":     os.Remove,
	} {
		t.Run(name, func(t *testing.T) { recoverDamagedArchive(t, damage) })
	}
}

func recoverDamagedArchive(t *testing.T, damage func(string) error) {
	s := newSite(t, testBaseURL, func(c *config.Config) {
		c.Dumps.ResourceDump = true
		c.Archives = config.Archives{ResourceDumps: true, SnapshotEvery: config.Duration{Duration: time.Hour}}
	})
	s.write("a.txt", "a")
	s.build(t0)
	archived := s.doc("resourcesync/default/resourcedump.xml").Entries[0].Loc
	s.write("b.txt", "b")
	s.build(t0.Add(2 * time.Hour))
	rel := locPath(t, s.Cfg.BaseURL, archived)
	if err := damage(filepath.Join(s.Out, filepath.FromSlash(rel))); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(s.Cfg.State); err != nil {
		t.Fatal(err)
	}
	s.buildExpecting(t0.Add(3*time.Hour), "resourcesync/default/resourcedumps/resourcedump-20240301T080000Z.xml: package "+rel+
		" of this archived Resource Dump is lost or damaged")
	for _, e := range s.doc("resourcesync/default/resourcedump-archive.xml").Entries {
		_, d := s.docAt(e.Loc)
		for _, p := range d.Entries {
			if p.Loc == archived {
				t.Errorf("the archive still lists %s, whose package is damaged", e.Loc)
			}
		}
	}
}

// TestPackagePathsMadeDistinct: a file whose name is escaped in a package
// ("caf\xe9.txt" as caf%E9.txt) beside one whose name is that escape
// already: the second gets -v2, and each bitstream holds its own file.
func TestPackagePathsMadeDistinct(t *testing.T) {
	s := newSite(t, testBaseURL, func(c *config.Config) { c.Dumps.ResourceDump = true })
	s.write("caf%E9.txt", "named with the escape")
	s.write("caf\xe9.txt", "named in Latin-1")
	s.build(t0)
	pkg := s.doc("resourcesync/default/resourcedump.xml").Entries[0].Loc
	files, _, _ := packageFilesOf(t, s, pkg)
	if string(files["caf%E9.txt"]) != "named with the escape" || string(files["caf\xe9.txt"]) != "named in Latin-1" {
		t.Errorf("package %s holds %q", pkg, files)
	}
	_, m := s.docAt(strings.TrimSuffix(pkg, ".zip") + "-manifest.xml")
	var paths []string
	for _, e := range m.Entries {
		paths = append(paths, e.MD().Path)
	}
	if want := []string{"/caf%E9.txt", "/caf%E9-v2.txt"}; !slices.Equal(paths, want) {
		t.Errorf("manifest paths %q, want %q", paths, want)
	}
}
