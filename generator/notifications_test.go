package generator_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
	"github.com/rsgen/rsgen/notify"
	"github.com/rsgen/rsgen/snapshot"
)

const testHub = "https://hub.example.org/"

// notifySite is a site with a hub, and both channels of its one set.
func notifySite(t *testing.T, tweak func(*config.Config)) *site {
	t.Helper()
	return newSite(t, testBaseURL, func(c *config.Config) {
		c.Notification.Hub = testHub
		c.Notification.Framework = true
		if tweak != nil {
			tweak(c)
		}
	})
}

func (s *site) outbox() *notify.Outbox {
	return notify.OpenOutbox(filepath.Join(s.State, snapshot.OutboxDir))
}

// pending returns the notifications of the channel whose topic is at
// output path rel, parsed, with their bytes.
func (s *site) pending(rel string) ([]*notify.Notification, []string) {
	s.t.Helper()
	ps, err := s.outbox().Pending()
	if err != nil {
		s.t.Fatal(err)
	}
	var ns []*notify.Notification
	var raw []string
	for _, p := range ps {
		if p.Topic != testBaseURL+rel {
			continue
		}
		data, err := os.ReadFile(p.Path)
		if err != nil {
			s.t.Fatal(err)
		}
		n, err := notify.Parse(strings.NewReader(string(data)))
		if err != nil {
			s.t.Fatalf("%s: %v", p.Path, err)
		}
		ns, raw = append(ns, n), append(raw, string(data))
	}
	return ns, raw
}

const (
	changeTopic    = "resourcesync/default/notification/change.xml"
	frameworkTopic = "resourcesync/default/notification/framework.xml"
)

// entryLines renders entries as "loc change datetime hash length type".
func entryLines(n *notify.Notification) string {
	var lines []string
	for _, e := range n.Entries {
		lines = append(lines, fmt.Sprintf("%s %s %s %s %d %s", e.Loc, e.MD.Change, e.MD.Datetime.Format(time.RFC3339), e.MD.Hash, e.MD.Length, e.MD.Type))
	}
	return strings.Join(lines, "\n")
}

