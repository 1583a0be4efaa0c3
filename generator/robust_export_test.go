package generator

// Every build of the tests spills its scan's records and the list of the
// resources it added, as a large build does; the golden tests build in
// memory too (see inMemory).
func init() { spillAfter, spillBlockSize = 1, 16 }

// WithEntryLimit returns opts with documents limited to n entries, so that
// black-box tests can split Resource Lists and close Change Lists early.
func WithEntryLimit(opts Options, n int) Options {
	opts.limits = limits{entries: n, bytes: 50_000_000}
	return opts
}

// CheckReferences is checkReferences for the black-box tests.
var CheckReferences = checkReferences
