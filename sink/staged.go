package sink

import (
	"errors"
	"iter"

	"github.com/rsgen/rsgen/internal/chunked"
)

// stagedFiles are the files staged for one step of publication, in the
// order they were staged: their output paths, and the names of their
// temporary files, which lie beside them. Each list holds its strings
// compressed against the one before (chunked.Strings) and, given a spill,
// moves its full blocks into an unnamed file of the state folder. A first
// build that keeps versions stages two files per resource: held as
// strings, with a map to find each, they took about 600 bytes per file
// with the collector's headroom (tree a's 100,000 files peaked at 214 MiB,
// where a build without versions holds 37).
type stagedFiles struct {
	rels, tmps chunked.Strings
}

// setSpill makes both lists move their full blocks, of blockSize bytes (0:
// the default), into a file of spill's.
func (l *stagedFiles) setSpill(spill func() (chunked.File, error), blockSize int) {
	l.rels.Spill, l.tmps.Spill = spill, spill
	l.rels.BlockSize, l.tmps.BlockSize = blockSize, blockSize
}

// add appends the file staged at output path rel, whose temporary file,
// beside it, is named tmp.
func (l *stagedFiles) add(rel, tmp string) {
	l.rels.Append(rel)
	l.tmps.Append(tmp)
}

// all yields the staged files in the order they were staged: their output
// paths and the names of their temporary files. When the lists cannot be
// read back, it stops early, and err says why.
func (l *stagedFiles) all() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		next, stop := iter.Pull(l.tmps.All())
		defer stop()
		for rel := range l.rels.All() {
			tmp, ok := next()
			if !ok || !yield(rel, tmp) {
				return
			}
		}
	}
}

// err returns the error that stopped all early, if any.
func (l *stagedFiles) err() error { return errors.Join(l.rels.Err(), l.tmps.Err()) }

// reset empties the lists, closes their files, and gives them spill.
func (l *stagedFiles) reset(spill func() (chunked.File, error), blockSize int) {
	l.rels.Close()
	l.tmps.Close()
	l.setSpill(spill, blockSize)
}
