package generator

import "sort"

// memberList is the members of a set: indexes in the scan's files, in walk
// order, held as runs of consecutive indexes. A set is mostly all the
// files, or a folder, whose files are consecutive in walk order: a run or
// a few, where a list of indexes took 8 bytes per resource.
type memberList struct {
	runs []memberRun
	n    int
}

// memberRun is a run of consecutive indexes: its first member's position
// in the list and index in the scan's files (32 bits each: a run per member,
// the worst case, costs what an index did).
type memberRun struct{ pos, index int32 }

func (m *memberList) add(i int) {
	if k := len(m.runs); k > 0 && int(m.runs[k-1].index)+m.n-int(m.runs[k-1].pos) == i {
		m.n++
		return
	}
	m.runs = append(m.runs, memberRun{pos: int32(m.n), index: int32(i)})
	m.n++
}

// Len returns the number of members.
func (m *memberList) Len() int {
	if m == nil {
		return 0
	}
	return m.n
}

// At returns the index in the scan's files of the k-th member.
func (m *memberList) At(k int) int {
	j := sort.Search(len(m.runs), func(j int) bool { return int(m.runs[j].pos) > k }) - 1
	return int(m.runs[j].index) + k - int(m.runs[j].pos)
}
