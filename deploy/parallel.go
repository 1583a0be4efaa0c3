package deploy

import (
	"context"
	"iter"
	"sync"
)

// uploadJobs is how many requests a deploy has in flight at once: S3
// requests are bound by latency, not bandwidth, for small files.
const uploadJobs = 16

// parallel calls fn with every item, uploadJobs at a time, reading items
// only as calls free up, so that they may be streamed from a file. The first error
// cancels the calls in flight, and no further call starts; parallel
// returns that error once every call has returned.
func parallel[T any](ctx context.Context, items iter.Seq[T], fn func(context.Context, T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan T)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for range uploadJobs {
		wg.Go(func() {
			for it := range work {
				if ctx.Err() != nil {
					continue // fed before the failure was seen: skip
				}
				if err := fn(ctx, it); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		})
	}
feed:
	for it := range items {
		select {
		case work <- it:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}
