// Package sink owns every write a build makes to the output folder: the
// documents, dump packages, kept versions and side files that rsgen
// generates, and the temporary files through which resources are placed.
//
// Nothing is written in place. A file is streamed into a temporary file
// beside its destination (named with layout.TempPrefix), compared with the
// file already there while it streams (Lazy: an unchanged document is not
// rewritten, and its mtime stays), and staged. Once every file of the
// build is written, Commit renames the staged files into place in the
// order of publication (layout.PublishStep), so that no published document
// ever links to a file that is not there yet, and a build that fails
// before leaves the published output as it was. The staged files are
// held as lists of compressed paths that spill into files of the state
// folder (SpillInto), so that a build that stages a file or two per
// resource (the first build that keeps versions) holds blocks, not a path
// per file.
//
// The Sink records the output path of every file it publishes (Outputs),
// but the files of kept versions, which the state keeps apart: the state
// keeps them, and the next build removes those it no longer writes. It counts them by Kind, by the place layout gives each kind, so
// that the summary's "documents" are ResourceSync documents only, as the
// checker counts them.
package sink
