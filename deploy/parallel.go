package deploy

import (
	"context"
	"iter"

	"golang.org/x/sync/errgroup"
)

// uploadJobs is how many requests a deploy has in flight at once: S3
// requests are bound by latency, not bandwidth, for small files.
const uploadJobs = 16

// parallel calls fn with every item, uploadJobs at a time, reading items
// only as calls free up, so that they may be streamed from a file. The
// first error cancels the calls in flight, and no further call starts;
// parallel returns that error once every call has returned.
func parallel[T any](ctx context.Context, items iter.Seq[T], fn func(context.Context, T) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(uploadJobs) // Go waits for a free slot: items are read as calls free up
	for it := range items {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if gctx.Err() != nil {
				return nil // its slot freed after the failure: start nothing
			}
			return fn(gctx, it)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}
