package deploy

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSorterMergesRuns sorts strings through runs of a few bytes each, so
// that the merge reads many: it yields them all, duplicates included, in
// byte order.
func TestSorterMergesRuns(t *testing.T) {
	s := newSorter(t.TempDir())
	s.runBytes = 200
	defer s.close()
	rng := rand.New(rand.NewPCG(1, 2))
	var want []string
	for range 2000 {
		str := fmt.Sprintf("%x/%d", rng.IntN(500), rng.IntN(3))
		want = append(want, str)
		s.add(str)
	}
	slices.Sort(want)
	var err error
	got := slices.Collect(s.sorted(&err))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.runs) < 10 {
		t.Fatalf("%d runs: the test merges too few", len(s.runs))
	}
	if !slices.Equal(got, want) {
		t.Errorf("sorted %d strings into %d, or out of order", len(want), len(got))
	}
}

// TestBuiltInAnotherOrder deploys a site whose paths the state records in
// another order than the output's file list (a folder's files come before
// its siblings "a b", "a-b" and "a.txt" in the state, after them in the
// list), with kept versions (recorded by resource, published by time),
// through runs of a few bytes: the deploy finds the output to be the
// build, and names the one file changed since.
func TestBuiltInAnotherOrder(t *testing.T) {
	defer func(n int) { sortRunBytes = n }(sortRunBytes)
	sortRunBytes = 300
	dir := t.TempDir()
	s := &site{dir: dir}
	for _, rel := range []string{"a/x.txt", "a/y/z.txt", "a b.txt", "a-b/c.txt", "a.txt", "a0.txt", "b"} {
		s.write(t, rel, "first "+rel+"\n")
	}
	s = newSite(t, dir, "[[set]]\nname = \"default\"\nkeep_versions = true\n", "https://data.example.org/")
	s.write(t, "a/x.txt", "second\n")
	s.write(t, "b", "second b\n")
	s.build(t)
	store, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	run(t, s.options(store))

	p := filepath.Join(s.cfg.Out, "a-b", "c.txt")
	os.Remove(p)
	os.WriteFile(p, []byte("changed by hand\n"), 0o644)
	_, err = Run(context.Background(), s.options(store))
	var differs *OutputDiffersError
	if !errors.As(err, &differs) || differs.Count != 1 || differs.Files[0] != "a-b/c.txt (changed since the build)" {
		t.Fatalf("deploy of an output changed by hand: %v", err)
	}
}
