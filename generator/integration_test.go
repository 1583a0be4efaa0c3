package generator_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
)

// seqEvent is a change event a step expects, in the order expected.
type seqEvent struct{ change, path string }

// seqStep is one build of the sequence.
type seqStep struct {
	name    string
	at      time.Duration // after t0
	do      func(s *site)
	newList bool // the build closes the open Change List and opens one at its time
	events  []seqEvent
	noWrite bool // the build must leave every output file as it was
}

// The sequence: Change Lists rotate hourly: a build more than an hour after
// the open list opened closes it, if it holds events (an empty list stays
// open: a closed list is never empty); builds 10 minutes apart append to it.
var sequence = []seqStep{
	{name: "first build", at: 0, do: func(s *site) {
		s.write("a.txt", "alpha\n")
		s.write("b/c.html", "<p>c</p>\n")
		s.write("d.json", `{"d":1}`+"\n")
	}},
	{name: "add (the empty first list stays open)", at: 2 * time.Hour, do: func(s *site) {
		s.write("e.txt", "echo\n")
		s.write("f/g.txt", "golf\n")
	}, events: []seqEvent{{"created", "e.txt"}, {"created", "f/g.txt"}}},
	{name: "modify", at: 2*time.Hour + 10*time.Minute, newList: true, do: func(s *site) {
		s.write("a.txt", "alpha, modified\n")
	}, events: []seqEvent{{"updated", "a.txt"}}},
	{name: "no change", at: 2*time.Hour + 20*time.Minute, noWrite: true},
	{name: "touch and rewrite identical bytes", at: 4*time.Hour + 20*time.Minute, newList: true, do: func(s *site) {
		s.touch("b/c.html", t0.Add(-24*time.Hour))
		s.write("d.json", `{"d":1}`+"\n") // in place
		s.replace("e.txt", "echo\n")      // new inode
	}},
	{name: "no change after touch", at: 4*time.Hour + 30*time.Minute, noWrite: true},
	{name: "delete", at: 6*time.Hour + 30*time.Minute, do: func(s *site) {
		s.remove("f/g.txt")
	}, events: []seqEvent{{"deleted", "f/g.txt"}}},
	{name: "re-add", at: 6*time.Hour + 40*time.Minute, newList: true, do: func(s *site) {
		s.write("f/g.txt", "golf\n")
	}, events: []seqEvent{{"created", "f/g.txt"}}},
	{name: "delete, create and modify (same size) at once", at: 6*time.Hour + 50*time.Minute, do: func(s *site) {
		s.remove("a.txt")
		s.write("e.txt", "ECHO\n")
		s.write("b/z.txt", "zulu\n")
	}, events: []seqEvent{{"deleted", "a.txt"}, {"created", "b/z.txt"}, {"updated", "e.txt"}}},
	{name: "no change at the end", at: 7 * time.Hour, noWrite: true},
}

// TestBuildSequence runs the sequence twice in fresh trees, checking every
// build of each against a model, and then that both runs wrote the same
// bytes at every step (determinism).
func TestBuildSequence(t *testing.T) {
	t.Parallel() // builds a history of its own: overlaps the other long tests
	var runs [2][]map[string][]byte
	for i := range runs {
		runs[i] = runSequence(t, t.TempDir(), "")
		if t.Failed() {
			return
		}
	}
	for i := range sequence {
		if d := diffBytes(runs[0][i], runs[1][i]); len(d) > 0 {
			t.Errorf("after %q, two fresh trees built from the same inputs differ:\n%v", sequence[i].name, d)
		}
	}
}

// TestBuildSequenceCopied runs the sequence with the source on another
// file system than the output, where resources are copied rather than
// hard-linked, and checks it writes what the hard-linking run writes.
func TestBuildSequenceCopied(t *testing.T) {
	t.Parallel() // builds a history of its own: overlaps the other long tests
	other := otherDeviceDir(t)
	if other == "" {
		t.Skip("no second file system for the source (set RSGEN_OTHER_FS)")
	}
	copied := runSequence(t, t.TempDir(), other)
	if t.Failed() {
		return
	}
	linked := runSequence(t, t.TempDir(), "")
	for i := range sequence {
		if d := diffBytes(linked[i], copied[i]); len(d) > 0 {
			t.Errorf("after %q, copying and hard-linking builds differ:\n%v", sequence[i].name, d)
		}
	}
}

