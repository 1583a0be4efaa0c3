// Package serve serves an rsgen output folder over HTTP the way the
// production hosts should, so that Destinations and people can try a
// Source before it is published: it is the server of `rsgen serve` and
// `rsgen watch --serve`.
//
// # What a response carries
//
// The output folder is served at the path of its base URL, as the hosts
// serve it: at / for http://h/, at /pub/ for http://h/pub/. The base URL
// is the configured one, else the one the Source Description in the
// folder was published under (PublishedBaseURL), read again whenever it
// changes. The Source Description (.well-known/resourcesync, which has no
// extension) and every .xml document are application/xml, ZIP packages
// application/zip, and resources have the media type of rsgen's own table
// (layout.ContentType), else the one their Resource List published. A
// resource that a set lists carries, for each such set,
//
//	Link: <B/resourcesync/S/capabilitylist.xml>; rel="resourcesync"
//
// and its Last-Modified is the lastmod published for it, not the file's
// mtime, so that a Destination comparing the two does not fetch it again.
// The Handler learns both as a Destination would: it reads the Source
// Description for the sets, then their Resource Lists (and their parts),
// with rs.Reader, which bounds what it reads; it reads them again when one
// of them changes on disk. A notification topic that a Capability List
// advertises (a channel of capability change-notification or
// framework-notification) is served with the headers of
// notify.TopicHeaders, application/xml and
//
//	Link: <TOPIC>; rel="self", <HUB>; rel="hub"
//
// with the hub the entry names, and Cache-Control no-cache. Documents and unlisted files have the file's
// mtime. Cache-Control is the one the hosting files give the hosts and
// rsgen deploy gives S3 (hosting.CacheOf): a year, immutable, for what rsgen
// never rewrites, Options.ShortCache ([publish] short_cache) for the other
// files it writes, none for the resources. Every file has a strong ETag
// made of its inode, size and mtime;
// Range, HEAD and conditional requests are answered by net/http's
// ServeContent.
//
// A folder is served as its index.html, and named without its trailing
// slash, redirected to it; there are no listings. The top of the site,
// when it has no index.html, leads to the document browser
// (resourcesync/index.html), and the top of the server to the base path.
//
// # What is refused
//
// A request for a name the server does not listen as gets 421 Misdirected
// Request: it answers only for localhost, the loopback addresses, the
// address it was told to listen on and its base URL's host, so that a page
// that rebinds its own name to this machine (DNS rebinding) reads nothing
// (see host.go).
//
// Only what a host configured by rsgen serves is served. Paths with a ".."
// segment, however encoded (%2e%2e, ..%2f), are a bad request. Files are
// opened through an os.Root, so a symlink leading out of the folder is
// forbidden. Not found are: the generator's temporary files
// (.rsgen-tmp-*), which become documents only when renamed into place, so
// that no response ever holds half a document; the hosting files rsgen
// writes for the hosts (rsgen-nginx.conf, .htaccess, _headers, .nojekyll),
// which those hosts refuse too; every path with a
// dot-segment (.git/config, a .env), except in .well-known, the resources
// the Resource Lists list (dotfiles published with include_dotfiles) and
// rsgen's versions of them; and a file named with a trailing slash.
//
// # Development (Options.Dev)
//
// For `rsgen watch --serve`, HTML responses reload in the browser after
// each build, and show the error of a failed one, through server-sent
// events (see dev.go and Handler.Built). The script is added to the
// responses, never to the files.
//
// # The server
//
// Start runs a Handler with the limits of a server left running: a bound
// on connections at once, in all and from one client address (a new
// client takes the place of the longest idle one, or gets 503), header and
// idle timeouts, and a minimum rate at which a client must read, instead
// of an overall write timeout that would cut a large download (see
// server.go).
//
// # Caveats
//
// Each file is atomic, but a build replaces several. Options.Lock closes
// that gap: `rsgen watch --serve` holds it for writing during each build,
// and requests hold it for reading while they find and open their file, so
// that a request sees the whole of one build or the whole of the next.
// Streaming the bytes of an open file needs no lock: a newer version is
// another file renamed over the name (except for resources hard-linked
// from the source, which an editor writing in place changes).
//
// A dotfile published with include_dotfiles but in no set is in the
// output and in no Resource List: it is not served, as nothing tells it
// from a stray one. The links inside the documents point at the base URL:
// to follow them against this server, build with a base URL it serves,
// such as http://127.0.0.1:8080/ (SiteURL tells whether it does).
package serve
