package snapshot

import (
	"encoding/hex"
	"io/fs"
	"time"
	"unique"

	"github.com/rsgen/rsgen/internal/sysfile"
	"github.com/rsgen/rsgen/rs"
)

// Record is what the snapshot knows of one published file. A build holds
// one per file of the source, so its size is the build's memory per
// resource: digests a default build does not publish and a fingerprint
// that repeats the SHA-256 digest are kept out of line (see Digests and
// Fingerprint).
type Record struct {
	Path    string // slash-separated, relative to the source root
	Size    int64
	ModTime int64 // nanoseconds since the Unix epoch
	Inode   uint64
	Seen    int64 // Unix seconds when this content was first seen
	Digests Digests
	// mediaType is the media type, without parameters (see Type): a
	// handle, so that each type's name is held once, not once per record.
	mediaType unique.Handle[string]
	// source describes the source file when its fingerprint is not the
	// SHA-256 digest (see Fingerprint and Stat); shared between copies,
	// never changed once set.
	source *sourceFile
	// fingerprintIsSHA256 says the fingerprint is Digests.SHA256. With
	// neither it nor source, the fingerprint is unknown (see Known).
	fingerprintIsSHA256 bool
	// Rewritten marks a file published with other bytes than its source's
	// (html_link): its Size and Digests describe the published bytes, and
	// a later build that no longer rewrites it must read it again.
	Rewritten bool
	// Patched marks a kept version that a JSON Patch from the version
	// before it was published for.
	Patched bool
	// Placed marks a record whose file a Tee already put in the output
	// while the scan read it. It is never saved.
	Placed bool
	// Change is what the scan found: Created or Updated when this build
	// publishes a new version of the file, 0 when it does not. It is
	// never saved.
	Change Change
	// Unchanged marks a record the scan found equal to the previous one,
	// stat and bytes (so the output's copy of the file can be trusted).
	// It is never saved.
	Unchanged bool
}

// Marks are what a scan found of a file that its record holds and no
// state saves: Placed, Unchanged and Change (see Record).
type Marks struct {
	Placed, Unchanged bool
	Change            Change
}

// Marks returns the marks the scan set on r.
func (r *Record) Marks() Marks {
	return Marks{Placed: r.Placed, Unchanged: r.Unchanged, Change: r.Change}
}

// Stat is what a scan trusts a file by without reading it: its size,
// modification time (nanoseconds since the epoch) and inode.
type Stat struct {
	Size, ModTime int64
	Inode         uint64
}

// StatOf returns the Stat of a file from its stat.
func StatOf(info fs.FileInfo) Stat {
	return Stat{info.Size(), info.ModTime().UnixNano(), sysfile.Inode(info)}
}

// Describes reports whether s, taken by the scan that started at
// scanStart (State.ScanStart), still describes the file whose stat is now
// cur: the same size, modification time and inode, and a modification
// time older than that scan by RaceWindow, so that the file cannot have
// been written since without its modification time moving. A scan trusts
// such a file without reading it, and dump packaging trusts the digests
// the scan took of it.
func (s Stat) Describes(cur Stat, scanStart int64) bool {
	return s == cur && s.ModTime < scanStart-int64(RaceWindow)
}

// Stat returns the stat r was recorded at: of a rewritten record, whose
// Size is the published bytes', the source's size (-1 when unknown, which
// no file matches).
func (r *Record) Stat() Stat {
	size := r.Size
	if r.Rewritten && r.source != nil {
		size = r.source.size
	}
	return Stat{size, r.ModTime, r.Inode}
}

// SetStat sets r's size, modification time and inode from a stat of its
// file.
func (r *Record) SetStat(info fs.FileInfo) {
	st := StatOf(info)
	r.Size, r.ModTime, r.Inode = st.Size, st.ModTime, st.Inode
}

// Type returns r's media type, without parameters; "" when unknown.
func (r *Record) Type() string {
	if r.mediaType == (unique.Handle[string]{}) {
		return ""
	}
	return r.mediaType.Value()
}

