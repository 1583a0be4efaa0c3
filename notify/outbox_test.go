package notify_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/internal/sitemaptest"
	"github.com/rsgen/rsgen/notify"
	"github.com/rsgen/rsgen/rs"
)

const (
	changeTopic    = "https://example.org/resourcesync/set1/notification/change.xml"
	frameworkTopic = "https://example.org/resourcesync/notification/framework.xml"
	capList        = "https://example.org/resourcesync/set1/capabilitylist.xml"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

// change returns a Change Notification entry.
func change(loc, kind string, sec int) rs.Entry {
	e := rs.Entry{Loc: "https://example.org/" + loc, MD: rs.MD{Change: kind, Datetime: at(sec)}}
	if kind != rs.ChangeDeleted {
		e.MD.Hash, e.MD.Length, e.MD.HasLength, e.MD.Type = "sha-256:"+strings.Repeat("ab", 32), 42, true, "text/plain"
	}
	return e
}

// batch commits entries to topic's channel over [from, until].
func batch(t *testing.T, o *notify.Outbox, topic, capability string, from, until time.Time, entries ...rs.Entry) []notify.Pending {
	t.Helper()
	b, err := o.Begin(topic, notify.Head{Capability: capability, From: from, Until: until,
		Links: []rs.Link{{Rel: rs.RelUp, Href: capList}}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range entries {
		if err := b.Add(&entries[i]); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := b.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func readDoc(t *testing.T, path string) *sitemaptest.Doc {
	t.Helper()
	d, err := sitemaptest.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A Change Notification is a <urlset> with the mandatory root rs:md of
// capability change-notification, from and until, and its entries in
// order with change, datetime, hash, length and type; it validates
// against the ResourceSync schema.
func TestChangeNotificationPayload(t *testing.T) {
	o := notify.OpenOutbox(t.TempDir())
	ps := batch(t, o, changeTopic, rs.CapChangeNotification, at(0), at(100),
		change("a.txt", rs.ChangeCreated, 10), change("b.txt", rs.ChangeUpdated, 10), change("c.txt", rs.ChangeDeleted, 50))
	if len(ps) != 1 || ps[0].Topic != changeTopic || ps[0].Seq != 1 || !ps[0].From.Equal(at(0)) || !ps[0].Until.Equal(at(100)) {
		t.Fatalf("pending %+v", ps)
	}
	d := readDoc(t, ps[0].Path)
	if d.XMLName.Local != "urlset" {
		t.Fatalf("root %s, want urlset", d.XMLName.Local)
	}
	md := d.MD()
	if md.Capability != "change-notification" || md.From != "2026-03-01T12:00:00Z" || md.Until != "2026-03-01T12:01:40Z" {
		t.Errorf("root rs:md %+v", md)
	}
	if d.Link("up") != capList {
		t.Errorf("root up link %q", d.Link("up"))
	}
	var got []string
	for _, e := range d.URLs {
		m := e.MD()
		got = append(got, fmt.Sprintf("%s %s %s %t %s %s", e.Loc, m.Change, m.Datetime, m.Hash != "", m.Length, m.Type))
	}
	want := []string{
		"https://example.org/a.txt created 2026-03-01T12:00:10Z true 42 text/plain",
		"https://example.org/b.txt updated 2026-03-01T12:00:10Z true 42 text/plain",
		"https://example.org/c.txt deleted 2026-03-01T12:00:50Z false  ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	validate(t, ps[0].Path)
}

// A Framework Notification has one entry per capability document that
// changed, with its change and capability; a component names its index
// with rs:ln rel="index".
func TestFrameworkNotificationPayload(t *testing.T) {
	o := notify.OpenOutbox(t.TempDir())
	cl := rs.Entry{Loc: "https://example.org/resourcesync/set1/changelists/cl-1.xml",
		MD:    rs.MD{Capability: rs.CapChangeList, Change: rs.ChangeCreated, Datetime: at(5)},
		Links: []rs.Link{{Rel: rs.RelIndex, Href: "https://example.org/resourcesync/set1/changelist.xml"}}}
	rl := rs.Entry{Loc: "https://example.org/resourcesync/set1/resourcelist.xml",
		MD: rs.MD{Capability: rs.CapResourceList, Change: rs.ChangeUpdated, Datetime: at(5)}}
	ps := batch(t, o, frameworkTopic, rs.CapFrameworkNotification, at(0), at(10), cl, rl)
	d := readDoc(t, ps[0].Path)
	if d.MD().Capability != "framework-notification" || len(d.URLs) != 2 {
		t.Fatalf("root %+v with %d entries", d.MD(), len(d.URLs))
	}
	first := d.URLs[0]
	if first.MD().Capability != "changelist" || first.MD().Change != "created" ||
		len(first.Links) != 1 || first.Links[0].Rel != "index" {
		t.Errorf("component entry %+v", first)
	}
	validate(t, ps[0].Path)
}

// Past the document limits a batch is split into several urlsets whose
// intervals are consecutive: each part starts at the datetime of its
// first entry, where the one before ends. No part is a sitemapindex.
func TestSplitPastLimits(t *testing.T) {
	o := notify.OpenOutbox(t.TempDir())
	o.SetLimits(3, rs.MaxBytes)
	var entries []rs.Entry
	for i := range 7 {
		entries = append(entries, change(fmt.Sprintf("f%d.txt", i), rs.ChangeCreated, 10*(i+1)))
	}
	ps := batch(t, o, changeTopic, rs.CapChangeNotification, at(0), at(100), entries...)
	wantIntervals := [][2]time.Time{{at(0), at(40)}, {at(40), at(70)}, {at(70), at(100)}}
	if len(ps) != 3 {
		t.Fatalf("%d parts, want 3", len(ps))
	}
	var locs []string
	for i, p := range ps {
		if p.Seq != uint64(i+1) || !p.From.Equal(wantIntervals[i][0]) || !p.Until.Equal(wantIntervals[i][1]) {
			t.Errorf("part %d: seq %d [%s, %s], want [%s, %s]", i, p.Seq, p.From, p.Until, wantIntervals[i][0], wantIntervals[i][1])
		}
		d := readDoc(t, p.Path)
		if d.XMLName.Local != "urlset" {
			t.Errorf("part %d is a %s", i, d.XMLName.Local)
		}
		for _, e := range d.URLs {
			locs = append(locs, strings.TrimPrefix(e.Loc, "https://example.org/"))
		}
		f, _ := os.Open(p.Path)
		if _, err := notify.Parse(f); err != nil {
			t.Errorf("part %d: %v", i, err)
		}
		f.Close()
	}
	if strings.Join(locs, ",") != "f0.txt,f1.txt,f2.txt,f3.txt,f4.txt,f5.txt,f6.txt" {
		t.Errorf("entries across the parts: %v", locs)
	}
	validate(t, ps[0].Path, ps[1].Path, ps[2].Path)

	// The byte limit splits too: a part holds what fits in it.
	o2 := notify.OpenOutbox(t.TempDir())
	o2.SetLimits(rs.MaxEntries, 1200)
	ps = batch(t, o2, changeTopic, rs.CapChangeNotification, at(0), at(100), entries...)
	for _, p := range ps {
		if info, _ := os.Stat(p.Path); info.Size() > 1200 {
			t.Errorf("%s has %d bytes, over the limit", p.Path, info.Size())
		}
	}
	if len(ps) < 2 {
		t.Errorf("%d parts under a 1200-byte limit", len(ps))
	}
}

// Consecutive batches of a channel cover consecutive intervals; a batch
// that does not start where the last ended is refused, even after the
// payloads before it were sent.
func TestConsecutiveIntervals(t *testing.T) {
	o := notify.OpenOutbox(t.TempDir())
	if _, ok, _ := o.Last(changeTopic); ok {
		t.Fatal("a new channel has a last notification")
	}
	ps := batch(t, o, changeTopic, rs.CapChangeNotification, at(0), at(100), change("a", rs.ChangeCreated, 1))
	for _, from := range []time.Time{at(99), at(101)} {
		_, err := o.Begin(changeTopic, notify.Head{Capability: rs.CapChangeNotification, From: from, Until: at(200)})
		if !errors.Is(err, notify.ErrNotConsecutive) {
			t.Errorf("batch from %s after one until %s: %v, want ErrNotConsecutive", from, at(100), err)
		}
	}
	if err := o.Remove(ps[0]); err != nil {
		t.Fatal(err)
	}
	if last, ok, err := o.Last(changeTopic); err != nil || !ok || !last.Equal(at(100)) {
		t.Fatalf("Last = %s %v %v, want %s after the payload left", last, ok, err, at(100))
	}
	// An empty batch commits nothing and moves nothing.
	if ps := batch(t, o, changeTopic, rs.CapChangeNotification, at(100), at(150)); len(ps) != 0 {
		t.Fatalf("an empty batch committed %v", ps)
	}
	ps = batch(t, o, changeTopic, rs.CapChangeNotification, at(100), at(200), change("b", rs.ChangeUpdated, 150))
	if len(ps) != 1 || ps[0].Seq != 2 {
		t.Fatalf("pending %+v, want seq 2", ps)
	}
	// Another channel has intervals of its own.
	batch(t, o, frameworkTopic, rs.CapFrameworkNotification, at(0), at(10))

	// A channel that missed changes says so by a gap, never by an
	// overlap.
	gap := notify.Head{Capability: rs.CapChangeNotification, From: at(300), Until: at(400), AfterGap: true}
	b, err := o.Begin(changeTopic, gap)
	if err != nil {
		t.Fatalf("a batch after a gap: %v", err)
	}
	b.Abort()
	gap.From = at(150)
	if _, err := o.Begin(changeTopic, gap); !errors.Is(err, notify.ErrNotConsecutive) {
		t.Errorf("a batch after a gap that overlaps the last: %v, want ErrNotConsecutive", err)
	}
}

// Finish ends a batch's payloads before its commit: the newest one's
// file then holds the bytes the commit puts into the outbox, which a build
// publishes at the topic URI first; until the commit nothing is pending.
func TestFinishBeforeCommit(t *testing.T) {
	o := notify.OpenOutbox(t.TempDir())
	o.SetLimits(1, rs.MaxBytes)
	b, err := o.Begin(changeTopic, notify.Head{Capability: rs.CapChangeNotification, From: at(0), Until: at(10)})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []rs.Entry{change("a", rs.ChangeCreated, 5), change("b", rs.ChangeCreated, 5)} {
		if err := b.Add(&e); err != nil {
			t.Fatal(err)
		}
	}
	newest, err := b.Finish()
	if err != nil || newest == "" {
		t.Fatalf("Finish = %q, %v", newest, err)
	}
	before, err := os.ReadFile(newest)
	if err != nil {
		t.Fatal(err)
	}
	if ps := mustPending(t, o); len(ps) != 0 {
		t.Fatalf("pending before the commit: %v", ps)
	}
	ps, err := b.Commit()
	if err != nil || len(ps) != 2 {
		t.Fatalf("Commit = %v, %v", ps, err)
	}
	after, _ := os.ReadFile(ps[1].Path)
	if string(after) != string(before) {
		t.Errorf("the newest payload committed differs from the one Finish returned")
	}
	empty, err := o.Begin(changeTopic, notify.Head{Capability: rs.CapChangeNotification, From: at(10), Until: at(20)})
	if err != nil {
		t.Fatal(err)
	}
	if newest, err := empty.Finish(); newest != "" || err != nil {
		t.Errorf("Finish of an empty batch = %q, %v", newest, err)
	}
	empty.Abort()
}

// Entries and heads the specifications do not allow are refused with the
// reason.
func TestBatchRefuses(t *testing.T) {
	o := notify.OpenOutbox(t.TempDir())
	head := notify.Head{Capability: rs.CapChangeNotification, From: at(0), Until: at(100)}
	for _, tc := range []struct {
		name  string
		head  notify.Head
		topic string
		want  string
	}{
		{"capability", notify.Head{Capability: rs.CapChangeList, From: at(0), Until: at(1)}, changeTopic, "is not change-notification"},
		{"interval", notify.Head{Capability: rs.CapChangeNotification, From: at(2), Until: at(1)}, changeTopic, "is before from"},
		{"topic", head, "/relative/topic", "not an absolute http or https URI"},
		{"topic newline", head, "https://x.example/a\nb", "not an absolute http or https URI"},
	} {
		if _, err := o.Begin(tc.topic, tc.head); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	fw := rs.Entry{Loc: "https://example.org/x.xml", MD: rs.MD{Capability: rs.CapResourceList, Change: rs.ChangeUpdated, Datetime: at(5)}}
	for _, tc := range []struct {
		name    string
		head    notify.Head
		entries []rs.Entry
		want    string
	}{
		{"change", head, []rs.Entry{change("a", "moved", 5)}, `change "moved"`},
		{"no datetime", head, []rs.Entry{{Loc: "https://example.org/a", MD: rs.MD{Change: rs.ChangeCreated}}}, "no datetime"},
		{"before from", head, []rs.Entry{change("a", rs.ChangeCreated, -1)}, "outside"},
		{"after until", head, []rs.Entry{change("a", rs.ChangeCreated, 101)}, "outside"},
		{"order", head, []rs.Entry{change("a", rs.ChangeCreated, 50), change("b", rs.ChangeCreated, 40)}, "forward chronological order"},
		{"capability in a change", head, []rs.Entry{fw}, "in a Change Notification entry"},
		{"no capability in a framework", notify.Head{Capability: rs.CapFrameworkNotification, From: at(0), Until: at(100)},
			[]rs.Entry{change("a", rs.ChangeCreated, 5)}, "not that of a capability document"},
	} {
		b, err := o.Begin(changeTopic+"/"+strings.ReplaceAll(tc.name, " ", "-"), tc.head)
		if err != nil {
			t.Fatal(err)
		}
		for i := range tc.entries {
			err = b.Add(&tc.entries[i])
		}
		b.Abort()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if ps, err := o.Pending(); err != nil || len(ps) != 0 {
		t.Errorf("aborted batches left %v %v", ps, err)
	}
}

// A batch killed before its commit leaves nothing that counts: its files
// are not pending, and the next batch of the channel removes them.
func TestUncommittedBatchIgnored(t *testing.T) {
	dir := t.TempDir()
	o := notify.OpenOutbox(dir)
	o.SetLimits(1, rs.MaxBytes)
	batch(t, o, changeTopic, rs.CapChangeNotification, at(0), at(10), change("a", rs.ChangeCreated, 1))
	b, err := o.Begin(changeTopic, notify.Head{Capability: rs.CapChangeNotification, From: at(10), Until: at(20)})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []rs.Entry{change("b", rs.ChangeCreated, 11), change("c", rs.ChangeCreated, 12)} {
		if err := b.Add(&e); err != nil {
			t.Fatal(err)
		}
	}
	// Killed here: no Commit, no Abort. And a payload renamed into place
	// without its record, as a kill during Commit leaves it.
	chDir := filepath.Dir(mustPending(t, o)[0].Path)
	os.WriteFile(filepath.Join(chDir, "00000000000000000002.xml"), []byte("debris"), 0o644)
	if ps := mustPending(t, o); len(ps) != 1 || ps[0].Seq != 1 {
		t.Fatalf("pending %+v, want only the committed payload", ps)
	}
	batch(t, o, changeTopic, rs.CapChangeNotification, at(10), at(20), change("b", rs.ChangeCreated, 11))
	files, _ := os.ReadDir(chDir)
	var names []string
	for _, f := range files {
		names = append(names, f.Name())
	}
	if strings.Join(names, ",") != "00000000000000000001.xml,00000000000000000002.xml,channel" {
		t.Errorf("channel folder holds %v, want the two payloads and the record", names)
	}
	if d := readDoc(t, filepath.Join(chDir, "00000000000000000002.xml")); len(d.URLs) != 1 {
		t.Errorf("payload 2 is not the new batch's")
	}
}

func mustPending(t *testing.T, o *notify.Outbox) []notify.Pending {
	t.Helper()
	ps, err := o.Pending()
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// validate runs xmllint with the ResourceSync 1.1 schema over files; it
// skips without xmllint unless RSGEN_REQUIRE_XMLLINT=1.
func validate(t *testing.T, files ...string) {
	t.Helper()
	bin, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("RSGEN_REQUIRE_XMLLINT") == "1" {
			t.Fatalf("xmllint not found and RSGEN_REQUIRE_XMLLINT=1: %v", err)
		}
		t.Log("xmllint not found: schema validation skipped (set RSGEN_REQUIRE_XMLLINT=1 to require it)")
		return
	}
	schema, _ := filepath.Abs("../testdata/schemas/rs11/rs-all.xsd")
	out, err := exec.Command(bin, append([]string{"--noout", "--nonet", "--schema", schema}, files...)...).CombinedOutput()
	if err != nil {
		t.Errorf("xmllint: %v\n%s", err, out)
	}
	if bytes.Count(out, []byte(" validates")) != len(files) {
		t.Errorf("xmllint:\n%s", out)
	}
}
