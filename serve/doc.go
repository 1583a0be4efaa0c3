// Package serve serves an rsgen output folder over HTTP the way the
// production hosts should, so that Destinations and people can try a
// Source before it is published: it is the server of `rsgen serve` and
// `rsgen watch --serve`.
//
// # What a response carries
//
// The Source Description (.well-known/resourcesync, which has no extension)
// and every .xml document are application/xml, ZIP packages
// application/zip, and resources have the media type of rsgen's own table
// (layout.TypeByName), else the one their Resource List published. A
// resource that a set lists carries, for each such set,
//
//	Link: <B/resourcesync/S/capabilitylist.xml>; rel="resourcesync"
//
// and its Last-Modified is the lastmod published for it, not the file's
// mtime, so that a Destination comparing the two does not fetch it again.
// The Handler learns both by reading the sets' Resource Lists (and their
// parts) as a Destination would, and reads them again when one of them
// changes on disk. Documents and unlisted files have the file's mtime.
// Every file has a strong ETag made of its inode, size and mtime; Range,
// HEAD and conditional requests are answered by net/http's ServeContent.
//
// # What is refused
//
// Paths with a ".." segment, however encoded (%2e%2e, ..%2f), are a bad
// request. Files are opened through an os.Root, so a symlink leading out of
// the folder is forbidden. The generator's temporary files (.rsgen-tmp-*)
// are not found: they become documents only when renamed into place, and a
// rename is atomic, so no response ever holds half a document. A folder is
// served as its index.html, or not at all: there are no listings.
//
// # Caveats
//
// Each file is atomic, but a build replaces several. Options.Lock closes
// that gap: `rsgen watch --serve` holds it for writing during each build,
// and requests hold it for reading while they find and open their file, so
// that a request sees the whole of one build or the whole of the next.
// Streaming the bytes of an open file needs no lock: a newer version is
// another file renamed over the name (except for resources hard-linked
// from the source, which an editor writing in place changes). The links inside the documents point
// at the configured base URL; to follow them against this server, build
// with a base URL such as http://127.0.0.1:8080/.
package serve