// TestNotificationOutbox: a build writes the notification of its changes
// into the outbox, one per channel, covering the time since the channel's
// last one, valid by the ResourceSync schema; the Change Notification has
// the Change List's entries, the
// Framework Notification one entry per capability document that changed
// (a component naming its index, never the index); the topic serves the
// newest; a build without changes notifies nothing; the Capability List
// advertises both channels with the hub.
func TestNotificationOutbox(t *testing.T) {
	s := notifySite(t, nil)
	s.write("a.txt", "a")
	s.write("b.txt", "b")
	s.build(t0)
	if ns, _ := s.pending(changeTopic); len(ns) != 0 {
		t.Fatalf("the first build, the baseline, notified %d changes", len(ns))
	}
	if topic := s.outFile(changeTopic); len(topic) != 0 {
		t.Errorf("the topic serves %q before the first notification, want nothing", topic)
	}
	capList := s.doc("resourcesync/default/capabilitylist.xml")
	var channels []string
	for _, e := range capList.Entries {
		if c := e.MD().Capability; strings.HasSuffix(c, "-notification") {
			channels = append(channels, fmt.Sprintf("%s %s %v", c, e.Loc, e.Links))
		}
	}
	hub := fmt.Sprintf("%v", []link{{Rel: "hub", Href: testHub}})
	if strings.Join(channels, "\n") != "change-notification "+testBaseURL+changeTopic+" "+hub+"\n"+
		"framework-notification "+testBaseURL+frameworkTopic+" "+hub {
		t.Errorf("Capability List channels:\n%s", strings.Join(channels, "\n"))
	}

	t1 := t0.Add(10 * time.Minute)
	s.write("a.txt", "a, revised")
	s.write("c.txt", "c")
	s.remove("b.txt")
	s.build(t1)
	ns, raw := s.pending(changeTopic)
	if len(ns) != 1 || !ns[0].From.Equal(t0) || !ns[0].Until.Equal(t1) {
		t.Fatalf("after a build with changes: %d notifications, want one over [%s, %s]: %+v", len(ns), t0, t1, ns)
	}
	cl := s.doc("resourcesync/default/changelists/changelist-20240301T080000Z.xml")
	var want []string
	for _, e := range cl.Entries {
		m := e.MD()
		want = append(want, fmt.Sprintf("%s %s %s %s %s %s", e.Loc, m.Change, m.Datetime, m.Hash, orZero(m.Length), m.Type))
	}
	if got := entryLines(ns[0]); got != strings.Join(want, "\n") {
		t.Errorf("notification entries:\n%s\nwant the Change List's:\n%s", got, strings.Join(want, "\n"))
	}
	if topic := string(s.outFile(changeTopic)); topic != raw[0] {
		t.Errorf("the topic serves\n%s\nwant the newest notification\n%s", topic, raw[0])
	}
	validateFiles(t, schemaPath, []string{filepath.Join(s.Out, changeTopic), filepath.Join(s.Out, frameworkTopic)})
	fw, _ := s.pending(frameworkTopic)
	if len(fw) != 2 {
		t.Fatalf("%d framework notifications, want the first build's and this one's", len(fw))
	}
	var docs []string
	for _, e := range fw[1].Entries {
		docs = append(docs, fmt.Sprintf("%s %s %s %v", strings.TrimPrefix(e.Loc, testBaseURL), e.MD.Capability, e.MD.Change, e.Links))
	}
	wantDocs := "resourcesync/default/changelists/changelist-20240301T080000Z.xml changelist updated [{index " + testBaseURL + "resourcesync/default/changelist.xml   0 false 0001-01-01 00:00:00 +0000 UTC 0}]\n" +
		"resourcesync/default/resourcelist.xml resourcelist updated []"
	if strings.Join(docs, "\n") != wantDocs {
		t.Errorf("framework entries:\n%s\nwant\n%s", strings.Join(docs, "\n"), wantDocs)
	}

	// Nothing changed: nothing notified, and the topic keeps the newest.
	s.build(t1.Add(10 * time.Minute))
	if ns, _ := s.pending(changeTopic); len(ns) != 1 {
		t.Errorf("a build without changes notified: %d notifications", len(ns))
	}
	if topic := string(s.outFile(changeTopic)); topic != raw[0] {
		t.Errorf("a build without changes changed the topic:\n%s", topic)
	}

	// The next notification starts where the last ended.
	t3 := t1.Add(30 * time.Minute)
	s.write("d.txt", "d")
	s.build(t3)
	ns, raw = s.pending(changeTopic)
	if len(ns) != 2 || !ns[1].From.Equal(t1) || !ns[1].Until.Equal(t3) || len(ns[1].Entries) != 1 {
		t.Fatalf("notifications %+v: want a second over [%s, %s] with d.txt", ns, t1, t3)
	}
	if topic := string(s.outFile(changeTopic)); topic != raw[1] {
		t.Errorf("the topic does not serve the newest notification")
	}
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

// TestNotificationAfterChannelOff: a channel switched off while its set
// changed missed those changes; its next notification starts at the
// previous build, after a gap, so that Destinations read the Change Lists
// for it.
func TestNotificationAfterChannelOff(t *testing.T) {
	s := notifySite(t, nil)
	s.write("a.txt", "a")
	s.build(t0)
	s.write("b.txt", "b")
	s.build(t0.Add(time.Minute))
	off := false
	s.Cfg.Sets = []config.Set{{Name: "default", ChangeNotification: &off}}
	s.write("c.txt", "c")
	s.build(t0.Add(2 * time.Minute))
	s.Cfg.Sets = nil
	s.write("d.txt", "d")
	s.build(t0.Add(3 * time.Minute))
	ns, _ := s.pending(changeTopic)
	if len(ns) != 2 || !ns[0].Until.Equal(t0.Add(time.Minute)) || !ns[1].From.Equal(t0.Add(2*time.Minute)) || len(ns[1].Entries) != 1 {
		t.Fatalf("notifications %+v: want the second from the previous build, after the gap of c.txt", ns)
	}
}

// TestNotificationsSurviveFailedBuilds: a build that fails before the
// outbox takes its notification leaves none, and the next build, which
// finds the same changes, notifies them. One that fails after, before or
// after its output is published (its state not saved), leaves its
// notification, which ends after the last saved build, so that no deploy
// sends it yet; the next build then notifies the same changes again when
// it finds them again, and nothing twice when it rebuilds its state from
// the output that published them. No change goes unnotified.
func TestNotificationsSurviveFailedBuilds(t *testing.T) {
	s := notifySite(t, func(c *config.Config) { c.Publish.Targets = []config.Target{config.TargetNginx} })
	s.write("a.txt", "a")
	s.write("sub/x.txt", "x")
	s.build(t0)
	failAt := func(now time.Time) {
		t.Helper()
		if _, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: now}); err == nil {
			t.Fatalf("the build at %s succeeded; want it failed", now)
		}
	}
	lastSaved := func() time.Time {
		st, err := snapshot.Load(s.State)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		return time.Unix(st.LastBuild, 0).UTC()
	}
	channels, _ := filepath.Glob(filepath.Join(s.State, snapshot.OutboxDir, "*"))
	if len(channels) != 2 {
		t.Fatalf("outbox folders %v, want one per channel", channels)
	}
	for _, ch := range channels {
		immutable(t, ch)
	}
	want := func(n int, what string) []*notify.Notification {
		t.Helper()
		ns, _ := s.pending(changeTopic)
		for i := 1; i < len(ns); i++ {
			if !ns[i].From.Equal(ns[i-1].Until) {
				t.Errorf("notification %d starts at %s, not where the one before ended (%s)", i, ns[i].From, ns[i-1].Until)
			}
		}
		if len(ns) != n || n > 0 && !strings.Contains(entryLines(ns[n-1]), what) {
			for _, n := range ns {
				t.Logf("[%s, %s]\n%s", n.From, n.Until, entryLines(n))
			}
			t.Fatalf("%d notifications, want %d, the last with %q", len(ns), n, what)
		}
		return ns
	}

	// Before the commit: the outbox cannot be written.
	s.write("b.txt", "b")
	failAt(t0.Add(time.Minute))
	want(0, "")
	for _, ch := range channels {
		mutable(t, ch)
	}
	s.build(t0.Add(2 * time.Minute))
	want(1, "b.txt created")

	// After the commit, before the output is published: a hosting file
	// cannot be renamed into place.
	s.write("c.txt", "c")
	conf := filepath.Join(s.Out, "rsgen-nginx.conf")
	if err := os.Remove(conf); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(conf, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	failAt(t0.Add(3 * time.Minute))
	if ns := want(2, "c.txt created"); !ns[1].Until.After(lastSaved()) {
		t.Errorf("the failed build's notification ends at %s, not after the last saved build (%s)", ns[1].Until, lastSaved())
	}
	if err := os.RemoveAll(conf); err != nil {
		t.Fatal(err)
	}
	s.build(t0.Add(4 * time.Minute))
	want(3, "c.txt created")

	// After the output is published: the state cannot be saved.
	s.write("d.txt", "d")
	state := filepath.Join(s.State, snapshot.FileName)
	immutable(t, state)
	failAt(t0.Add(5 * time.Minute))
	if ns := want(4, "d.txt created"); !ns[3].Until.After(lastSaved()) {
		t.Errorf("the failed build's notification ends at %s, not after the last saved build (%s)", ns[3].Until, lastSaved())
	}
	mutable(t, state)
	s.build(t0.Add(6 * time.Minute)) // rebuilds its state from the output
	s.write("e.txt", "e")
	s.build(t0.Add(7 * time.Minute))
	if ns := want(5, "e.txt created"); strings.Contains(entryLines(ns[4]), "d.txt") {
		t.Error("d.txt, published by the failed build, was notified again")
	}

	// After the output is published, before the state is saved: the copy
	// of a deleted resource cannot be removed. The next build rebuilds
	// its state from the output, which publishes the deletion: only the
	// failed build's notification says it.
	s.remove("sub/x.txt")
	immutable(t, filepath.Join(s.Out, "sub"))
	failAt(t0.Add(8 * time.Minute))
	mutable(t, filepath.Join(s.Out, "sub"))
	s.build(t0.Add(9 * time.Minute))
	want(6, "x.txt deleted")
}

// immutable makes the file or folder p immutable (chattr +i), so that
// even root cannot write it, until mutable or the end of the test; it
// skips the test where that cannot be done.
func immutable(t *testing.T, p string) {
	t.Helper()
	if out, err := exec.Command("chattr", "+i", p).CombinedOutput(); err != nil {
		t.Skipf("cannot make %s immutable (chattr needs root and a file system such as ext4): %v %s", p, err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", p).Run() })
}

func mutable(t *testing.T, p string) {
	t.Helper()
	if out, err := exec.Command("chattr", "-i", p).CombinedOutput(); err != nil {
		t.Fatalf("chattr -i %s: %v %s", p, err, out)
	}
}