// seqModel is what the published documents must say after each build.
type seqModel struct {
	lists      []modelList
	seen       map[string]time.Time // when each file's current content was first seen
	lastChange time.Time            // the last build that changed the set
}

type modelList struct {
	from, until time.Time
	events      []modelEvent
}

type modelEvent struct {
	change, path string
	at           time.Time
	sha          string
	length       int64
}

// runSequence plays the sequence in a new site under root and returns the
// output's bytes after each build. The source is in srcRoot when not "".
func runSequence(t *testing.T, root, srcRoot string) []map[string][]byte {
	s := newSiteIn(t, root, testBaseURL, func(c *config.Config) {
		c.ChangeList.Rotate = config.Duration{Duration: time.Hour}
		if srcRoot != "" {
			c.Source = filepath.Join(srcRoot, "src")
		}
	})
	m := &seqModel{seen: map[string]time.Time{}}
	closed := map[string]fileState{} // closed Change Lists as first seen
	var trees []map[string][]byte
	for i, st := range sequence {
		now := t0.Add(st.at)
		if st.do != nil {
			st.do(s)
		}
		var before map[string]fileState
		if st.noWrite {
			before = statTree(t, s.Out)
		}
		m.advance(t, s, i, now, st)

		sum := s.build(now)

		var got []seqEvent
		for _, ev := range sum.Events {
			got = append(got, seqEvent{ev.Change.String(), ev.Record.Path})
		}
		if i > 0 && !slices.Equal(got, st.events) {
			t.Errorf("%s: Summary.Events = %v, want %v", st.name, got, st.events)
		}
		if st.noWrite {
			if d := diffTrees(before, statTree(t, s.Out), true); len(d) > 0 {
				t.Errorf("%s: a build without changes rewrote files:\n%v", st.name, d)
			}
		}
		checkSequenceSite(t, st.name, s, m, closed)
		validateTree(t, s.Out)
		trees = append(trees, readTree(t, s.Out))
		if t.Failed() {
			t.Fatalf("stopping after step %q", st.name)
		}
	}

	// Deleting the output folder and building again restores it, closed
	// Change Lists included.
	want := readTree(t, s.Out)
	if err := os.RemoveAll(s.Out); err != nil {
		t.Fatal(err)
	}
	sum := s.build(t0.Add(sequence[len(sequence)-1].at + 5*time.Minute))
	if len(sum.Events) > 0 {
		t.Errorf("rebuild of a deleted output: events %v, want none", sum.Events)
	}
	if d := diffBytes(want, readTree(t, s.Out)); len(d) > 0 {
		t.Errorf("rebuilding a deleted output folder did not restore it:\n%v", d)
	}
	validateTree(t, s.Out)
	return trees
}

// advance brings the model to the build of step i at now, before it runs.
func (m *seqModel) advance(t *testing.T, s *site, i int, now time.Time, st seqStep) {
	t.Helper()
	if i == 0 {
		// The first build publishes the baseline and an empty open list.
		m.lists = []modelList{{from: now}}
		for rel := range readTree(t, s.Source) {
			m.seen[rel] = now
		}
		m.lastChange = now
		return
	}
	if st.newList {
		m.lists[len(m.lists)-1].until = now
		m.lists = append(m.lists, modelList{from: now})
	}
	open := &m.lists[len(m.lists)-1]
	for _, ev := range st.events {
		me := modelEvent{change: ev.change, path: ev.path, at: now, length: -1}
		if ev.change == "deleted" {
			delete(m.seen, ev.path)
		} else {
			data, err := os.ReadFile(s.src(ev.path))
			if err != nil {
				t.Fatal(err)
			}
			me.sha, me.length = sha256Hex(data), int64(len(data))
			m.seen[ev.path] = now
		}
		open.events = append(open.events, me)
	}
	if len(st.events) > 0 {
		m.lastChange = now
	}
}

