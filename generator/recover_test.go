package generator_test

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
	"github.com/rsgen/rsgen/snapshot"
)

// twins are two sites that go through the same source changes and builds;
// one of them loses or spoils its state before the last build, and must
// publish exactly what the other does.
type twins struct {
	t          *testing.T
	kept, lost *site
}

func newTwins(t *testing.T, tweak func(*config.Config)) *twins {
	return &twins{t: t, kept: newSite(t, testBaseURL, tweak), lost: newSite(t, testBaseURL, tweak)}
}

func (w *twins) write(rel, content string) { w.kept.write(rel, content); w.lost.write(rel, content) }
func (w *twins) remove(rel string)         { w.kept.remove(rel); w.lost.remove(rel) }
func (w *twins) build(now time.Time)       { w.buildWith(generator.Options{Now: now}) }
func (w *twins) buildWith(opts generator.Options) {
	w.kept.buildWith(opts)
	w.lost.buildWith(opts)
}

// history runs four builds with every kind of change, one hour apart, with
// rotation every two hours so that closed Change Lists exist.
func (w *twins) history() time.Time {
	w.write("a.txt", "alpha\n")
	w.write("b/c d#.html", "<p>c</p>\n")
	w.write("gone.txt", "soon gone\n")
	w.build(t0)
	w.write("a.txt", "alpha 2\n")
	w.write("new.txt", "new\n")
	w.build(t0.Add(1 * time.Hour))
	w.remove("gone.txt")
	w.build(t0.Add(2 * time.Hour))
	w.write("b/c d#.html", "<p>c 2</p>\n")
	w.build(t0.Add(3 * time.Hour))
	return t0.Add(3 * time.Hour)
}

// buildLost builds the site that lost its state and returns its notes.
func buildLost(t *testing.T, s *site, opts generator.Options) ([]generator.Note, *generator.Summary, error) {
	var notes []generator.Note
	var mu sync.Mutex
	opts.Notify = func(n generator.Note) {
		if n.Kind == generator.NoteWarning || n.Kind == generator.NoteInfo {
			mu.Lock()
			notes = append(notes, n)
			mu.Unlock()
		}
	}
	sum, err := generator.Build(context.Background(), s.Cfg, opts)
	return notes, sum, err
}

// same checks that both outputs and both state archives hold the same
// files with the same bytes.
func (w *twins) same() {
	w.t.Helper()
	if d := diffBytes(readTree(w.t, w.kept.Out), readTree(w.t, w.lost.Out)); len(d) > 0 {
		w.t.Errorf("the output after recovery differs from the output with the state kept:\n%s", d)
	}
	archive := func(s *site) map[string][]byte {
		dir := filepath.Join(s.State, "closed")
		if _, err := os.Stat(dir); err != nil {
			return nil
		}
		return readTree(w.t, dir)
	}
	if d := diffBytes(archive(w.kept), archive(w.lost)); len(d) > 0 {
		w.t.Errorf("the state archive after recovery differs:\n%s", d)
	}
}

func rotateHourly(c *config.Config) { c.ChangeList.Rotate = config.Duration{Duration: 2 * time.Hour} }

// TestRecoverMissingState: a CI runner with the previous output but no
// state rebuilds the state from the output: the next build publishes only
// the real changes, and exactly the documents a build with its state
// would have.
func TestRecoverMissingState(t *testing.T) {
	w := newTwins(t, rotateHourly)
	last := w.history()
	if err := os.RemoveAll(w.lost.State); err != nil {
		t.Fatal(err)
	}
	w.write("a.txt", "alpha 3\n")
	w.write("added.txt", "added\n")
	now := last.Add(time.Hour)
	w.kept.build(now)
	notes, sum, err := buildLost(t, w.lost, generator.Options{Now: now})
	if err != nil {
		t.Fatalf("build without state: %v", err)
	}
	if sum.Created != 1 || sum.Updated != 1 || sum.Deleted != 0 {
		t.Errorf("build without state: %d created, %d updated, %d deleted; want 1, 1, 0", sum.Created, sum.Updated, sum.Deleted)
	}
	if len(notes) != 1 || notes[0].Kind != generator.NoteInfo || !strings.Contains(notes[0].Msg, "rebuilt the state") {
		t.Errorf("notes %v, want one saying the state was rebuilt", notes)
	}
	w.same()
	// and the build after that one trusts the new state again
	w.write("a.txt", "alpha 4\n")
	w.build(now.Add(time.Hour))
	w.same()
}

