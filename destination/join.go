package destination

import "iter"

// lastOfEach yields, of each run of values with the same path in a
// sequence sorted by path, the last: the newest event of a resource, the
// last operation of the journal on a file.
func lastOfEach[T any](seq iter.Seq2[T, error], pathOf func(*T) string) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var last T
		have := false
		for v, err := range seq {
			if err != nil {
				yield(v, err)
				return
			}
			if have && pathOf(&last) != pathOf(&v) {
				if !yield(last, nil) {
					return
				}
			}
			last, have = v, true
		}
		if have {
			yield(last, nil)
		}
	}
}

// join walks two sequences sorted by path, each holding a path at most
// once, and calls fn once per path with the value of each that holds it
// (nil for the other), in path order. It is how a sync compares what a
// Source lists with what DIR holds without holding either in memory.
func join[A, B any](as iter.Seq2[A, error], bs iter.Seq2[B, error], pathA func(*A) string, pathB func(*B) string, fn func(a *A, b *B) error) error {
	nextA, stopA := iter.Pull2(as)
	defer stopA()
	nextB, stopB := iter.Pull2(bs)
	defer stopB()
	a, errA, okA := nextA()
	b, errB, okB := nextB()
	for {
		if errA != nil {
			return errA
		}
		if errB != nil {
			return errB
		}
		var err error
		switch {
		case !okA && !okB:
			return nil
		case okA && (!okB || comparePaths(pathA(&a), pathB(&b)) < 0):
			err = fn(&a, nil)
			a, errA, okA = nextA()
		case okB && (!okA || comparePaths(pathA(&a), pathB(&b)) > 0):
			err = fn(nil, &b)
			b, errB, okB = nextB()
		default:
			err = fn(&a, &b)
			a, errA, okA = nextA()
			b, errB, okB = nextB()
		}
		if err != nil {
			return err
		}
	}
}

func storedPath(r *storedRecord) string { return r.path }
func wantPath(w *want) string           { return w.path }
func opPath(o *op) string               { return o.rec.path }