// checkSequenceSite checks every document of the site against the model,
// reading them from the Source Description down.
func checkSequenceSite(t *testing.T, step string, s *site, m *seqModel, closed map[string]fileState) {
	t.Helper()
	sdURL := testBaseURL + ".well-known/resourcesync"
	_, sd := s.docAt(sdURL)
	if sd.MD.Capability != "description" || len(sd.Entries) != 1 || sd.Entries[0].MD().Capability != "capabilitylist" {
		t.Fatalf("%s: Source Description: capability %q, entries %+v", step, sd.MD.Capability, sd.Entries)
	}
	clURL := sd.Entries[0].Loc
	_, capList := s.docAt(clURL)
	if capList.MD.Capability != "capabilitylist" || capList.link("up") != sdURL {
		t.Errorf("%s: Capability List: capability %q, up %q", step, capList.MD.Capability, capList.link("up"))
	}
	caps := map[string]string{}
	for _, e := range capList.Entries {
		if _, dup := caps[e.MD().Capability]; dup {
			t.Errorf("%s: Capability List lists %s twice", step, e.MD().Capability)
		}
		caps[e.MD().Capability] = e.Loc
	}
	if len(caps) != 2 || caps["resourcelist"] == "" || caps["changelist"] == "" {
		t.Fatalf("%s: Capability List entries %v, want a resourcelist and a changelist", step, caps)
	}

	checkResourcesPlaced(t, step, s)
	checkSequenceResourceList(t, step, s, m, caps["resourcelist"], clURL)
	checkSequenceChangeLists(t, step, s, m, caps["changelist"], clURL, closed)
}

// checkResourcesPlaced checks that the output holds exactly the source's
// files with their bytes, beside the documents.
func checkResourcesPlaced(t *testing.T, step string, s *site) {
	t.Helper()
	out := readTree(t, s.Out)
	for rel := range out {
		if rel == ".well-known/resourcesync" || strings.HasPrefix(rel, "resourcesync/") {
			delete(out, rel) // rsgen's own: documents, the viewer, the stylesheet
		}
	}
	if d := diffBytes(readTree(t, s.Source), out); len(d) > 0 {
		t.Errorf("%s: the output's resources differ from the source:\n%v", step, d)
	}
}

func checkSequenceResourceList(t *testing.T, step string, s *site, m *seqModel, rlURL, clURL string) {
	t.Helper()
	_, rl := s.docAt(rlURL)
	if rl.Root != "urlset" || rl.MD.Capability != "resourcelist" || rl.link("up") != clURL {
		t.Errorf("%s: Resource List: root %s, capability %q, up %q", step, rl.Root, rl.MD.Capability, rl.link("up"))
	}
	if at := parseTime(t, rl.MD.At); !at.Equal(m.lastChange) {
		t.Errorf("%s: Resource List at = %s, want %s (the last build that changed the set)", step, rl.MD.At, m.lastChange.Format(time.RFC3339))
	}
	if rl.MD.From != "" || rl.MD.Until != "" {
		t.Errorf("%s: Resource List has from/until", step)
	}
	src := readTree(t, s.Source)
	listed := map[string]bool{}
	for _, e := range rl.Entries {
		p := locPath(t, testBaseURL, e.Loc)
		if listed[p] {
			t.Errorf("%s: Resource List lists %s twice", step, p)
		}
		listed[p] = true
		data, ok := src[p]
		if !ok {
			t.Errorf("%s: Resource List lists %s, which is not in the source", step, p)
			continue
		}
		md := e.MD()
		if sha256Of(md) != sha256Hex(data) || lengthOf(md) != int64(len(data)) {
			t.Errorf("%s: Resource List entry %s: hash %q length %q, want sha-256:%s length %d", step, p, md.Hash, md.Length, sha256Hex(data), len(data))
		}
		if lm := parseTime(t, e.Lastmod); !lm.Equal(m.seen[p]) {
			t.Errorf("%s: Resource List entry %s: lastmod %q, want %s (content first seen)", step, p, e.Lastmod, m.seen[p].Format(time.RFC3339))
		}
		if md.Change != "" || md.Datetime != "" {
			t.Errorf("%s: Resource List entry %s has change/datetime", step, p)
		}
	}
	for p := range src {
		if !listed[p] {
			t.Errorf("%s: source file %s missing from the Resource List", step, p)
		}
	}
}