// SetType sets r's media type.
func (r *Record) SetType(t string) { r.mediaType = typeHandle(t) }

func typeHandle(t string) unique.Handle[string] {
	if t == "" {
		return unique.Handle[string]{}
	}
	return unique.Make(t)
}

// Fingerprint returns the SHA-256 of the source file's bytes, computed
// whether or not SHA-256 is published; zero when unknown (a recovered
// record, or one migrated from format 3 without a SHA-256 of its own
// bytes), which SameContent compares by its published digests. It is the
// SHA-256 digest unless the file is rewritten for publishing.
func (r *Record) Fingerprint() [32]byte {
	switch {
	case r.fingerprintIsSHA256:
		return r.Digests.SHA256
	case r.source != nil:
		return r.source.fingerprint
	}
	return [32]byte{}
}

// sourceFile is what a record knows of its source file beside what it
// publishes, when the two differ.
type sourceFile struct {
	fingerprint [32]byte
	// size is the source file's length, when the record's Size is that of
	// the bytes published in its place (Rewritten); -1 when unknown.
	size int64
}

// PublishedSHA256 returns the SHA-256 of the bytes published for r, when
// the record knows it: its fingerprint, unless html_link rewrote the file,
// whose published digests then hold it if SHA-256 is among them. A build
// checks its kept versions with it, and a deploy the files it sends.
func (r *Record) PublishedSHA256() ([32]byte, bool) {
	if fp := r.Fingerprint(); !r.Rewritten && fp != [32]byte{} {
		return fp, true
	}
	if r.Digests.has(rs.SHA256) {
		return r.Digests.SHA256, true
	}
	return [32]byte{}, false
}

// sourceSize returns the length of a rewritten record's source file, -1
// when unknown.
func (r *Record) sourceSize() int64 {
	if r.source == nil {
		return -1
	}
	return r.source.size
}

// setSourceSize records the length of r's source file beside its
// fingerprint, right after SetFingerprint gave r a sourceFile of its own.
// A record without one (its fingerprint unknown, or its SHA-256 digest,
// when the published bytes are the source's) has no other size to keep.
func (r *Record) setSourceSize(n int64) {
	if r.source != nil {
		r.source.size = n
	}
}

// SetFingerprint sets r's fingerprint, after its digests: stored as a
// mark when it equals the SHA-256 digest, as it does for every file
// published as it is.
func (r *Record) SetFingerprint(f [32]byte) {
	r.source, r.fingerprintIsSHA256 = nil, false
	switch {
	case f == [32]byte{}:
	case r.Digests.has(rs.SHA256) && f == r.Digests.SHA256:
		r.fingerprintIsSHA256 = true
	default:
		r.source = &sourceFile{fingerprint: f, size: -1}
	}
}

// SetPublished records that r's file, whose stat r holds, is published
// with other bytes than its source's: size and digests describe them. The
// fingerprint and the size of the source are kept (see Stat).
func (r *Record) SetPublished(size int64, d Digests) {
	f, sourceSize := r.Fingerprint(), r.Size
	r.Size, r.Digests, r.Rewritten = size, d, true
	r.SetFingerprint(f)
	r.setSourceSize(sourceSize)
}

// Lastmod returns the lastmod rsgen publishes for the record: when the
// content was first seen, or the file's modification time.
func (r *Record) Lastmod(fromMtime bool) time.Time {
	if fromMtime {
		return time.Unix(0, r.ModTime).UTC().Truncate(time.Second)
	}
	return time.Unix(r.Seen, 0).UTC()
}

var digestSizes = [rs.NumHashAlgorithms]int{16, 20, 32}

// Digests holds the published digests of one content. A SHA-256 alone,
// as a default build publishes, is held in place; MD5, SHA-1 and any other
// combination of digests, out of line.
type Digests struct {
	SHA256 [32]byte
	// more is nil when d holds a SHA-256 alone, or nothing when SHA256 is
	// zero; otherwise it says which digests d holds and holds MD5 and
	// SHA-1. Shared between copies and never changed once set (Set
	// replaces it).
	more *moreDigests
}

