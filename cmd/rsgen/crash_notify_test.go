package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rsgen/rsgen/notify"
	"github.com/rsgen/rsgen/snapshot"
)

// TestCrashKill9Notifications kills builds of a site with notifications
// at random moments, as TestCrashKill9 does, and checks after every
// complete build that no change was lost to the notifications: nothing is
// sent, so the outbox holds every notification ever written, and each
// change the Change Lists publish is in one of them, with its hash; each
// channel's notifications follow one another.
func TestCrashKill9Notifications(t *testing.T) {
	if testing.Short() {
		t.Skip("kills builds; skipped with -short")
	}
	if !stress() {
		// Among the longest tests of the package: they overlap. The
		// stress form runs alone, its kills bounded by a time budget.
		t.Parallel()
	}
	kills, budget := 4, 20*time.Second
	if stress() {
		kills, budget = 60, 75*time.Second
	}
	c := newCrashSite(t, rsgenBinary(t), 104729, "", "4m", false)
	f, err := os.OpenFile(filepath.Join(c.dir, "rsgen.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("[notification]\nhub = \"http://127.0.0.1:1/hub\"\nframework = true\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c.stats = &crashStats{}
	c.completeBuild()
	c.maxDelay = max(c.lastDur*3/2, 20*time.Millisecond)
	deadline := time.Now().Add(budget)
	for k := 0; k < kills && time.Now().Before(deadline); k++ {
		c.mutate()
		c.killedBuild()
		if c.rng.IntN(3) == 0 {
			c.killedBuild()
		}
		c.completeBuild()
		c.checkNotified()
		c.maxDelay = max(c.lastDur*3/2, 20*time.Millisecond)
	}
	t.Logf("%d kills (%d landed mid-build), %d complete builds checked", c.stats.kills, c.stats.landed, c.stats.builds)
}

// checkNotified checks that every change the Change Lists publish is in a
// notification of the outbox, and that each channel's notifications
// follow one another.
func (c *crashSite) checkNotified() {
	c.t.Helper()
	pending, err := notify.OpenOutbox(filepath.Join(c.state, snapshot.OutboxDir)).Pending()
	if err != nil {
		c.t.Fatal(err)
	}
	notified := map[string]bool{} // "path change hash"
	var prev *notify.Pending
	for i := range pending {
		p := &pending[i]
		if prev != nil && prev.Topic == p.Topic && !p.From.Equal(prev.Until) {
			c.t.Fatalf("notification %d of %s starts at %s, not where %d ended (%s)", p.Seq, p.Topic, p.From, prev.Seq, prev.Until)
		}
		prev = p
		data, err := os.ReadFile(p.Path)
		if err != nil {
			c.t.Fatal(err)
		}
		n, err := notify.Parse(bytes.NewReader(data))
		if err != nil {
			c.t.Fatalf("%s: %v", p.Path, err)
		}
		for _, e := range n.Entries {
			if n.Capability == "change-notification" {
				notified[c.rel(e.Loc)+" "+e.MD.Change+" "+e.MD.Hash] = true
			}
		}
	}
	events, err := publishedEvents(c.out)
	if err != nil {
		c.t.Fatal(err)
	}
	for _, e := range events {
		if key := e.Path + " " + e.MD().Change + " " + e.MD().Hash; !notified[key] {
			c.t.Fatalf("%s: %s %s at %s is in no notification: lost", e.List, e.MD().Change, e.Path, e.MD().Datetime)
		}
	}
}
