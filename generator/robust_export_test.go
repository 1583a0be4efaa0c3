package generator

import "context"

// WithEntryLimit returns opts with documents limited to n entries, so that
// black-box tests can split Resource Lists and close Change Lists early.
func WithEntryLimit(opts Options, n int) Options {
	opts.limits = limits{entries: n, bytes: 50_000_000}
	return opts
}

// HoldLock takes the state lock of dir as a build would, for tests that
// need another process to hold it.
func HoldLock(dir string) (release func(), err error) {
	l, err := acquireLock(context.Background(), dir, false, nil)
	if err != nil {
		return nil, err
	}
	return l.release, nil
}

// CheckReferences is checkReferences for the black-box tests.
var CheckReferences = checkReferences
