package generator

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/sink"
)

// TestSplitListWritesPartsInParallel: a split list whose entries have a
// bound of their bytes that lets a part hold as many as a document may is
// written part by part at once, each part rendered by an entry function
// of its own, and gives the bytes of parts written one after the other,
// each until it is full; written again, a part whose entries are the same
// is left alone. A bound that is wrong (an entry is longer) falls back to
// parts written until full.
func TestSplitListWritesPartsInParallel(t *testing.T) {
	cfg := config.Default()
	cfg.Dir, cfg.BaseURL = t.TempDir(), "https://data.example.org/"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := resolve(&cfg, Options{limits: limits{entries: 3, bytes: 4096 + 3*300}})
	if err != nil {
		t.Fatal(err)
	}
	st := s.sets[0]
	doc := layout.ResourceList(st.Name)
	list := func(n int, name func(i int) string, bound int64, made *atomic.Int32) listing {
		newEntry := func() func(i int, e *rs.Entry) error {
			made.Add(1)
			return func(i int, e *rs.Entry) error {
				*e = rs.Entry{Loc: s.resURL(name(i)), MD: rs.MD{Length: int64(i), HasLength: true}}
				return nil
			}
		}
		return listing{md: rs.MD{Capability: rs.CapResourceList}, n: n, size: 1 << 30, entry: newEntry(), newEntry: newEntry, entryBound: bound}
	}
	write := func(out string, l listing, parallel bool) map[string]os.FileInfo {
		t.Helper()
		w := sink.New(out, nil)
		d := docWriter{s: s, w: w}
		parts := putParts(nil)
		if parallel {
			parts = d.writeParts
		}
		if err := writeSplit(s, st, doc, l, nil, d.writeDoc, parts); err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		files := map[string]os.FileInfo{}
		for _, rel := range w.Outputs() {
			info, err := os.Stat(w.Path(rel))
			if err != nil {
				t.Fatal(err)
			}
			files[rel] = info
		}
		return files
	}
	same := func(a, b string, files map[string]os.FileInfo) {
		t.Helper()
		for rel := range files {
			x, _ := os.ReadFile(filepath.Join(a, filepath.FromSlash(rel)))
			y, err := os.ReadFile(filepath.Join(b, filepath.FromSlash(rel)))
			if err != nil || string(x) != string(y) {
				t.Errorf("%s differs between the parts written at once and one after the other (%v)", rel, err)
			}
		}
	}
	short := func(i int) string { return fmt.Sprintf("f%03d", i) }
	var made atomic.Int32
	one, many := t.TempDir(), t.TempDir()
	serial := write(one, list(9, short, 200, &made), false)
	made.Store(0)
	parallel := write(many, list(9, short, 200, &made), true)
	if len(parallel) != 4 || len(serial) != 4 || made.Load() != 1+3 {
		t.Fatalf("%d files written at once, %d one after the other, %d entry functions; want an index and 3 parts, and one function per part", len(parallel), len(serial), made.Load()-1)
	}
	same(one, many, parallel)

	// The entries of the second part change: it alone is written again.
	changed := func(i int) string {
		if i == 4 {
			return "changed"
		}
		return short(i)
	}
	again := write(many, list(9, changed, 200, &made), true)
	for rel, info := range again {
		if replaced := !os.SameFile(info, parallel[rel]); replaced != (rel == layout.Part(doc, 2)) {
			t.Errorf("%s replaced: %v", rel, replaced)
		}
	}

	// A bound that is wrong: the parts are written until full.
	long := func(i int) string { return short(i) + strings.Repeat("x", 1500) }
	serial = write(one, list(6, long, 200, &made), false)
	parallel = write(many, list(6, long, 200, &made), true)
	if len(serial) != 4 || len(parallel) != 4 {
		t.Errorf("%d files one after the other, %d at once; want an index and 3 parts of 2 entries", len(serial), len(parallel))
	}
	same(one, many, parallel)
}
