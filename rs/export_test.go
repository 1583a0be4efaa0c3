package rs

// Test hooks, compiled only into the tests.

// SetLimits changes the entry and byte limits of a Reader; call it before
// Head. The tests exercise the limits with it, without 50 MB documents.
func (r *Reader) SetLimits(entries int, bytes int64) { r.maxEntries, r.in.limit = entries, bytes }

// Bytes returns the number of bytes a Writer has written so far.
func (w *Writer) Bytes() int64 { return w.bytes }
