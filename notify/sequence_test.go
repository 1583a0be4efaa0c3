package notify_test

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/rsgen/rsgen/notify"
)

// Sequence: consecutive notifications pass, a later start is a gap, a
// payload seen before or older than the last is a duplicate, and a
// notification of one instant reports that instant.
func TestSequence(t *testing.T) {
	d := func(s string) [32]byte { return sha256.Sum256([]byte(s)) }
	s := notify.NewSequence(at(0))
	steps := []struct {
		from, until int
		body        string
		dup         bool
		gap         []int // from, until
	}{
		{0, 10, "a", false, nil},
		{10, 20, "b", false, nil},
		{10, 20, "b", true, nil},             // resent
		{0, 10, "a", true, nil},              // resent, late
		{30, 40, "d", false, []int{20, 30}},  // one missed
		{40, 40, "e1", false, []int{40, 40}}, // a split at one instant
		{40, 40, "e2", false, []int{40, 40}},
		{40, 40, "e1", true, nil},
		{35, 50, "f", false, nil}, // overlapping: applied again, harmless
	}
	for i, st := range steps {
		dup, gap := s.Observe(at(st.from), at(st.until), d(st.body))
		switch {
		case dup != st.dup:
			t.Errorf("step %d: duplicate %v, want %v", i, dup, st.dup)
		case st.gap == nil && gap != nil:
			t.Errorf("step %d: gap %+v, want none", i, gap)
		case st.gap != nil && (gap == nil || !gap.From.Equal(at(st.gap[0])) || !gap.Until.Equal(at(st.gap[1]))):
			t.Errorf("step %d: gap %+v, want %v", i, gap, st.gap)
		}
	}
	// Without a start, the first notification has no gap.
	if dup, gap := notify.NewSequence(time.Time{}).Observe(at(50), at(60), d("x")); dup || gap != nil {
		t.Errorf("first notification of an unknown start: %v %+v", dup, gap)
	}
}