func checkSequenceChangeLists(t *testing.T, step string, s *site, m *seqModel, indexURL, clURL string, closed map[string]fileState) {
	t.Helper()
	_, idx := s.docAt(indexURL)
	if idx.Root != "sitemapindex" || idx.MD.Capability != "changelist" || idx.link("up") != clURL {
		t.Errorf("%s: Change List Index: root %s, capability %q, up %q", step, idx.Root, idx.MD.Capability, idx.link("up"))
	}
	if from := parseTime(t, idx.MD.From); !from.Equal(m.lists[0].from) {
		t.Errorf("%s: Change List Index from = %s, want %s", step, idx.MD.From, m.lists[0].from.Format(time.RFC3339))
	}
	if len(idx.Entries) != len(m.lists) {
		t.Fatalf("%s: Change List Index lists %d Change Lists, want %d", step, len(idx.Entries), len(m.lists))
	}
	for i, e := range idx.Entries {
		want := m.lists[i]
		from, until := parseTime(t, e.MD().From), parseTime(t, e.MD().Until)
		if !from.Equal(want.from) || !until.Equal(want.until) {
			t.Errorf("%s: Change List Index entry %d: [%s, %s], want [%s, %s]", step, i, e.MD().From, e.MD().Until,
				want.from.Format(time.RFC3339), fmtOpen(want.until))
		}
		if i > 0 {
			prevUntil := parseTime(t, idx.Entries[i-1].MD().Until)
			if !prevUntil.Equal(from) {
				t.Errorf("%s: Change List %d opens at %s, but the one before closed at %s", step, i, e.MD().From, idx.Entries[i-1].MD().Until)
			}
		}
		rel, cl := s.docAt(e.Loc)
		if cl.Root != "urlset" || cl.MD.Capability != "changelist" || cl.link("up") != clURL || cl.link("index") != indexURL {
			t.Errorf("%s: %s: root %s, capability %q, up %q, index %q", step, rel, cl.Root, cl.MD.Capability, cl.link("up"), cl.link("index"))
		}
		if cl.MD.From != e.MD().From || cl.MD.Until != e.MD().Until {
			t.Errorf("%s: %s: [%s, %s], but the index says [%s, %s]", step, rel, cl.MD.From, cl.MD.Until, e.MD().From, e.MD().Until)
		}
		if cl.MD.At != "" || cl.MD.Completed != "" {
			t.Errorf("%s: %s: a Change List has at/completed", step, rel)
		}
		checkChangeListEvents(t, step, rel, cl, want)
		if !want.until.IsZero() {
			st := statTree(t, filepath.Dir(filepath.Join(s.Out, filepath.FromSlash(rel))))[filepath.Base(rel)]
			if first, ok := closed[rel]; !ok {
				closed[rel] = st
			} else if d := diffTrees(map[string]fileState{rel: first}, map[string]fileState{rel: st}, true); len(d) > 0 {
				t.Errorf("%s: closed Change List rewritten: %v", step, d)
			}
		}
	}
}

func checkChangeListEvents(t *testing.T, step, rel string, cl *doc, want modelList) {
	t.Helper()
	var got []string
	for _, e := range cl.Entries {
		got = append(got, e.MD().Change+" "+locPath(t, testBaseURL, e.Loc))
	}
	var exp []string
	for _, ev := range want.events {
		exp = append(exp, ev.change+" "+ev.path)
	}
	if !slices.Equal(got, exp) {
		t.Errorf("%s: %s: events\n  %q\nwant\n  %q", step, rel, got, exp)
		return
	}
	from, until := parseTime(t, cl.MD.From), parseTime(t, cl.MD.Until)
	for i, e := range cl.Entries {
		ev, md := want.events[i], e.MD()
		dt := parseTime(t, md.Datetime)
		if !dt.Equal(ev.at) {
			t.Errorf("%s: %s: %s %s: datetime %q, want %s", step, rel, ev.change, ev.path, md.Datetime, ev.at.Format(time.RFC3339))
		}
		if dt.Before(from) || (!until.IsZero() && dt.After(until)) {
			t.Errorf("%s: %s: %s %s: datetime %s outside [%s, %s]", step, rel, ev.change, ev.path, md.Datetime, cl.MD.From, cl.MD.Until)
		}
		if e.Lastmod == "" {
			t.Errorf("%s: %s: %s %s: no lastmod", step, rel, ev.change, ev.path)
		}
		if ev.change == "deleted" {
			if md.Hash != "" || md.Length != "" {
				t.Errorf("%s: %s: deleted %s carries hash %q / length %q", step, rel, ev.path, md.Hash, md.Length)
			}
			continue
		}
		if sha256Of(md) != ev.sha || lengthOf(md) != ev.length {
			t.Errorf("%s: %s: %s %s: hash %q length %q, want sha-256:%s length %d", step, rel, ev.change, ev.path, md.Hash, md.Length, ev.sha, ev.length)
		}
	}
}

