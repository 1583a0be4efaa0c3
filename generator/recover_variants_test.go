package generator

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
)

// replayedEvents replays the change events of every indexed Change List of
// the default set over baseline (path to hash), failing on an event that
// contradicts it (a change published twice), and returns the result.
func replayedEvents(t *testing.T, out string, baseline map[string]string) map[string]string {
	t.Helper()
	model := map[string]string{}
	for p, h := range baseline {
		model[p] = h
	}
	idx := readDoc(t, filepath.Join(out, "resourcesync", "default", "changelist.xml"))
	for _, e := range idx.Sitemaps {
		loc := e.Loc
		cl := readDoc(t, outFile(out, loc))
		for _, u := range cl.URLs {
			p := strings.TrimPrefix(u.Loc, "https://data.example.org/")
			old, present := model[p]
			switch u.MD().Change {
			case "created":
				if present {
					t.Errorf("%s: created %s, which exists already", loc, p)
				}
				model[p] = u.MD().Hash
			case "updated":
				if !present || old == u.MD().Hash {
					t.Errorf("%s: updated %s (present %v, same hash %v)", loc, p, present, old == u.MD().Hash)
				}
				model[p] = u.MD().Hash
			case "deleted":
				if !present {
					t.Errorf("%s: deleted %s, which does not exist", loc, p)
				}
				delete(model, p)
			}
		}
	}
	return model
}

