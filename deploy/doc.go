// Package deploy publishes the last complete build of an output folder to
// a store that serves it: an S3 bucket (or any S3-compatible service), or
// the document root of a web server. It is what `rsgen deploy` runs.
//
// # Order
//
// A Destination reads a Source from the top, the Source Description, down,
// and may poll any document it knows at any time. A deploy must therefore
// never make a document readable before what it links to: it writes in
// the steps of layout.PublishStep (resources; mementos and patches;
// TimeMaps; dump packages, their manifests and closed documents; parts;
// lists and indexes; Capability Lists; the Source Description), the same
// order in which a build renames its files into place, and deletes only
// after the last step (but for a path that changed between file and
// folder: see What changed). Within a step, files are written in
// parallel: first those that are not documents, then the documents in
// waves, a document waiting for the files of its own step that it links
// to (the open Change Dump and the package its build added, say), as
// read from the document itself. A failure stops the deploy before the
// next step, so at every moment each readable document links only to
// objects that are there, with the bytes the document describes. What a
// Destination may see meanwhile is a resource newer than the list that
// describes it, for the time between the first step and the lists' step;
// never a missing one, but where a path changed between file and folder.
//
// # What changed
//
// The deploy never lists a store or reads its objects back to learn what
// changed. It keeps a manifest on the store (MetaDir/manifest) of every
// key it published there, with the SHA-256, length and headers of each,
// and diffs the output against it: a file is uploaded when its key is new
// or its bytes changed, re-headed in place (S3's copy onto itself) when
// only its headers changed, and left alone otherwise. The SHA-256 of an
// output file comes from a cache in the state folder keyed by the file's
// size, mtime and inode, as a build trusts an unchanged stat, so an
// unchanged output is not read again. A deploy with nothing to do makes
// one request: a GET of the manifest, conditional on the entity tag of the
// copy cached in the state folder, answered 304 with no body.
//
// A deploy publishes exactly the last build. Before it writes anything,
// it compares the output's files, whose SHA-256s it has, with what the
// build recorded in the state (built.go): the length and SHA-256 of every
// resource, kept version, kept document and package, and the paths of the
// other documents. A file edited, added or removed in the output by hand,
// or a source file rewritten in place since the build (a resource is a
// hard link to it), fails the deploy, naming the files.
//
// The state folder holds the deploy's local files (State/deploy): the hash
// cache (hashes), and per store a folder with the cached manifest, its
// entity tag, the lock that keeps one deploy per store from one state
// folder, and while a deploy runs its temporary files (see Memory), which
// the next deploy removes if it was killed. A deploy needs the output and
// the state of a complete build: none while a build's publishing record is
// in the state folder, and none if a build published anything while the
// deploy read the output.
//
// # Memory
//
// A deploy's memory does not grow with the number of output files: what
// it knows per file goes through files in its folder of the state folder,
// read and written in one order, the byte order of the output paths,
// which is the manifest's. The scan walks the output in that order (a
// folder's entries sorted by name, a folder's name followed by a slash, as
// in its files' paths) and streams the file list (path, stat, SHA-256),
// reading the previous one, the hash cache, in step: files whose stat
// changed are hashed one worker per core, a batch at a time, and written
// in order. The state's records of the build are in another order (a
// folder's files before its siblings, kept versions by resource): they
// are sorted into the file list's order 4 MiB at a time into unnamed
// files, merged as they are read, and compared with the file list as a
// merge join. The plan then reads the file list and the manifest in step,
// as a merge join: it counts, puts the writes of each step and the keys
// to delete in lists that move their full blocks into unnamed files
// (internal/chunked's Strings, as a build's lists), and streams the manifest after
// the deploy and the one with the keys it writes pending (their table of
// headers, which comes first in the file, is small and written last). A
// step streams its writes from its list, uploadJobs at a time, and
// the manifests are sent from and cached as files. What stays in memory
// is small: the writes of documents (a step's waves need all of its own;
// they are a handful to a few hundred), the open segment documents and
// the media types the state records for files whose names say nothing.
//
// Only keys the manifest names are ever deleted: objects rsgen did not put
// on the store are never touched. On a web root, only a regular file that
// holds the bytes the manifest records is: a file replaced since, or a
// folder, named by a manifest someone altered, is kept, with a warning.
// A key that left the output is deleted at the end of the deploy, or,
// with a grace period, by the first deploy after it, so that caches
// holding documents that still list it expire first. A key in the way of
// the output's files, where a path changed between file and folder (a
// file a where the output has a/b, or the reverse), is deleted before
// the first write instead, whatever the grace period: a web root cannot
// hold both, nor can S3-compatible services that keep objects as files
// (versitygw, MinIO). A Destination then finds the old resource gone
// while the lists still name it, until the lists' step: the one case in
// which a deploy shows it a missing resource. MaxDeletes fails a deploy
// that would delete more, before it writes anything.
//
// # Interruptions
//
// Before its first write a deploy records in the manifest every key it is
// about to write as pending, with the bytes and headers it will hold; it
// records the outcome once everything is written and deleted. A deploy
// that finds pending keys (the last one was killed, or lost the network)
// asks the store about each as its step comes to it (one HEAD: length,
// headers, and the SHA-256 in the object's metadata) and writes only what
// is not there yet. It asked about them all before its first step until
// 2026-11-27, holding each: 830 MB to resume a first deploy of a million
// files killed midway, 65 MB now. A key that
// an interrupted deploy may have written is never forgotten, so it is
// deleted if the output no longer has it. A deploy killed while it wrote
// to a web root leaves temporary files beside the files it was writing
// (servers configured by rsgen never serve them): the next deploy, under
// the lock, removes the files of that naming from the folders of the
// pending keys, and from MetaDir.
//
// Two deploys never interleave. On S3 the lock is an object created with
// If-None-Match: * and renewed with If-Match; one not renewed for two
// minutes, by the bucket's clock, or held by a deploy from the same host
// and state folder that is gone, is taken over. A web root is locked with
// flock. Immutable objects (packages, mementos, closed documents) are
// written with If-None-Match: * when new: a deploy never replaces one.
//
// # Headers
//
// Content-Type comes from rsgen's media-type table (layout.ContentType), or
// for a file whose name says nothing (a resource whose type was read from
// its bytes, and its mementos), from the type the last build recorded in
// the state, which its lists publish: a memento keeps it after its
// resource is deleted. Cache-Control is immutable for what rsgen never
// rewrites, short for the other documents and none for resources
// (OutputPolicy). The policy is a HeaderPolicy, a function of the output path, so another can
// replace it. A web root keeps no headers: its server's configuration,
// written by the build's hosting files, gives them.
//
// # Caveats
//
// Every upload to S3 is signed with the SHA-256 the deploy read, so S3
// refuses bytes that changed since; a web root's copy is checked the same
// way before it is renamed into place. A build that publishes while a
// deploy runs therefore fails the deploy, which the next one completes.
//
// The lock of a bucket is only as good as the service's conditional
// writes: a service that ignores If-None-Match and If-Match (older
// S3-compatible servers) lets two deploys interleave.
//
// The manifest, and during a deploy the lock (which names the deploying
// host, process and state folder), are objects below the prefix: a bucket
// or web server that serves the prefix publicly serves MetaDir too, unless
// it is denied there.
//
// The manifest is rewritten whole by every deploy that changes anything,
// twice: about 38 bytes per key compressed, 3.9 MB for 100,000 keys. At
// millions of keys that dominates small deploys; splitting it by folder is
// the next step.
package deploy