func fmtOpen(t time.Time) string {
	if t.IsZero() {
		return "open"
	}
	return t.Format(time.RFC3339)
}

// TestVerifyBuildRewritesNothing checks that a --verify build of an
// unchanged tree, which re-reads every file, writes no output file, whether
// resources are hard-linked or copied.
func TestVerifyBuildRewritesNothing(t *testing.T) {
	for _, mode := range []string{"linked", "copied"} {
		t.Run(mode, func(t *testing.T) {
			var srcRoot string
			if mode == "copied" {
				if srcRoot = otherDeviceDir(t); srcRoot == "" {
					t.Skip("no second file system for the source (set RSGEN_OTHER_FS)")
				}
			}
			s := newSite(t, testBaseURL, func(c *config.Config) {
				if srcRoot != "" {
					c.Source = filepath.Join(srcRoot, "src")
				}
			})
			s.write("a.txt", "alpha\n")
			s.write("b/c.html", "<p>c</p>\n")
			s.build(t0)
			before := statTree(t, s.Out)
			sum := s.buildWith(generator.Options{Now: t0.Add(time.Minute), Verify: true})
			if sum.Hashed != 2 || len(sum.Events) != 0 {
				t.Errorf("verify build: hashed %d files with events %v, want 2 and none", sum.Hashed, sum.Events)
			}
			if d := diffTrees(before, statTree(t, s.Out), true); len(d) > 0 {
				t.Errorf("a --verify build without changes rewrote files:\n%v", d)
			}
		})
	}
}

// TestNonUTF8FileName checks that a file whose name is not UTF-8, which
// Linux allows, neither breaks the build nor goes missing silently: it is
// published (its bytes percent-encoded) or left out with a warning that
// names it.
func TestNonUTF8FileName(t *testing.T) {
	s := newSite(t, testBaseURL, nil)
	s.write("ok.txt", "fine\n")
	s.write("latin1-\xe9.txt", "a Latin-1 name\n")
	var warnings []generator.Note
	var mu sync.Mutex
	_, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: t0, Notify: func(n generator.Note) {
		if isTestWarning(n) {
			mu.Lock()
			warnings = append(warnings, n)
			mu.Unlock()
		}
	}})
	if err != nil {
		t.Fatalf("build failed because of one file name: %v", err)
	}
	rl := s.doc("resourcesync/default/resourcelist.xml")
	published := false
	for _, e := range rl.Entries {
		if e.Loc == testBaseURL+"latin1-%E9.txt" {
			published = true
		}
	}
	warned := slices.ContainsFunc(warnings, func(n generator.Note) bool { return strings.Contains(n.Path+n.Msg, "latin1-") })
	if !published && !warned {
		t.Errorf("latin1-\\xe9.txt neither published nor warned about; warnings: %v", warnings)
	}
}

// writeUnreadable writes a file into s's source that a build cannot read,
// and returns its name.
func writeUnreadable(t *testing.T, s *site) string {
	t.Helper()
	bad := "a-unreadable.txt"
	if os.Geteuid() == 0 {
		// root reads every file whatever its mode; a name io/fs refuses
		// (not UTF-8) makes the read fail instead.
		bad = "a-\xe9.txt"
	}
	s.write(bad, "cannot be read\n")
	if os.Geteuid() != 0 {
		if err := os.Chmod(s.src(bad), 0); err != nil {
			t.Fatal(err)
		}
	}
	return bad
}

