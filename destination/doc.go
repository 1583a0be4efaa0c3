// Package destination is the other half of a ResourceSync Source: a
// Destination that mirrors the resources of one set of a Source into a
// folder (DIR) and keeps it in sync, as `rsgen sync` runs it. It owns
// discovery, the baseline, incremental synchronisation, verification, the
// state of a mirror and resuming a sync that was stopped.
//
// # Discovery
//
// A sync starts from the Source's base URL (its Source Description is at
// .well-known/resourcesync below it), from the Source Description, or from
// a Capability List, which picks its own set. A Source Description with
// several Capability Lists needs Options.Set, and the error lists them.
// The base URL, that resources are mirrored from, is the one the Source
// Description lies under; for a Capability List given alone, the one its
// up link leads to, else the top of its host.
//
// # The parts of a run
//
// A run (sync.go) opens the state and takes its lock, discovers the set,
// chooses a baseline, the changes, or a new baseline after a gap, and
// commits the state; it does the rest through two parts, each given what
// it needs, that data flows through one way:
//
//	reader   reads the Source's documents: the Resource List and the
//	         parts of its index, the Change Lists that the Capability
//	         List, their index and their archive name, and the dumps'
//	         listings (lists.go, changes.go, dumps.go), and returns their
//	         entries as wants sorted on disk, and their times; it never
//	         touches DIR or the inventory
//	applier  brings DIR to those wants: plans, deletes, fetches,
//	         verifies and places, on a pool of workers, keeps the
//	         inventory with DIR, and places the files of dump packages
//	         (apply.go, dumps.go); it never reads a list
//
// Audit uses the reader alone, and compares its wants with DIR.
//
// # Where a resource lands
//
// A resource whose URI lies under the base URL lands at its path below it,
// percent-decoded byte for byte: http://h/a%20b/c%23d.txt is "a b/c#d.txt".
// A URI that cannot name a file of DIR is refused with a *RefusedError and
// nothing is written for it anywhere: a query or fragment, a path that
// decodes to "..", ".", empty segments or a NUL byte, a name longer than
// the file system holds, a name starting with rsgen's temporary prefix.
// Resources on other hosts are skipped (counted, and said once), or with
// Options.OtherHosts mirrored under DIR/HOST/.
//
// # Baseline and changes
//
// The first sync is a baseline: the Resource List (through its index and
// parts) says what DIR must hold, and every other file the state knows of
// is deleted. Its at is the time changes are followed from. Every later
// sync reads the Change Lists that may hold events since that time: those
// the Change List Index names, the Change List Archive's, or a Change List
// named alone, in the order of their from. The events are applied once
// each: the newest per resource wins, and an event a resource has taken in
// already (its record holds a change as new, with matching bytes) is not
// applied again. When the lists no longer reach back to the last sync (a
// gap), or the Source publishes none, the sync says so and takes a new
// baseline, which fetches only what differs (or, with NoRebaseline, stops
// with ErrGap). A Change List without a from (resync writes none) is taken
// to reach back; nothing tells otherwise.
//
// Dumps only seed: with DumpsAuto, when the packages of the Resource Dump
// (or the Change Dumps since the last sync) cost fewer bytes than the
// fetches planned, each counted with a request's cost, the sync places the
// files of their manifests, each verified against its manifest entry, and
// then the lists decide as always, finding those files right. A dump
// never makes DIR other than the lists say.
//
// # The verified-apply path
//
// Whatever says what DIR should hold, a Resource List or change events
// (and, later, a notification's change set), comes to apply as a stream of
// wants sorted by path, one per path. apply joins it with the inventory,
// decides each path without touching a disk (decide, in plan.go), and
// carries the decisions out: deletions first, then fetches on
// Options.Jobs workers. Each fetch streams the body into a temporary file
// of DIR through a verifier of the length and every digest listed (md5,
// sha-1, sha-256), and only bytes that match are renamed into place; a
// mismatch, a truncated or stalled body, a 429 or a 5xx is tried again,
// with backoff and Retry-After honoured, then reported as an EventFailed.
// The sync goes on with the other resources and ends with ErrIncomplete;
// its sync point does not move, so the next sync tries them again.
//
// # The state
//
// DIR holds the mirrored resources and nothing else: a fetch writes its
// file unnamed in its folder and links it into place, or, where it
// replaces a file or the file system cannot, under a temporary name
// (.rsgen-tmp-sync-*) it renames (tempfile.go). Everything else lives in
// the state folder, by default .rsgen-sync/NAME beside DIR (DefaultState): the
// sync point (sync.json), the documents last fetched with their ETag and
// Last-Modified (the next request for each is conditional), and the
// inventory, one record per mirrored file, sorted by path: its length and
// digests, its lastmod, the last change applied, and the stat (size,
// mtime, ctime, inode) it had when it landed. A file whose stat changed
// since is not trusted: it is hashed again, or fetched. The inventory is a
// base and a delta of what changed since it (inventory.go), and change
// events find their records by bisecting both (lookup.go): a sync of a
// few changes to a large mirror reads and writes a few lines.
//
// Every path of DIR is opened with openat2 and RESOLVE_BENEATH and
// RESOLVE_NO_SYMLINKS, one system call that the kernel keeps below DIR and
// off links; on kernels before Linux 5.6, through an os.Root, the folders
// on the way checked one by one.
//
// Nothing scales with the number of resources in memory: lists are read
// as streams, their entries sorted on disk in runs of a few megabytes
// (sorter), and joined with the inventory as two sorted streams. Memory is
// that of the fetches in flight and one run.
//
// # Resuming
//
// Each file that lands is written to the journal, one line in one
// write(2), after its rename. A sync killed at any point (kill -9) leaves
// DIR holding verified files only, and a journal that says which. The next
// sync finds the journal, merges it into the inventory, removes the
// temporary names a kill left in DIR, and starts again from the Source's
// documents, skipping every file the inventory vouches for; a file that
// landed just before the kill, before its journal line, is found by its
// digests and kept. It ends with the DIR an uninterrupted sync would have
// left.
//
// # Listening
//
// Listen is a sync that then stays: it subscribes to the set's Change
// Notification channel at the hub its Capability List names (package
// notify's Subscriber verifies signatures, renews the lease, and checks
// the notifications' from and until for gaps), and applies each
// notification as the events of a Change List, one at a time and in
// order, through the verified-apply path: the state then says what a
// sync would, and a later sync goes on from it. A notification that does
// not start where the state's changes end (a gap), or that cannot be
// applied, is closed from the Change Lists by an incremental sync. When
// ctx ends, Listen unsubscribes and releases the state's lock.
//
// # Audit
//
// Audit compares DIR with the current Resource List: missing, extra and
// differing files, each hashed again; it trusts no state and writes
// nothing.
//
// # Caveats
//
// Files are not synced to the disk before their rename: a kill cannot
// leave a wrong byte, but a power loss on a file system that does not
// order data before renames could. A resource listed without a length or
// a digest cannot be verified: it is taken as served. A resource listed
// with neither a digest, nor a length and a lastmod, is fetched again by
// every baseline. Case-insensitive file systems are not handled: two
// resources whose names differ only in case share a file there.
package destination
