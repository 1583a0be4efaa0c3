// Package generator builds the whole ResourceSync site: it scans the source
// against the state snapshot, turns the differences into change events,
// places the resources in the output folder and writes the document tree.
//
// # The document tree
//
// For a base URL B and each set S of resources (layout names every path):
//
//	B/.well-known/resourcesync                       Source Description
//	B/resourcesync/S/capabilitylist.xml              Capability List of S
//	B/resourcesync/S/resourcelist.xml                Resource List, or its index
//	B/resourcesync/S/resourcelist-00001.xml ...      parts, when split
//	B/resourcesync/S/changelist.xml                  Change List Index (not with [changelist] index = false:
//	                                                 the Capability List then points at the open list)
//	B/resourcesync/S/changelists/changelist-T.xml    one Change List per segment
//	B/<path>                                         the resources themselves
//
// Every link points up the tree: parts to their index ("index") and to the
// Capability List ("up"), Capability Lists to the Source Description.
//
// # Time
//
// A build has one time, Options.Now, taken from --now, SOURCE_DATE_EPOCH or
// the clock by the caller, never read here. It is clamped so that it never
// runs backwards past the previous build. Change events carry it as their
// datetime. The Resource List's "at" is the time of the last build that
// changed its set, so a build without changes writes the same bytes.
//
// # Journals
//
// Each set keeps a journal of Change List segments (journal.go). The open
// segment collects the set's events; it is closed (given "until") when it
// is older than the configured rotation period and holds events, or would
// pass 50,000 events or the byte limit, and a new one opens at the same
// instant. A segment without events is never closed: an open Change List
// may be empty, a closed one never is. A closed segment's Change List (and
// Change Dump) is written once, into the state folder's archive, and never
// rewritten, so its URI can be cached forever. The Change List Index
// always exists, even with one list, so that the Capability List never has
// to change the URI it points at. No other document is published empty:
// an open Change Dump waits for its segment's first package, an archive
// for its first entry, and a set without files has no Resource List or
// Resource Dump; a Capability List lists what its set publishes.
//
// # What cannot be made again
//
// The state folder keeps, with their checksums, every output no later
// build could make again: closed documents, archived documents, Change
// Dump packages, packages of archived Resource Dumps and kept versions
// (kept.go). A wiped output folder is rebuilt whole from it, a lost state
// folder is rebuilt from the output (recover.go), a damaged copy on one
// side is repaired from the other, and a file whose copies are both lost
// is never published: the documents that need it leave the output.
//
// # The stages of a build
//
// A build (build.go) is a pipeline of stages; each takes values and
// returns a value that the next one takes, and none reaches back into an
// earlier one:
//
//	resolve  the configuration and the options into one immutable site:
//	         base URLs parsed once, digests, and the sets with their dumps,
//	         archives and links (site.go, selection.go), or a refusal of
//	         values no document could hold (configsizes.go)
//	load     the previous state, or its recovery from the output
//	         (load.go, recover*.go), held against the site (continuity.go);
//	         a build then prepares the folders (prepare.go) and surveys the
//	         files the state folder keeps (survey.go)
//	scan     the source walked and diffed against the previous state into
//	         the scanned records and events, with each set's members and
//	         each resource's placement gathered as the scan settles them
//	         (scan.go)
//	plan     a pure function of the site, the previous state, what the
//	         load found and the scan, which decides what every document,
//	         package, version and archive becomes: the journals and
//	         retention, the versions kept and dropped, the packages kept or
//	         made, what leaves the state archive (plan.go, journal.go,
//	         retention.go, packages.go, versionplan.go)
//	write    writers that each take what they render and the sink, and
//	         call no other writer, in the order of publication: resources
//	         (output.go), side files, versions (versions.go), every set's
//	         documents, leaves first (changelists.go, lists.go, dumps.go,
//	         archives.go), the hosting files; write.go passes the values of
//	         one writer to the next
//	commit   the sink's commit, the kept files, the removal of what is no
//	         longer published, and the state's save (commit.go)
//
// A scan that finds nothing changed, in a build whose configuration
// (outputformat.go), clock and output leave every document as the last
// build published it, ends the build: it writes nothing but a record that
// it ran, or, when it read files whose bytes it found unchanged, the
// state with their new stats (unchanged.go). Plan (rsgen status) runs resolve, load and scan,
// and writes nothing. A source file removed between the scan and its use
// makes Build run the stages again, under the same lock (rescan.go).
// The versions of a site that keeps them grow with every build, so the
// plan decides of them as a rule, and of each resource as the versions
// writer streams the previous versions past the scan's records
// (versionPlan.resource), so that a build never holds them whole.
//
// # Writing
//
// Every file reaches the output through package sink: streamed into a
// temporary file, compared with the file already there while it streams
// (an unchanged document is not rewritten), staged, and renamed into place
// with the build's other files in the order of publication, the Source
// Description last, so that a reader that starts at the top during a build
// never follows a link to a missing document. The snapshot is saved only
// after the whole output is complete.
//
// # Beside the documents
//
// Every build publishes the document browser (package viewer) unless
// [publish] viewer is off; [publish] stylesheet adds an XSL stylesheet that
// every document references by a relative href. [publish] targets and
// robots add hosting files at the top of the output (package hosting), all
// derived from one plan of content types, Link headers and cache classes
// (hosting.go); html_link rewrites the HTML resources of the sets, whose
// records then describe the published bytes (htmllink.go). These files are
// outputs like the documents: a build that stops writing one removes it.
//
// # Caveats
//
// The 2008 Sitemap schema requires at least one <url> in a <urlset>, while
// the specification (§7) allows none: an empty open Change List is valid
// ResourceSync but fails that schema. And the ResourceSync schema's pattern
// for media types refuses "." and "_", so a media type such as
// application/vnd.ms-excel is left out of the type attribute rather than
// written into a document that fails validation.
package generator
