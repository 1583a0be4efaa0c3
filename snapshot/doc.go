// Package snapshot owns rsgen's memory between builds: the fingerprints of
// the files it published, the change events not yet in a closed Change List,
// and the list of documents it wrote. It scans a source tree against the
// previous snapshot, merging the two into change events.
//
// # What "changed" means
//
// A file is trusted without being read when its size, modification time
// and inode equal those recorded, and its recorded modification time is
// safely older than the start of the scan that recorded it (RaceWindow):
// a file written in the same clock tick as it was hashed could change again
// without its mtime moving, the "racy git" problem. Every other file is read
// once; the bytes feed every published digest (md5, sha-1, sha-256) and
// the fingerprint, SHA-256, together: with the default digests, each byte
// is hashed once. A file whose fingerprint is unchanged
// produces no event even though it was re-read (a touch, or a fresh
// checkout that reset every mtime). The walk and the previous records are
// both in walk order, and Scan merges them as it goes: a path only in the
// tree is "created", only in the records "deleted", in both with different
// fingerprints "updated". A rename is a deletion and a creation.
//
// # The state file
//
// The snapshot is one binary file, written in one sequential pass: a magic
// line, a format version, the body, and a CRC-32C of everything before it.
// Files are stored last, sorted in walk order (see layout.ComparePaths)
// with their paths prefix-compressed. Load reads the whole file once to
// verify its checksum, decodes everything but the file records, and leaves
// those in the file: Scan reads them one by one as the walk reaches their
// paths, so a build never holds the previous records and the new ones
// whole at once. The kept versions (format 5) come before the files, with
// the length of their records, and are left in the file too, for the
// generator to merge with the scan (State.Versions). The file is
// replaced atomically (temporary file, fsync, rename), so a killed build
// leaves the previous snapshot in place. A build that changes nothing
// leaves it as it is, and records beside it only the time it ran (see
// SaveRun). A truncated or altered file fails
// its checksum and Load says so with ErrCorrupt; a file written by a newer
// rsgen fails with ErrNewerVersion.
//
// # In memory
//
// A scan of up to DefaultSpillAfter files holds its records in memory, in
// fixed chunks, so that growing never copies them; a Record keeps out of
// line what a default build does not use (see Record); and their paths are
// held end to end in blocks (pathArena). A larger scan, given a folder to
// spill into, writes its records into an unnamed file there as they
// settle, a chunk at a time, encoded as a state file's records: a build of
// a million files then holds a few chunks of them, not the million, and
// reads them back a chunk at a time (see Records), and saving the state
// copies the file. A state rebuilt from the published output gets its
// records through a RecordFile, which writes them into an unnamed file as
// they are rebuilt, from which Records reads them as it reads a saved
// state's.
//
// # Caveats
//
// The fingerprint is SHA-256 whatever digests are published, so that
// changing the configured digest algorithms re-reads files without emitting
// events. (Format 3 and earlier fingerprinted with BLAKE3 besides the
// published digests, which cost a second hash of every byte for nothing
// SHA-256 does not give; Load migrates those records, see
// migrateFingerprint.)
package snapshot
