package snapshot

import (
	"iter"
	"sync"
)

// The walk's helpers
//
// The walk of a scan is its one goroutine that every file passes through,
// in walk order: what it does for each file bounds the scan, however many
// cores read folders and files for it. Two of its jobs run beside it, in
// order too: the previous records are decoded ahead of it (decodeAhead),
// and the settled records are handed to Visit and spilled behind it
// (settler). The walk only merges.

// aheadBatch is how many previous records decodeAhead hands over at once,
// and aheadBatches how many batches it holds ready.
const (
	aheadBatch   = 256
	aheadBatches = 4
)

// recordBatch is a batch of records decoded ahead, or the error that ends
// them.
type recordBatch struct {
	recs []Record
	err  error
}

// decodeAhead reads the records of seq on a goroutine of its own, a few
// batches ahead of the caller, and returns functions that take them one at
// a time as iter.Pull2's do, and stop the reading. The batches the caller
// has taken every record of are filled again, not allocated anew: at a
// million records, new ones were 120 MB for the collector.
func decodeAhead(seq iter.Seq2[Record, error]) (next func() (Record, error, bool), stop func()) {
	batches := make(chan recordBatch, aheadBatches)
	free := make(chan []Record, aheadBatches+2)
	done := make(chan struct{})
	go func() {
		defer close(batches)
		send := func(b recordBatch) bool {
			select {
			case batches <- b:
				return true
			case <-done:
				return false
			}
		}
		empty := func() []Record {
			select {
			case b := <-free:
				return b[:0]
			default:
				return make([]Record, 0, aheadBatch)
			}
		}
		batch := empty()
		for r, err := range seq {
			if err != nil {
				send(recordBatch{recs: batch, err: err})
				return
			}
			if batch = append(batch, r); len(batch) == aheadBatch {
				if !send(recordBatch{recs: batch}) {
					return
				}
				batch = empty()
			}
		}
		if len(batch) > 0 {
			send(recordBatch{recs: batch})
		}
	}()
	var cur recordBatch
	var taken []Record // the batch cur.recs is the rest of
	ended := false
	next = func() (Record, error, bool) {
		for len(cur.recs) == 0 && !ended {
			if cur.err != nil {
				err := cur.err
				cur.err, ended = nil, true
				return Record{}, err, true
			}
			if taken != nil {
				select {
				case free <- taken:
				default:
				}
			}
			var ok bool
			if cur, ok = <-batches; !ok {
				ended = true
			}
			taken = cur.recs
		}
		if ended {
			return Record{}, nil, false
		}
		r := cur.recs[0]
		cur.recs = cur.recs[1:]
		return r, nil, true
	}
	stop = func() {
		close(done)
		for range batches {
		}
	}
	return next, stop
}

// settler keeps the settled chunks of records (scan.keep) on a goroutine of
// its own, in the order the walk hands them over; the first error of keep
// (Visit's) stops it.
type settler struct {
	chunks chan []Record
	done   chan struct{}
	mu     sync.Mutex
	err    error
}

// handOver hands the settled records recs to the settler, started at the
// first, or returns the error that stopped it.
func (s *scan) handOver(recs []Record) error {
	if s.settler == nil {
		st := &settler{chunks: make(chan []Record, aheadBatches), done: make(chan struct{})}
		go st.run(s.keep)
		s.settler = st
	}
	if err := s.settler.failed(); err != nil {
		return err
	}
	s.settler.chunks <- recs
	return nil
}

func (st *settler) run(keep func([]Record) error) {
	defer close(st.done)
	for recs := range st.chunks {
		if st.failed() != nil {
			continue
		}
		if err := keep(recs); err != nil {
			st.mu.Lock()
			st.err = err
			st.mu.Unlock()
		}
	}
}

func (st *settler) failed() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.err
}

// finishSettling waits for the settler to keep what it was handed, and
// returns its error; the results are then complete.
func (s *scan) finishSettling() error {
	if s.settler == nil {
		return nil
	}
	close(s.settler.chunks)
	<-s.settler.done
	err := s.settler.err
	s.settler = nil
	return err
}