// recoverySite writes files into a source folder under a new root and
// returns the root, the source and a valid configuration for them, with
// tweak applied.
func recoverySite(t *testing.T, files map[string]string, tweak func(*config.Config)) (root, src string, cfg config.Config) {
	t.Helper()
	root = t.TempDir()
	src = filepath.Join(root, "site")
	writeTree(t, src, files)
	cfg = config.Default()
	cfg.Dir, cfg.BaseURL = root, "https://data.example.org/"
	if tweak != nil {
		tweak(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return root, src, cfg
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// publishedHashes returns the Resource List of the default set, path to
// hash.
func publishedHashes(t *testing.T, out string) map[string]string {
	t.Helper()
	rl := readDoc(t, filepath.Join(out, "resourcesync", "default", "resourcelist.xml"))
	m := map[string]string{}
	for _, u := range rl.URLs {
		m[strings.TrimPrefix(u.Loc, "https://data.example.org/")] = u.MD().Hash
	}
	return m
}

// killedRetrySequence replays, step by step, the sequence the crash test
// once hit: a build publishes a change (change, made to the source) in the
// Resource List and a Change List, and is killed before saving its state;
// a retry from the old state rotates, rewriting that Change List as closed
// without the event, and is killed before writing the index and the
// Resource List; then the state is lost. It checks that the Change Lists,
// replayed over the first Resource List, give the last.
func killedRetrySequence(t *testing.T, lastmod config.LastmodSource, change func(src string)) {
	root, src, cfg := recoverySite(t, map[string]string{"a.txt": "a", "b.txt": "b"}, func(c *config.Config) {
		c.Lastmod = lastmod
		c.ChangeList.Rotate = config.Duration{Duration: 6 * time.Minute}
	})
	buildAt(t, &cfg, "2026-01-01T00:00:00Z", limits{})
	baseline := publishedHashes(t, cfg.Out)
	stateFile := filepath.Join(cfg.State, "state")
	copyFile(t, stateFile, filepath.Join(root, "state.0"))

	change(src)
	buildAt(t, &cfg, "2026-01-01T00:01:00Z", limits{})
	set := filepath.Join(cfg.Out, "resourcesync", "default")
	copyFile(t, filepath.Join(set, "resourcelist.xml"), filepath.Join(root, "rl.1"))
	copyFile(t, filepath.Join(set, "changelist.xml"), filepath.Join(root, "index.1"))
	copyFile(t, filepath.Join(root, "state.0"), stateFile)

	buildAt(t, &cfg, "2026-01-01T00:07:00Z", limits{})
	copyFile(t, filepath.Join(root, "rl.1"), filepath.Join(set, "resourcelist.xml"))
	copyFile(t, filepath.Join(root, "index.1"), filepath.Join(set, "changelist.xml"))
	if err := os.Remove(filepath.Join(set, "changelists", "changelist-20260101T000700Z.xml")); err != nil {
		t.Fatal(err)
	}

	if err := os.RemoveAll(cfg.State); err != nil {
		t.Fatal(err)
	}
	buildAt(t, &cfg, "2026-01-01T00:08:00Z", limits{})

	got := replayedEvents(t, cfg.Out, baseline)
	want := publishedHashes(t, cfg.Out)
	for p, h := range want {
		if got[p] != h {
			t.Errorf("replaying the Change Lists gives %s as %q, the Resource List has %q: a change was lost", p, got[p], h)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("replaying the Change Lists gives %s, which the Resource List does not have: a deletion was lost", p)
		}
	}
}

// TestRecoveryAfterKilledRetries replays killedRetrySequence with a
// created, an updated and a deleted file, with lastmod from content and
// from mtime. The Resource List alone
// cannot tell an updated file whose event was lost from a new one, nor
// show a deletion, nor (with mtime) when a file changed; so the retry must
// not leave such an output: a state older than the output's Resource List
// is rebuilt from the output (see outputNewer).
func TestRecoveryAfterKilledRetries(t *testing.T) {
	for _, lastmod := range []config.LastmodSource{config.LastmodContent, config.LastmodMtime} {
		t.Run(string(lastmod)+"/created", func(t *testing.T) {
			killedRetrySequence(t, lastmod, func(src string) { writeTree(t, src, map[string]string{"n.txt": "new"}) })
		})
		t.Run(string(lastmod)+"/updated", func(t *testing.T) {
			killedRetrySequence(t, lastmod, func(src string) { writeTree(t, src, map[string]string{"a.txt": "a, revised"}) })
		})
		t.Run(string(lastmod)+"/deleted", func(t *testing.T) {
			killedRetrySequence(t, lastmod, func(src string) { os.Remove(filepath.Join(src, "b.txt")) })
		})
	}
}

// TestKilledBuildStateIsRebuilt: a build after one killed past its
// Resource List rebuilds the state from the output, and a build after a
// complete one does not.
func TestKilledBuildStateIsRebuilt(t *testing.T) {
	root, src, cfg := recoverySite(t, map[string]string{"a.txt": "a"}, nil)
	build := func(at string) bool {
		t.Helper()
		now, err := time.Parse(time.RFC3339, at)
		if err != nil {
			t.Fatal(err)
		}
		var rebuilt atomic.Bool // Notify is called from the scan's workers too
		_, err = Build(context.Background(), &cfg, Options{Now: now, Notify: func(n Note) {
			if n.Kind == NoteInfo && strings.Contains(n.Msg, "rebuilt the state") {
				rebuilt.Store(true)
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		return rebuilt.Load()
	}
	build("2026-01-01T00:00:00Z")
	writeTree(t, src, map[string]string{"b.txt": "b"})
	if build("2026-01-01T00:01:00Z") {
		t.Error("a build after a complete build rebuilt the state")
	}
	stateFile := filepath.Join(cfg.State, "state")
	copyFile(t, stateFile, filepath.Join(root, "state.1"))
	writeTree(t, src, map[string]string{"c.txt": "c"})
	build("2026-01-01T00:02:00Z")
	copyFile(t, filepath.Join(root, "state.1"), stateFile) // killed before saving its state
	if !build("2026-01-01T00:03:00Z") {
		t.Error("a build after one killed past its Resource List went on from the older state")
	}
	if build("2026-01-01T00:04:00Z") {
		t.Error("the build after that one rebuilt the state again")
	}
}

// TestRecoveryDropsUnexplainedEntries: with lastmod from content, a
// Resource List entry first seen after the baseline that no Change List
// explains (its event was lost with a killed build that the output cannot
// show, as when it ran in the same second as the last complete one) is
// not trusted by a recovery: the recovering build publishes it as created.
func TestRecoveryDropsUnexplainedEntries(t *testing.T) {
	_, src, cfg := recoverySite(t, map[string]string{"a.txt": "a"}, nil)
	buildAt(t, &cfg, "2026-01-01T00:00:00Z", limits{})
	writeTree(t, src, map[string]string{"n.txt": "new"})
	buildAt(t, &cfg, "2026-01-01T00:01:00Z", limits{})

	// The created event of n.txt is lost; then so is the state.
	cl := filepath.Join(cfg.Out, "resourcesync", "default", "changelists", "changelist-20260101T000000Z.xml")
	data, err := os.ReadFile(cl)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(data), "<url>")
	j := strings.LastIndex(string(data), "</url>")
	if i < 0 || j < 0 || !strings.Contains(string(data[i:j]), "n.txt") {
		t.Fatalf("no event of n.txt in %s:\n%s", cl, data)
	}
	if err := os.WriteFile(cl, append(data[:i:i], data[j+len("</url>"):]...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(cfg.State); err != nil {
		t.Fatal(err)
	}

	buildAt(t, &cfg, "2026-01-01T00:02:00Z", limits{})
	got := replayedEvents(t, cfg.Out, map[string]string{"a.txt": publishedHashes(t, cfg.Out)["a.txt"]})
	if want := publishedHashes(t, cfg.Out)["n.txt"]; got["n.txt"] != want || want == "" {
		t.Errorf("after the recovery, the Change Lists give n.txt as %q, the Resource List as %q: its creation is not published", got["n.txt"], want)
	}
}

// TestRecoveryTrustsFilesChangedManyTimes: with lastmod from content, a
// recovery checks each Resource List entry against its path's last event
// only. A file updated in several builds, and one deleted and created
// again, are explained by their last events; the recovering build finds
// nothing changed. Taking a path's first event instead of its last would
// publish both as created.
func TestRecoveryTrustsFilesChangedManyTimes(t *testing.T) {
	_, src, cfg := recoverySite(t, map[string]string{"a.txt": "a", "b.txt": "b"}, nil)
	buildAt(t, &cfg, "2026-01-01T00:00:00Z", limits{})
	for i, at := range []string{"2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z", "2026-01-01T00:03:00Z"} {
		writeTree(t, src, map[string]string{"a.txt": "a, revision " + strconv.Itoa(i)})
		switch i {
		case 0:
			writeTree(t, src, map[string]string{"b.txt": "b, revised"})
		case 1:
			if err := os.Remove(filepath.Join(src, "b.txt")); err != nil {
				t.Fatal(err)
			}
		case 2:
			writeTree(t, src, map[string]string{"b.txt": "b, again"})
		}
		buildAt(t, &cfg, at, limits{})
	}
	if err := os.RemoveAll(cfg.State); err != nil {
		t.Fatal(err)
	}
	sum := buildAt(t, &cfg, "2026-01-01T00:04:00Z", limits{})
	if sum.Created+sum.Updated+sum.Deleted != 0 {
		t.Errorf("the recovering build of an unchanged source made %d created, %d updated and %d deleted events", sum.Created, sum.Updated, sum.Deleted)
	}
}