// TestRecoverBadState: a truncated, altered or newer-version state is
// reported with a warning, kept aside, and rebuilt from the output.
func TestRecoverBadState(t *testing.T) {
	spoil := map[string]func(data []byte) []byte{
		"truncated": func(d []byte) []byte { return d[:len(d)/2] },
		"flipped":   func(d []byte) []byte { d[len(d)/3] ^= 0x40; return d },
		"empty":     func(d []byte) []byte { return nil },
		"newer": func(d []byte) []byte {
			d[len("rsgen-state\n")] = 99
			body := d[:len(d)-4]
			binary.LittleEndian.PutUint32(d[len(d)-4:], crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
			return d
		},
	}
	for name, f := range spoil {
		t.Run(name, func(t *testing.T) {
			w := newTwins(t, rotateHourly)
			last := w.history()
			p := filepath.Join(w.lost.State, snapshot.FileName)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f(data), 0o644); err != nil {
				t.Fatal(err)
			}
			w.write("z.txt", "zulu\n")
			now := last.Add(time.Hour)
			w.kept.build(now)
			notes, sum, err := buildLost(t, w.lost, generator.Options{Now: now})
			if err != nil {
				t.Fatalf("build with a %s state: %v", name, err)
			}
			if sum.Created != 1 || sum.Updated != 0 || sum.Deleted != 0 {
				t.Errorf("%d created, %d updated, %d deleted; want 1, 0, 0", sum.Created, sum.Updated, sum.Deleted)
			}
			if len(notes) != 1 || notes[0].Kind != generator.NoteWarning ||
				!strings.Contains(notes[0].Msg, "rebuilt it from the build published") {
				t.Errorf("notes %v, want one warning about the rebuilt state", notes)
			}
			kind := "corrupt"
			if name == "newer" {
				kind = "newer"
			}
			if _, err := os.Stat(p + "." + kind); err != nil {
				t.Errorf("the bad state was not kept aside: %v", err)
			}
			w.same()
		})
	}
}

// TestStateFromOutputForced: a stale state (a CI cache older than the
// published output) would republish changes already published; with
// StateFromOutput the state is rebuilt from the output instead.
func TestStateFromOutputForced(t *testing.T) {
	w := newTwins(t, nil)
	w.write("a.txt", "alpha\n")
	w.build(t0)
	stale, err := os.ReadFile(filepath.Join(w.lost.State, snapshot.FileName))
	if err != nil {
		t.Fatal(err)
	}
	w.write("a.txt", "alpha 2\n")
	w.build(t0.Add(time.Hour))
	if err := os.WriteFile(filepath.Join(w.lost.State, snapshot.FileName), stale, 0o644); err != nil {
		t.Fatal(err)
	}
	w.write("b.txt", "bravo\n")
	now := t0.Add(2 * time.Hour)
	w.kept.build(now)
	_, sum, err := buildLost(t, w.lost, generator.Options{Now: now, StateFromOutput: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Created != 1 || sum.Updated != 0 {
		t.Errorf("%d created, %d updated; want 1, 0 (the update of a.txt was published already)", sum.Created, sum.Updated)
	}
	w.same()
}

// TestStateFromOutputNeedsOutput: forcing recovery with no rsgen output
// is an error that says so.
func TestStateFromOutputNeedsOutput(t *testing.T) {
	s := newSite(t, testBaseURL, nil)
	s.write("a.txt", "alpha\n")
	_, _, err := buildLost(t, s, generator.Options{Now: t0, StateFromOutput: true})
	if err == nil || !strings.Contains(err.Error(), "no rsgen build") {
		t.Errorf("err = %v, want one saying the output holds no rsgen build", err)
	}
}

// TestRecoverSplitResourceList recovers the files of a Resource List Index
// and its parts, and of several sets.
func TestRecoverSplitResourceList(t *testing.T) {
	sets := func(c *config.Config) {
		c.Sets = []config.Set{{Name: "docs", Path: "docs"}, {Name: "all"}}
	}
	w := newTwins(t, sets)
	for i := range 30 {
		w.write("docs/"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+".txt", strings.Repeat("y", i))
	}
	w.write("top.txt", "top\n")
	w.buildWith(generator.WithEntryLimit(generator.Options{Now: t0}, 10))
	w.write("docs/a.txt", "changed\n")
	w.buildWith(generator.WithEntryLimit(generator.Options{Now: t0.Add(time.Hour)}, 10))
	w.kept.outFile("resourcesync/docs/resourcelist-00003.xml") // the list is split
	os.RemoveAll(w.lost.State)
	w.remove("top.txt")
	now := t0.Add(2 * time.Hour)
	w.kept.buildWith(generator.WithEntryLimit(generator.Options{Now: now}, 10))
	_, sum, err := buildLost(t, w.lost, generator.WithEntryLimit(generator.Options{Now: now}, 10))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Created != 0 || sum.Updated != 0 || sum.Deleted != 1 {
		t.Errorf("%d created, %d updated, %d deleted; want 0, 0, 1", sum.Created, sum.Updated, sum.Deleted)
	}
	w.same()
}
