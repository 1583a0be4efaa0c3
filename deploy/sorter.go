package deploy

import (
	"container/heap"
	"iter"
	"slices"

	"github.com/rsgen/rsgen/internal/chunked"
	"github.com/rsgen/rsgen/snapshot"
)

// sorter sorts more strings than a deploy holds in memory, in byte order:
// they are added in any order, sorted a run of runBytes at a time into a
// list that moves its blocks into an unnamed file of the folder dir
// (chunked.Strings, compressed against the string before), and the runs
// are merged as they are read. It holds one run being filled, and a block
// of each run.
type sorter struct {
	dir      string
	runBytes int
	run      []string
	size     int
	runs     []*chunked.Strings
}

// sortRunBytes is how many bytes of strings a sorter sorts in memory at a
// time; the tests make it small, so that they merge runs.
var sortRunBytes = 4 << 20

func newSorter(dir string) *sorter { return &sorter{dir: dir, runBytes: sortRunBytes} }

// add adds s.
func (s *sorter) add(str string) {
	s.run = append(s.run, str)
	if s.size += len(str) + 16; s.size >= s.runBytes {
		s.flush()
	}
}

// flush sorts the run being filled into a list of its own.
func (s *sorter) flush() {
	if len(s.run) == 0 {
		return
	}
	slices.Sort(s.run)
	list := &chunked.Strings{Spill: func() (chunked.File, error) { return snapshot.UnnamedFile(s.dir) }}
	for _, str := range s.run {
		list.Append(str)
	}
	s.runs = append(s.runs, list)
	s.run, s.size = s.run[:0], 0
}

// sorted yields the strings added, in byte order, duplicates included;
// it stops at the first error, which it returns through errp.
func (s *sorter) sorted(errp *error) iter.Seq[string] {
	return func(yield func(string) bool) {
		s.flush()
		h := &runHeap{}
		defer func() {
			for _, r := range *h {
				r.stop()
			}
		}()
		for _, list := range s.runs {
			next, stop := iter.Pull(list.All())
			r := &runReader{list: list, next: next, stop: stop}
			if r.advance() {
				heap.Push(h, r)
			} else if *errp = list.Err(); *errp != nil {
				return
			}
		}
		for h.Len() > 0 {
			r := (*h)[0]
			if !yield(r.head) {
				return
			}
			if r.advance() {
				heap.Fix(h, 0)
				continue
			}
			heap.Pop(h)
			r.stop()
			if *errp = r.list.Err(); *errp != nil {
				return
			}
		}
	}
}

// close removes the runs' files.
func (s *sorter) close() {
	for _, list := range s.runs {
		list.Close()
	}
	s.runs, s.run = nil, nil
}

// runReader reads one sorted run.
type runReader struct {
	list *chunked.Strings
	head string
	next func() (string, bool)
	stop func()
}

func (r *runReader) advance() bool {
	var ok bool
	r.head, ok = r.next()
	return ok
}

// runHeap orders the runs by their next string.
type runHeap []*runReader

func (h runHeap) Len() int           { return len(h) }
func (h runHeap) Less(i, j int) bool { return h[i].head < h[j].head }
func (h runHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)        { *h = append(*h, x.(*runReader)) }
func (h *runHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}
