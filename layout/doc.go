// Package layout owns where things are: the paths of the documents rsgen
// writes inside the output folder, the mapping from a source-relative file
// path to the absolute URI that names it, the order in which paths are
// listed, and the glob patterns that select paths.
//
// # Paths and URIs
//
// A source path is slash-separated and relative to the source root, the way
// io/fs names files. Its URI is the base URL followed by the path with every
// byte percent-encoded except the RFC 3986 unreserved characters and "/".
// This is stricter than RFC 3986 requires (it also encodes sub-delimiters
// such as "&" and "+"), because static hosts disagree about those: S3, for
// one, reads a literal "+" in a path as a space. Every web server decodes
// %XX in paths, so the stricter form is fetched correctly everywhere.
//
// # Order
//
// Paths are listed in walk order: compared byte by byte with "/" sorting
// before every other byte. That is the order in which a lexical directory
// walk visits files, so a walk and a sorted state can be merged in one pass
// without sorting.
package layout
