// Package zippkg writes the ZIP packages of Resource Dumps and Change Dumps
// (ResourceSync 1.1, spec §11 and §13): streaming, verified, reproducible
// to the byte, and split into stable ranges.
//
// # The package model
//
// A package is a ZIP whose first entry is manifest.xml, at the top level,
// so that a client reading the stream sees the manifest before any data.
// A Manifest holds the root of that document (Resource Dump: at, optional
// completed; Change Dump: from, optional until; and the up link) and one
// Entry per <url>. Every Entry with a bitstream names its place in the
// package with Path ("/resources/a.html"); the ZIP entry name is Path
// without its leading slash. Change Dump deletions have no path and no
// bitstream. The ZIP entries follow the manifest's order, and the manifest
// bytes come from WriteManifest, which also writes the copy a dump
// document links to with rel="contents": the two are equal by
// construction.
//
// Because the manifest, with each bitstream's length and hash, precedes
// the data, the caller knows them before packaging: they come from the
// scan. Writer turns that order into a check. Add reads a bitstream once,
// through the compressor and through the digests the manifest publishes
// (md5, sha-1, sha-256), and fails with a *ChangedError (ErrChanged),
// naming the path, when the length or a digest differs: the file changed
// between the scan and packaging. Write checks only the length of a
// bitstream its opener wraps in Vouched, one the caller can show is the
// file whose digests it took (see Vouched): hashing each byte again made
// stored packaging cost half as much again as reading and hashing (the
// read floor); vouched, it runs at the floor's speed (BenchmarkPackage,
// BenchmarkReadFloor). A Writer holds one entry's buffers and
// the manifest's entry list (at most 50,000), never a bitstream, so memory
// does not grow with file or package size. Write, which opens the
// bitstreams itself, reads, verifies and compresses the small ones (up to
// 256 KiB) ahead of the writer on a worker per core, a few at a time, so
// that a package uses every core; it holds those few in memory.
//
// Packaging reads each bitstream again after the scan hashed it. A spool
// that kept the scan's bytes was tried and measured: on a copy of Go's
// source (11,478 files, 156 MB), a cold build takes 0.29 s without a
// Resource Dump, 0.67 s with stored packages and 1.6 s with deflated
// ones, while reading every file again costs 0.15 s (from the page cache).
// Writing the package and compressing cost the rest, and a spool writes
// every byte once more; so bitstreams are read from their source. Measured
// again on 2026-11-26, on a slower day of the same machine: 0.45-0.55 s
// without a dump, 1.4-1.6 s stored and 2.0-2.2 s deflated by klauspost's
// flate (2.6-3.1 s by compress/flate), one package each; the stored
// package's 131 MB, written and synced, cost 0.3-0.4 s by themselves
// (dd with conv=fsync).
//
// A typical Resource Dump build:
//
//	ranges, err := zippkg.Plan(items, zippkg.Limits{}) // items sorted by path
//	for _, r := range ranges {
//		entries := entriesOf(items[r.Start:r.End])
//		// if entries equal those of a package of the last build, keep that
//		// package, and its at, untouched, and continue
//		m := &zippkg.Manifest{Kind: zippkg.ResourceDump, Up: capList, At: buildStart,
//			Entries: entries}
//		w, err := zippkg.NewWriter(tmpFile, m, opts)
//		// for each entry: w.Add(e.Path, file)
//		err = w.Close() // then fsync and rename tmpFile; WriteManifest the contents copy
//	}
//
// A Change Dump package is the same with Kind ChangeDump, From and Until,
// entries in forward chronological order with Change and Datetime, and
// paths from one Paths per package, which gives the second bitstream of
// /changes/res7.html the path /changes/res7-v2.html.
//
// A package's at is the start of the build that wrote it: a package kept
// from an earlier build keeps its at, so that its bytes, like its
// bitstreams, stay as they were.
//
// # Determinism
//
// Equal Manifests, bitstreams and Options give equal bytes. The package
// never reads the clock: manifest.xml is timed at the manifest's at (or
// until, or from), every bitstream at its Lastmod, or else the manifest's
// time, in UTC, clamped to what a ZIP can carry (1980 to 2106). Each entry
// has an explicit method, Unix mode 0644, version 2.0 (4.5 with Zip64), the
// UTF-8 flag exactly when its name is not ASCII, and one extra field, the
// extended timestamp with the modification time only. Entries are written
// with CreateRaw from headers built here, never from FileInfoHeader or
// AddFS, so nothing of the local file system leaks in.
//
// Zip64 is archive/zip's: an entry of 4 GiB or more gets 64-bit sizes in
// its data descriptor and a Zip64 extra field in the central directory, as
// does an entry that starts past 4 GiB, and a package with such entries
// gets the Zip64 end records.
//
// # Compression
//
// Options.Method picks Store or Deflate per media type; DefaultMethod
// stores already-compressed types (images, audio, video, PDF, archives,
// ZIP-based documents, WOFF) and deflates the rest at DefaultLevel
// (flate.BestSpeed) with klauspost/compress's flate (see Deflater for why
// not compress/flate). Every entry, stored or deflated, carries its CRC-32
// and sizes in a data descriptor after its data, because a streamed entry
// only knows them then.
//
// # Stable partitioning
//
// Plan splits a sorted list of bitstreams into packages of contiguous
// ranges, under a size limit (DefaultMaxBytes, 1 GiB, estimated as an
// upper bound of the ZIP size) and 50,000 bitstreams; a bitstream bigger
// than the limit gets a package of its own. The aim is that a change to
// one file rewrites only the package holding it, which rules out packing
// greedily from the first path: there, one size change moves every later
// boundary.
//
// Instead the boundaries are content-defined by path name. Each path gets
// a level, the number of leading zero bits of its SHA-256, so that level k
// or more has probability 2^-k. The whole list is a package if it fits;
// otherwise it is cut before each path of the highest level inside it, and
// each piece is treated the same way, except that adjacent pieces that fit
// together are merged into one package. The ranges form a tree fixed by
// the names alone; sizes only decide at which depth a range becomes a
// package. So a file whose size changes stays in the same package, and
// the partition changes only when the change takes an enclosing range
// across the limit; a new or removed path only splits or joins the ranges
// it bounds. In the tests, 200 random one-file insertions or deletions
// rewrite 1.0 package each, where greedy packing rewrites 9; the price is
// fill: packages average about 60% of the limit.
//
// # Caveats
//
// Every entry has a data descriptor (bit 3). Readers that use the central
// directory (Info-ZIP unzip, archive/zip, Python, 7-Zip, libarchive) read
// every package; a reader that only streams must handle data descriptors,
// and java.util.zip.ZipInputStream cannot read stored entries that have
// one.
//
// Package bytes depend on the deflate encoder, klauspost/compress's flate
// (see Deflater): a version of it that changes its output changes every
// deflated package. A generator that names packages by their contents
// puts Deflater in the name: a new encoder gives new packages, and an old
// name never gets other bytes.
//
// Paths are kept distinct exactly, not by case, so two paths differing
// only in case, or a file path that is also a directory prefix of another
// (possible in a Change Dump after a deletion), cannot both be extracted
// to a case-insensitive or ordinary file system; clients reading through
// the manifest are not affected.
//
// Plan's size estimate assumes <loc> values not much longer than their
// paths. With very long URIs a package can exceed the limit slightly, and
// with about 1 KB of XML per entry a manifest of 50,000 entries reaches
// the 50 MB document limit, which NewWriter reports as rs.ErrDocumentFull;
// lower Limits.MaxEntries then.
package zippkg