// TestScanFailureNamesTheFile checks that when one file of a large tree
// cannot be read, the build fails with an error naming that file, not with
// "context canceled" from the scan stopping its other workers.
func TestScanFailureNamesTheFile(t *testing.T) {
	// A site of the unreadable file alone tells, before the large tree is
	// written, whether a file can be made unreadable here.
	probe := newSite(t, testBaseURL, nil)
	bad := writeUnreadable(t, probe)
	if _, err := generator.Build(context.Background(), probe.Cfg, generator.Options{Now: t0}); err == nil {
		t.Skipf("the build read %q: no way to make a file unreadable here", bad)
	}
	s := newSite(t, testBaseURL, nil)
	writeUnreadable(t, s)
	for i := range 3000 {
		s.write(fmt.Sprintf("b/%04d.txt", i), fmt.Sprintf("%d\n", i))
	}
	_, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: t0})
	if err == nil {
		t.Fatalf("the build of the large tree read %q, which the build of it alone could not", bad)
	}
	if errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), bad) {
		t.Errorf("build error %q, want one naming %s and not context.Canceled", err, bad)
	}
}

// TestSpecVersion10 checks the documents written for ResourceSync 1.0
// destinations: Change List entries carry the change time in lastmod and no
// datetime, and every document validates against the official 0.9.1
// schema, which rejects datetime.
func TestSpecVersion10(t *testing.T) {
	s := newSite(t, testBaseURL, func(c *config.Config) { c.SpecVersion = "1.0" })
	s.write("a.txt", "alpha\n")
	s.write("b.txt", "bravo\n")
	s.build(t0)
	t1 := t0.Add(time.Hour)
	s.write("a.txt", "alpha, modified\n")
	s.remove("b.txt")
	s.write("c.txt", "charlie\n")
	s.build(t1)

	idx := s.doc("resourcesync/default/changelist.xml")
	if len(idx.Entries) != 1 {
		t.Fatalf("Change List Index lists %d lists, want 1", len(idx.Entries))
	}
	_, cl := s.docAt(idx.Entries[0].Loc)
	var got []string
	for _, e := range cl.Entries {
		got = append(got, e.MD().Change+" "+locPath(t, testBaseURL, e.Loc))
		if e.MD().Datetime != "" {
			t.Errorf("%s: datetime %q in a 1.0 Change List", e.Loc, e.MD().Datetime)
		}
		if lm := parseTime(t, e.Lastmod); !lm.Equal(t1) {
			t.Errorf("%s: lastmod %q, want the change time %s", e.Loc, e.Lastmod, t1.Format(time.RFC3339))
		}
	}
	want := []string{"deleted b.txt", "updated a.txt", "created c.txt"} // deletions first (see TestTypeChangeDeletesFirst)
	if !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	validateFiles(t, schema10Path, documentFiles(t, s.Out))
}

// TestFirstBuildListsItsEventsWhenAsked: a first build's events, which no
// Change List publishes, are in its Summary only with ListEvents (at a
// million files they would hold a million records); its counts, in all
// and per set, are there either way.
func TestFirstBuildListsItsEventsWhenAsked(t *testing.T) {
	for _, list := range []bool{false, true} {
		s := newSite(t, testBaseURL, func(c *config.Config) {
			c.Sets = []config.Set{{Name: "docs", Path: "docs"}, {Name: "all"}}
		})
		for _, p := range []string{"a.txt", "docs/b.txt", "docs/c.txt", "z.txt"} {
			s.write(p, p)
		}
		sum := s.buildWith(generator.Options{Now: t0, ListEvents: list})
		var got []string
		for _, ev := range sum.Events {
			got = append(got, ev.Change.String()+" "+ev.Record.Path)
		}
		var want []string
		if list {
			want = []string{"created a.txt", "created docs/b.txt", "created docs/c.txt", "created z.txt"}
		}
		if !slices.Equal(got, want) {
			t.Errorf("ListEvents %v: events %q, want %q", list, got, want)
		}
		if sum.Created != 4 || sum.Sets[0].Created != 2 || sum.Sets[1].Created != 4 {
			t.Errorf("ListEvents %v: %d created, per set %+v; want 4, docs 2, all 4", list, sum.Created, sum.Sets)
		}
		s.write("docs/b.txt", "changed")
		s.remove("z.txt")
		sum = s.buildWith(generator.Options{Now: t0.Add(time.Minute), ListEvents: list})
		got = nil
		for _, ev := range sum.Events {
			got = append(got, ev.Change.String()+" "+ev.Record.Path)
		}
		if want := []string{"updated docs/b.txt", "deleted z.txt"}; !slices.Equal(got, want) || sum.Sets[0].Updated != 1 || sum.Sets[1].Deleted != 1 {
			t.Errorf("ListEvents %v: the next build's events %q, per set %+v; want %q", list, got, sum.Sets, want)
		}
	}
}

