package hosting

import "testing"

func TestDropOldestClosed(t *testing.T) {
	rules := []Rule{{Path: "a", ClosedFrom: 3}, {Path: "b"}, {Path: "c", ClosedFrom: 1}, {Path: "d", ClosedFrom: 2}}
	got := dropOldestClosed(rules, 2)
	var paths []string
	for _, r := range got {
		paths = append(paths, r.Path)
	}
	if len(paths) != 2 || paths[0] != "a" || paths[1] != "b" {
		t.Errorf("kept %v, want [a b]: the two oldest closed documents go first", paths)
	}
	if got := dropOldestClosed(rules, 10); len(got) != 1 || got[0].Path != "b" {
		t.Errorf("dropping more than there are kept %v, want [b]", got)
	}
}
