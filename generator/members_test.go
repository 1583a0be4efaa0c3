package generator

import "testing"

// TestMemberListHoldsRuns: a set's members are held as runs of
// consecutive indexes, one for a set of all the files, and each member is
// found at its position.
func TestMemberListHoldsRuns(t *testing.T) {
	var all memberList
	for i := range 5000 {
		all.add(i)
	}
	if len(all.runs) != 1 || all.Len() != 5000 || all.At(4321) != 4321 {
		t.Errorf("every index: %d runs, Len %d, At(4321) = %d; want 1, 5000, 4321", len(all.runs), all.Len(), all.At(4321))
	}
	want := []int{3, 4, 5, 9, 20, 21, 40}
	var some memberList
	for _, i := range want {
		some.add(i)
	}
	if len(some.runs) != 4 || some.Len() != len(want) {
		t.Errorf("%v: %d runs, Len %d; want 4 and %d", want, len(some.runs), some.Len(), len(want))
	}
	for k, i := range want {
		if got := some.At(k); got != i {
			t.Errorf("member %d is %d, want %d", k, got, i)
		}
	}
	var none *memberList
	if none.Len() != 0 {
		t.Error("a set with no member has members")
	}
}