// TestColdCopyPlacesAsItReads: with the source on another file system than
// the output, a resource new to the state is copied into its place as the
// scan reads it, as a hard link would be, not kept as a pending copy until
// every file is read (a cold build held one per resource: 76 MB for
// 100,000 files where linking held 38); a rebuild replaces a changed
// resource only once its documents are written; and a copy the scan finds
// equal gets the source's mtime, not a new copy.
func TestColdCopyPlacesAsItReads(t *testing.T) {
	other := otherDeviceDir(t)
	if other == "" {
		t.Skip("no second file system for the source (set RSGEN_OTHER_FS)")
	}
	s := newSite(t, testBaseURL, func(c *config.Config) { c.Source = filepath.Join(other, "src") })
	for i := range 20 {
		s.write(fmt.Sprintf("d%d/f%02d.txt", i%3, i), fmt.Sprint("file ", i))
	}
	var placed, notYet []string // resources in place, or not, when the scan had read them
	notify := func(n generator.Note) {
		if n.Kind != generator.NoteHashed {
			return
		}
		data, err := os.ReadFile(filepath.Join(s.Out, filepath.FromSlash(n.Path)))
		src, _ := os.ReadFile(s.src(n.Path))
		if err == nil && bytes.Equal(data, src) {
			placed = append(placed, n.Path)
		} else {
			notYet = append(notYet, n.Path)
		}
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: now, Notify: notify}); err != nil {
		t.Fatal(err)
	}
	if len(notYet) > 0 || len(placed) != 20 {
		t.Errorf("a cold build that copies had %d of 20 resources in place once read; not %q", len(placed), notYet)
	}
	generator.CheckPublished(t, s.Cfg)

	s.write("d1/f01.txt", "changed")
	placed, notYet = nil, nil
	if _, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: now.Add(time.Hour), Notify: notify}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(notYet, "d1/f01.txt") {
		t.Error("a rebuild replaced a changed resource as it read it, before its documents were written")
	}
	generator.CheckPublished(t, s.Cfg)

	// A copy with the source's bytes but another mtime is restamped by
	// --verify, which reads it, not copied again.
	copied := filepath.Join(s.Out, "d2", "f02.txt")
	stale := now.Add(-time.Hour)
	if err := os.Chtimes(copied, stale, stale); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(copied)
	if _, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: now.Add(2 * time.Hour), Verify: true}); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(copied)
	src, _ := os.Stat(s.src("d2/f02.txt"))
	if err != nil || !os.SameFile(before, after) || !after.ModTime().Equal(src.ModTime()) {
		t.Errorf("--verify left the copy with mtime %v (the source's %v), or replaced it", after.ModTime(), src.ModTime())
	}
}

// TestColdCopyReplacesWhatIsInTheWay: a copy that cannot be renamed into
// its place as the scan reads it, because something is there (a foreign
// file, in an output adopted with Force), stays pending and replaces it
// once the documents are written, as a link does.
func TestColdCopyReplacesWhatIsInTheWay(t *testing.T) {
	other := otherDeviceDir(t)
	if other == "" {
		t.Skip("no second file system for the source (set RSGEN_OTHER_FS)")
	}
	s := newSite(t, testBaseURL, func(c *config.Config) { c.Source = filepath.Join(other, "src") })
	s.write("a.txt", "a")
	s.write("b/c.txt", "c")
	if err := os.MkdirAll(s.Out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Out, "a.txt"), []byte("not from the source"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: now, Force: true}); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(s.Out, "a.txt")); err != nil || string(data) != "a" {
		t.Errorf("out/a.txt holds %q (%v), want the source's bytes", data, err)
	}
	generator.CheckPublished(t, s.Cfg)
}
