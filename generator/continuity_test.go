package generator_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
)

// TestBaseURLChangeNeedsRebase: a build at another base URL than the
// state published at is refused, naming both, and changes nothing;
// confirmed with Rebase it starts the Source afresh: a new baseline, no
// document, closed list, archive or package of the old base URL left in
// the output or the state folder.
func TestBaseURLChangeNeedsRebase(t *testing.T) {
	s := keptSite(t)
	last := playHistory(s)
	out, state := statTree(t, s.Out), statTree(t, s.State)
	old := s.Cfg.BaseURL
	s.Cfg.BaseURL = "https://new.example.org/"
	_, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: last.Add(time.Minute)})
	if !errors.Is(err, generator.ErrDiscontinuity) || !strings.Contains(err.Error(), old) || !strings.Contains(err.Error(), s.Cfg.BaseURL) || !strings.Contains(err.Error(), "--rebase") {
		t.Fatalf("a new base URL gave %v; want a refusal naming both URLs and --rebase", err)
	}
	if d := diffTrees(out, statTree(t, s.Out), true); len(d) > 0 {
		t.Errorf("the refused build changed the output:\n%v", d)
	}
	if d := diffTrees(state, statTree(t, s.State), true); len(d) > 0 {
		t.Errorf("the refused build changed the state:\n%v", d)
	}

	s.buildWithOpts(generator.Options{Now: last.Add(2 * time.Minute), Rebase: true})
	for rel, data := range readTree(t, s.Out) {
		if strings.Contains(string(data), strings.TrimSuffix(old, "/")) && !strings.HasPrefix(rel, "resourcesync/mementos/") {
			t.Errorf("%s still names the old base URL", rel)
		}
	}
	cl := s.doc("resourcesync/default/changelist.xml")
	if len(cl.Entries) != 1 || cl.Entries[0].MD().Until != "" {
		t.Errorf("after a rebase the Change List Index lists %d lists; want the one open list", len(cl.Entries))
	}
	if _, d := s.docAt(cl.Entries[0].Loc); len(d.Entries) != 0 {
		t.Errorf("the first Change List after a rebase has %d entries; want none (a new baseline)", len(d.Entries))
	}
	for rel, data := range readTree(t, filepath.Join(s.State, "closed")) {
		if strings.Contains(string(data), strings.TrimSuffix(old, "/")) || !strings.Contains(rel, "/mementos/") && !strings.Contains(string(data), s.Cfg.BaseURL) && !strings.HasSuffix(rel, ".zip") {
			t.Errorf("the state folder keeps %s of the old base URL", rel)
		}
	}
	s.write("after.txt", "after the rebase")
	if sum := s.build(last.Add(3 * time.Minute)); sum.Created != 1 {
		t.Errorf("the build after the rebase found %v; want after.txt created", sum.Events)
	}
}

// TestRemovingASetNeedsConfirmation: a configuration without a set the
// state published (default, once the first [[set]] is added) is refused,
// naming the set and its documents; confirmed, the set's documents go.
func TestRemovingASetNeedsConfirmation(t *testing.T) {
	s := newSite(t, testBaseURL, nil)
	s.write("a.txt", "a")
	s.build(t0)
	s.Cfg.Sets = []config.Set{{Name: "texts"}}
	_, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: t0.Add(time.Minute)})
	if !errors.Is(err, generator.ErrDiscontinuity) || !strings.Contains(err.Error(), "set default") || !strings.Contains(err.Error(), "resourcesync/default/") || !strings.Contains(err.Error(), "--remove-sets") {
		t.Fatalf("removing the set default gave %v; want a refusal naming it, its documents and --remove-sets", err)
	}
	s.buildWithOpts(generator.Options{Now: t0.Add(2 * time.Minute), RemoveSets: true})
	if _, err := os.Stat(filepath.Join(s.Out, "resourcesync", "default")); err == nil {
		t.Error("the removed set's documents are still published")
	}
	s.build(t0.Add(3 * time.Minute)) // and nothing more to confirm
}

// TestBasePathWarnedOnce: a base URL with a path is warned about on the
// first build at it, saying where Destinations look instead, and not on
// every build.
func TestBasePathWarnedOnce(t *testing.T) {
	s := newSite(t, "https://data.example.org/pub/", nil)
	s.write("a.txt", "a")
	for i, want := range []int{1, 0} {
		var warned []string
		_, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: t0.Add(time.Duration(i) * time.Minute), Notify: func(n generator.Note) {
			if n.Code == generator.WarnBaseURL {
				warned = append(warned, n.Msg)
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if len(warned) != want || want == 1 && !strings.Contains(warned[0], "https://data.example.org/.well-known/resourcesync") {
			t.Errorf("build %d: warnings %q; want %d naming where Destinations look", i+1, warned, want)
		}
	}
}