type moreDigests struct {
	MD5  [16]byte
	SHA1 [20]byte
	has  uint8
}

var noMore moreDigests

var zeroSHA256 [32]byte

// Has returns the algorithms d holds a digest of: bit a for algorithm a.
func (d *Digests) Has() uint8 {
	switch {
	case d.more != nil:
		return d.more.has
	case d.SHA256 != zeroSHA256:
		return 1 << rs.SHA256
	}
	return 0
}

// Sum returns the digest of algorithm a, or zeros when d has none.
func (d *Digests) Sum(a rs.HashAlgorithm) []byte {
	m := d.more
	if m == nil {
		m = &noMore
	}
	switch a {
	case rs.MD5:
		return m.MD5[:]
	case rs.SHA1:
		return m.SHA1[:]
	}
	return d.SHA256[:]
}

// Set gives d the digest sum of algorithm a.
func (d *Digests) Set(a rs.HashAlgorithm, sum []byte) {
	has := d.Has() | 1<<a
	if a == rs.SHA256 {
		copy(d.SHA256[:], sum)
	}
	if has == 1<<rs.SHA256 && d.SHA256 != zeroSHA256 {
		d.more = nil
		return
	}
	m := new(moreDigests)
	if d.more != nil {
		*m = *d.more
	}
	switch a {
	case rs.MD5:
		copy(m.MD5[:], sum)
	case rs.SHA1:
		copy(m.SHA1[:], sum)
	}
	m.has = has
	d.more = m
}

// setAll gives d the digests of the algorithms in has, each read by sum,
// as Set would one by one, but with one allocation at most: the decoder
// sets every digest of every record it reads, and three Sets made three.
func (d *Digests) setAll(has uint8, sum func(a rs.HashAlgorithm) []byte) {
	var m moreDigests
	for a := rs.HashAlgorithm(0); a < rs.NumHashAlgorithms; a++ {
		if has&(1<<a) == 0 {
			continue
		}
		switch a {
		case rs.MD5:
			copy(m.MD5[:], sum(a))
		case rs.SHA1:
			copy(m.SHA1[:], sum(a))
		default:
			copy(d.SHA256[:], sum(a))
		}
	}
	switch {
	case has == 0:
		d.more = nil
	case has == 1<<rs.SHA256 && d.SHA256 != zeroSHA256:
		d.more = nil
	default:
		m.has = has
		d.more = &m
	}
}

// Equal reports whether d and e hold the same digests.
func (d *Digests) Equal(e *Digests) bool {
	if d.Has() != e.Has() {
		return false
	}
	for a := rs.HashAlgorithm(0); a < rs.NumHashAlgorithms; a++ {
		if d.has(a) && string(d.Sum(a)) != string(e.Sum(a)) {
			return false
		}
	}
	return true
}

// has reports whether d holds the digest of algorithm a.
func (d *Digests) has(a rs.HashAlgorithm) bool { return d.Has()&(1<<a) != 0 }

// HasAll reports whether d holds a digest for each of algs.
func (d *Digests) HasAll(algs []rs.HashAlgorithm) bool {
	for _, a := range algs {
		if !d.has(a) {
			return false
		}
	}
	return true
}

// AppendHash appends the rs:md hash attribute value for algs: "alg:hex"
// pairs separated by spaces, lowercase hex.
func (d *Digests) AppendHash(b []byte, algs []rs.HashAlgorithm) []byte {
	for i, a := range algs {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, a.String()...)
		b = append(b, ':')
		b = hex.AppendEncode(b, d.Sum(a))
	}
	return b
}

// Hash returns the rs:md hash attribute value for algs.
func (d *Digests) Hash(algs []rs.HashAlgorithm) string {
	return string(d.AppendHash(nil, algs))
}
