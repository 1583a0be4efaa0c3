package snapshot

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"unique"

	"github.com/rsgen/rsgen/internal/sysfile"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
)

// State is everything rsgen remembers between builds.
type State struct {
	// LastBuild is the time of the last complete build, in Unix seconds;
	// 0 before the first.
	LastBuild int64
	// ScanStart is the wall-clock time, in nanoseconds, at which the last
	// build's scan started; records modified after it are not trusted.
	ScanStart int64
	// BaseURL is the base URL of the documents the last build published
	// ("" in a state written before format 3).
	BaseURL string
	// ResourceBaseURL is the base URL of the resources the last build
	// published ("" in a state written before format 5), which the
	// TimeMaps name.
	ResourceBaseURL string
	// HTMLLink identifies the tags that html_link inserted into the HTML
	// pages the last build published ("" for none, and in a state written
	// before format 5): while it stays the same, a rewritten page whose
	// source did not change is not read again.
	HTMLLink string
	// OutputDigest identifies everything but the source and the clock
	// that shaped the bytes the last build published: its configuration
	// and the output format of the rsgen that wrote them ("" in a state
	// written before format 6). A build that finds it unchanged, and
	// nothing else changed, publishes the same bytes (the generator's
	// fast path).
	OutputDigest string
	// Files are the published files in walk order, in a state made in
	// memory; Load leaves them in the file (see Records).
	Files Records
	// stored finds the records of the files that Load left in the file.
	stored *storedRecords
	// Journals holds, per set name, the set's Change List segments, oldest
	// first. Only the last may be open (Until == 0), and only it keeps its
	// events: a closed segment's documents are written once and kept as
	// files, with their checksums in Kept.
	Journals map[string][]Segment
	// Shared holds the segments of a state written before format 3, when
	// all sets shared them; the generator, which knows the sets, turns
	// them into Journals. It is never written.
	Shared []Segment
	// Outputs are the output paths of the documents the last build wrote,
	// so that the next build can remove those it no longer writes.
	Outputs []string
	// OutputStats are the stats of the Outputs, in their order, taken
	// once the last build put them in place, or nil (a state written
	// before format 6): an output whose stat is unchanged is as that
	// build left it.
	OutputStats []Stat
	// SetChanged holds, per set name, the time of the last build that
	// changed the set: the "at" of its Resource List.
	SetChanged map[string]int64
	// Packages are the dump packages published, in the order written.
	Packages []Package
	// Archived are the Resource Lists and Resource Dumps kept in the
	// archives, oldest first.
	Archived []Archived
	// versions are the kept versions of the resources of sets with
	// keep_versions (see Versions), in memory or, in storedVersions, in a
	// file.
	versions       Records
	storedVersions *storedRecords
	// loadedFrom identifies the state file Load read it from: a run
	// record vouches for that file alone (see SaveRun).
	loadedFrom fileID
}

// fileID identifies a state file by its size and checksum.
type fileID struct {
	size int64
	crc  uint32
}

// Kept is a file the state folder keeps because no later build could make
// it again (a closed Change List, an archived Resource List, ...), by its
// output path, with the length and SHA-256 of its bytes, so that a damaged
// copy is never published. A zero rs.SHA256 is unknown: a file kept by a
// state written before format 3.
type Kept struct {
	Path   string
	Size   int64
	SHA256 [32]byte
}

// Archived records a Resource List or Resource Dump kept under a
// timestamped name in its set's archive.
type Archived struct {
	Set       string
	Dump      bool  // a Resource Dump; otherwise a Resource List
	At        int64 // the archived document's at
	Completed int64 // the build that archived it
	// Packages are the packages an archived Resource Dump lists: they stay
	// published while it is archived. (A state written before format 3
	// knows only their paths.)
	Packages []Package
	// Docs are the archived document and its parts, when it is split.
	Docs []Kept
}

// Package records one published dump package, so that later builds can
// list it, or keep it, without reading it.
type Package struct {
	Set    string
	Change bool   // a Change Dump package; otherwise a Resource Dump package
	Path   string // output path of the ZIP
	At     int64  // Resource Dump: when the package was written
	From   int64  // Change Dump: the previous build
	Until  int64  // Change Dump: the build that wrote it
	Length int64
	SHA256 [32]byte
}

// Segment is the span of time covered by one Change List of a set (and its
// Change Dump).
type Segment struct {
	From   int64 // Unix seconds
	Until  int64 // Unix seconds; 0 while open
	Seq    int   // distinguishes segments that open in the same second
	Events []Event
	// Kept are the segment's closed documents, once it is closed.
	Kept []Kept
}

// Open returns the open segment of a journal, or nil.
func Open(journal []Segment) *Segment {
	if n := len(journal); n > 0 && journal[n-1].Until == 0 {
		return &journal[n-1]
	}
	return nil
}

const (
	magic = "rsgen-state\n"
	// Version is the state format this rsgen writes; it reads every
	// earlier one. Format 2 added Archived and Versions at the end.
	// Format 3 gives each set a journal of its own, records the base URL,
	// a flags byte per record, the checksums of the files kept in the
	// state folder and the whole records of archived packages. Format 4
	// fingerprints are SHA-256 (they were BLAKE3), not stored again when
	// they equal the record's SHA-256 digest; a record's flags byte comes
	// first, and the file records come last (see Records). Format 5 keeps
	// the versions with the length of their records, for Load to leave
	// them in the file (see Versions), and marks the versions a patch was
	// published for, the size of a rewritten file's source, the base URL
	// of the resources and what html_link inserted. Format 6 adds the
	// output digest and the stats of the outputs: a state of an earlier
	// format has neither, and its first build takes no fast path.
	Version = 6
)

// Errors Load returns, wrapped with the file's path.
var (
	// ErrCorrupt: the file is truncated or altered (bad magic or checksum,
	// or a body that does not decode).
	ErrCorrupt = errors.New("state file is corrupt")
	// ErrNewerVersion: the file was written by a newer rsgen.
	ErrNewerVersion = errors.New("state file was written by a newer rsgen")
)

// Load reads the state in dir. A missing file gives an empty State and no
// error. The whole file is read once to verify its checksum before
// anything in it is believed; the file records of a format 4 state are
// then left in it, for Records to read as they are needed, and the file
// stays open until the State is closed.
func Load(dir string) (*State, error) {
	path := filepath.Join(dir, FileName)
	// Shared: the next state replaces the file while this one reads it.
	f, err := sysfile.OpenShared(path)
	if errors.Is(err, os.ErrNotExist) {
		return &State{SetChanged: map[string]int64{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot: read state %s: %w", path, err)
	}
	st, err := load(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("snapshot: read state %s: %w", path, err)
	}
	if st.stored == nil {
		f.Close()
	}
	if err := st.applyRun(dir); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

func load(f *os.File) (*State, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return decodeState(f, info.Size(), &storedRecords{file: f, end: info.Size() - 4})
}

// Save writes st into dir atomically: a temporary file, fsync, rename, and
// fsync of the folder; and removes the run record of the state it
// replaced (see SaveRun).
func Save(dir string, st *State) error {
	if err := writeAtomic(dir, FileName, func(w io.Writer) error { return Encode(w, st) }); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, RunFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// writeAtomic writes the file name in the state folder dir through write:
// a temporary file, fsync, rename, and fsync of the folder.
func writeAtomic(dir, name string, write func(io.Writer) error) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	path := filepath.Join(dir, name)
	// Named as every temporary file of rsgen, which the next build removes
	// when this one is killed before the rename.
	tmp, err := os.CreateTemp(dir, layout.TempPrefix+name+"-*")
	if err != nil {
		return fmt.Errorf("snapshot: write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	err = write(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = sysfile.Rename(tmp.Name(), path)
	}
	if err == nil {
		err = sysfile.SyncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("snapshot: write %s: %w", path, err)
	}
	return nil
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// encoder writes the state body (Encode sums what it writes).
type encoder struct {
	w       *bufio.Writer
	scratch [binary.MaxVarintLen64]byte
	prev    string // the previous path, for prefix compression
}

// Encode writes st in the state format, the newest version.
func Encode(w io.Writer, st *State) error {
	sum := crc32.New(crcTable)
	e := &encoder{w: bufio.NewWriterSize(io.MultiWriter(w, sum), 256<<10)}
	e.w.WriteString(magic)
	e.uvarint(Version)
	e.varint(st.LastBuild)
	e.varint(st.ScanStart)
	e.str(st.BaseURL)
	e.str(st.ResourceBaseURL)
	e.str(st.HTMLLink)
	e.str(st.OutputDigest)
	names := slices.Sorted(maps.Keys(st.Journals))
	e.uvarint(uint64(len(names)))
	for _, n := range names {
		e.str(n)
		e.segments(st.Journals[n])
	}
	e.uvarint(uint64(len(st.Outputs)))
	for _, o := range st.Outputs {
		e.str(o)
	}
	e.outputStats(st)
	names = slices.Sorted(maps.Keys(st.SetChanged))
	e.uvarint(uint64(len(names)))
	for _, n := range names {
		e.str(n)
		e.varint(st.SetChanged[n])
	}
	e.packages(st.Packages)
	e.uvarint(uint64(len(st.Archived)))
	for _, a := range st.Archived {
		e.str(a.Set)
		e.bool(a.Dump)
		e.varint(a.At)
		e.varint(a.Completed)
		e.packages(a.Packages)
		e.kept(a.Docs)
	}
	if err := e.versionsSection(st); err != nil {
		return err
	}
	// The files come last, so that Load can leave them in the file and
	// the scan read them as it goes (see Records).
	if err := e.files(st); err != nil {
		return err
	}
	if err := e.w.Flush(); err != nil {
		return err
	}
	var tail [4]byte
	binary.LittleEndian.PutUint32(tail[:], sum.Sum32())
	_, err := w.Write(tail[:])
	return err
}

// files writes the records of st's files, however st holds them: those a
// scan spilled are copied as they are, already encoded.
func (e *encoder) files(st *State) error {
	e.uvarint(uint64(st.NumFiles()))
	e.prev = ""
	if st.stored == nil && st.Files.disk != nil {
		return st.Files.disk.copyTo(e.w)
	}
	for r, err := range st.Records() {
		if err != nil {
			return err
		}
		e.record(&r)
	}
	return nil
}

// outputStats writes the stats of the outputs, when there is one per
// output, else none.
func (e *encoder) outputStats(st *State) {
	if len(st.OutputStats) != len(st.Outputs) {
		e.uvarint(0)
		return
	}
	e.uvarint(uint64(len(st.OutputStats)))
	for _, s := range st.OutputStats {
		e.varint(s.Size)
		e.varint(s.ModTime)
		e.uvarint(s.Inode)
	}
}

func (e *encoder) segments(segs []Segment) {
	e.uvarint(uint64(len(segs)))
	for _, seg := range segs {
		e.varint(seg.From)
		e.varint(seg.Until)
		e.uvarint(uint64(seg.Seq))
		e.uvarint(uint64(len(seg.Events)))
		e.prev = ""
		for i := range seg.Events {
			e.w.WriteByte(byte(seg.Events[i].Change))
			e.varint(seg.Events[i].Time)
			e.record(seg.Events[i].Record)
		}
		e.kept(seg.Kept)
	}
}

func (e *encoder) packages(ps []Package) {
	e.uvarint(uint64(len(ps)))
	for _, p := range ps {
		e.str(p.Set)
		e.bool(p.Change)
		e.str(p.Path)
		e.varint(p.At)
		e.varint(p.From)
		e.varint(p.Until)
		e.varint(p.Length)
		e.w.Write(p.SHA256[:])
	}
}

func (e *encoder) kept(ks []Kept) {
	e.uvarint(uint64(len(ks)))
	for _, k := range ks {
		e.str(k.Path)
		e.varint(k.Size)
		e.w.Write(k.SHA256[:])
	}
}

func (e *encoder) uvarint(v uint64) {
	e.w.Write(binary.AppendUvarint(e.scratch[:0], v))
}

func (e *encoder) varint(v int64) {
	e.w.Write(binary.AppendVarint(e.scratch[:0], v))
}

func (e *encoder) bool(v bool) {
	if v {
		e.w.WriteByte(1)
	} else {
		e.w.WriteByte(0)
	}
}

func (e *encoder) str(s string) {
	e.uvarint(uint64(len(s)))
	e.w.WriteString(s)
}

// bytes writes b through the writer's free buffer: b may point into a
// record, and writing it directly would move every record the encoder
// writes to the heap (bufio may hand b on to its io.Writer), a copy of
// 112 bytes per file per build.
func (e *encoder) bytes(b []byte) {
	if e.w.Available() < len(b) {
		e.w.Flush() // an error stays in the writer and is returned by the last Flush
	}
	e.w.Write(append(e.w.AvailableBuffer(), b...))
}

func (e *encoder) record(r *Record) {
	shared := 0
	for shared < len(r.Path) && shared < len(e.prev) && r.Path[shared] == e.prev[shared] {
		shared++
	}
	e.uvarint(uint64(shared))
	e.str(r.Path[shared:])
	e.prev = r.Path
	flags := r.flags()
	e.w.WriteByte(flags)
	e.varint(r.Size)
	e.varint(r.ModTime)
	e.uvarint(r.Inode)
	if flags&flagFingerprintIsSHA256 == 0 {
		f := r.Fingerprint()
		e.bytes(f[:])
		if r.Rewritten {
			e.varint(r.sourceSize())
		}
	}
	has := r.Digests.Has()
	e.w.WriteByte(has)
	for a := rs.HashAlgorithm(0); a < rs.NumHashAlgorithms; a++ {
		if has&(1<<a) != 0 {
			e.bytes(r.Digests.Sum(a))
		}
	}
	e.str(r.Type())
	e.varint(r.Seen)
}

// The bits of a record's flags byte (format 3 wrote it last; format 4
// first, with flagFingerprintIsSHA256).
const (
	flagRewritten = 1 << iota
	// The fingerprint equals the SHA-256 digest, so it is not stored
	// twice: the file's bytes are its published bytes.
	flagFingerprintIsSHA256
	// A kept version has a patch published from the version before it
	// (format 5).
	flagPatched
)

func (r *Record) flags() byte {
	var f byte
	if r.Rewritten {
		f |= flagRewritten
	}
	if r.fingerprintIsSHA256 {
		f |= flagFingerprintIsSHA256
	}
	if r.Patched {
		f |= flagPatched
	}
	return f
}

// decoder reads a state body, whose checksum its caller has verified, from
// r, or records a spill holds, from mem (see newMemDecoder). It decodes
// from mem alone, which, for a reader, holds the next bytes of the body in
// a window refilled from r as they are needed (fill): a state's million
// records were a call per byte through bufio.
type decoder struct {
	version uint64
	r       io.Reader // nil when mem holds the whole body
	mem     []byte    // the bytes in hand, not yet decoded
	window  []byte    // with r, the buffer mem lies in
	size    int64     // the bytes of the body
	left    int64     // the bytes of the body not yet decoded, mem's included
	err     error
	ioErr   error // a read that failed for another reason than the end of the file
	prev    string
	paths   pathArena                        // holds the paths of the records decoded
	types   map[string]unique.Handle[string] // the media types read so far
	// lastType is the media type of the last record, zero for none.
	lastType unique.Handle[string]
}

// decoderWindow is the size of a reading decoder's window.
const decoderWindow = 64 << 10

func newDecoder(r io.Reader, size int64) *decoder {
	return &decoder{r: r, size: size, left: size, types: map[string]unique.Handle[string]{}}
}

// newMemDecoder returns a decoder of the bytes b, which it reads in
// place: a spill's chunk is decoded with no copy.
func newMemDecoder(b []byte) *decoder {
	return &decoder{mem: b, size: int64(len(b)), left: int64(len(b)), types: map[string]unique.Handle[string]{}}
}

// fill makes sure that mem holds the next n bytes of the body, which the
// caller checked are left, reading from r what is not in hand yet (and as
// much more as the window holds); false when they could not be read.
func (d *decoder) fill(n int) bool {
	if len(d.mem) >= n {
		return true
	}
	if d.r == nil {
		d.fail("unexpected end")
		return false
	}
	w := d.window[:cap(d.window)]
	if len(w) < n {
		w = make([]byte, max(n, decoderWindow))
	}
	k := copy(w, d.mem)
	room := min(int64(len(w)-k), d.left-int64(k))
	got, err := io.ReadAtLeast(d.r, w[k:k+int(room)], n-k)
	d.window, d.mem = w, w[:k+got]
	if err != nil {
		d.readFailed(err)
		return false
	}
	return true
}

// take returns the next n bytes of mem, which fill put there, and passes
// over them.
func (d *decoder) take(n int) []byte {
	b := d.mem[:n:n]
	d.mem, d.left = d.mem[n:], d.left-int64(n)
	return b
}

// decodeState reads the state file in r, of size bytes, once to verify
// its checksum, and then decodes it (see body for stored).
func decodeState(r io.ReaderAt, size int64, stored *storedRecords) (*State, error) {
	crc, err := verify(r, size)
	if err != nil {
		return nil, err
	}
	bodySize := size - int64(len(magic)) - 4
	d := newDecoder(io.NewSectionReader(r, int64(len(magic)), bodySize), bodySize)
	st, err := d.body(stored)
	if err != nil {
		return nil, err
	}
	st.loadedFrom = fileID{size: size, crc: crc}
	return st, nil
}

// verify checks that the state file in r, of size bytes, has the magic
// line and the checksum of its content, reading it once, and returns the
// checksum.
func verify(r io.ReaderAt, size int64) (uint32, error) {
	head := make([]byte, len(magic))
	if size < int64(len(magic))+4 {
		return 0, fmt.Errorf("%w: not an rsgen state file", ErrCorrupt)
	}
	if _, err := r.ReadAt(head, 0); err != nil {
		return 0, err
	}
	if string(head) != magic {
		return 0, fmt.Errorf("%w: not an rsgen state file", ErrCorrupt)
	}
	sum := crc32.New(crcTable)
	if _, err := io.Copy(sum, io.NewSectionReader(r, 0, size-4)); err != nil {
		return 0, err
	}
	var tail [4]byte
	if _, err := r.ReadAt(tail[:], size-4); err != nil {
		return 0, err
	}
	// The checksum comes first: a damaged version byte is corruption, not
	// a newer rsgen.
	if sum.Sum32() != binary.LittleEndian.Uint32(tail[:]) {
		return 0, fmt.Errorf("%w: checksum mismatch (truncated or altered)", ErrCorrupt)
	}
	return sum.Sum32(), nil
}

// body decodes the body of a verified state file. With stored set, the
// file records of a format 4 state are left in the file for Records to
// read, and stored is filled in to find them; otherwise they are decoded
// into Files.
func (d *decoder) body(stored *storedRecords) (*State, error) {
	version := d.uvarint()
	if d.err == nil && version > Version {
		return nil, fmt.Errorf("%w (format %d; this rsgen reads format %d)", ErrNewerVersion, version, Version)
	}
	st := d.state(version, stored)
	if version >= 4 {
		if n := d.count(); stored != nil && d.err == nil {
			stored.count, stored.version, stored.size = n, version, d.left
			st.stored = stored
			d.left = 0
		} else {
			st.Files = d.fileRecords(n)
		}
	}
	if d.err == nil && d.left != 0 {
		d.err = errors.New("trailing bytes")
	}
	if err := d.error(); err != nil {
		return nil, err
	}
	return st, nil
}

func (d *decoder) state(version uint64, stored *storedRecords) *State {
	d.version = version
	st := &State{LastBuild: d.varint(), ScanStart: d.varint(), SetChanged: map[string]int64{}}
	if version >= 3 {
		st.BaseURL = d.str()
	}
	if version >= 5 {
		st.ResourceBaseURL, st.HTMLLink = d.str(), d.str()
	}
	if version >= 6 {
		st.OutputDigest = d.str()
	}
	if version < 4 {
		st.Files = d.fileRecords(d.count())
	}
	if version >= 3 {
		st.Journals = map[string][]Segment{}
		for n := d.count(); n > 0; n-- {
			name := d.str()
			st.Journals[name] = d.segments()
		}
	} else {
		st.Shared = d.segments()
	}
	st.Outputs = make([]string, d.count())
	for i := range st.Outputs {
		st.Outputs[i] = d.str()
	}
	if version >= 6 {
		d.outputStats(st)
	}
	for n := d.count(); n > 0; n-- {
		name := d.str()
		st.SetChanged[name] = d.varint()
	}
	st.Packages = d.packages()
	if version >= 2 {
		st.Archived = make([]Archived, d.count())
		for i := range st.Archived {
			d.archived(&st.Archived[i])
		}
	}
	switch {
	case version >= 5:
		d.versionsSection(st, stored)
	case version >= 2:
		st.SetVersions(d.records(d.count())) // an older rsgen may not have sorted them
	}
	return st
}

// records decodes n records.
func (d *decoder) records(n int) []Record {
	rs := make([]Record, n)
	d.prev = ""
	for i := range rs {
		d.record(&rs[i])
	}
	return rs
}

func (d *decoder) fileRecords(n int) Records {
	var rs Records
	d.prev = ""
	for range n {
		var r Record
		d.record(&r)
		rs.Append(r)
	}
	return rs
}

// outputStats reads the stats of the outputs: one per output, or none.
func (d *decoder) outputStats(st *State) {
	n := d.count()
	if n == 0 {
		return
	}
	if n != len(st.Outputs) {
		d.fail("%d output stats for %d outputs", n, len(st.Outputs))
		return
	}
	st.OutputStats = make([]Stat, n)
	for i := range st.OutputStats {
		st.OutputStats[i] = Stat{Size: d.varint(), ModTime: d.varint(), Inode: d.uvarint()}
	}
}

func (d *decoder) segments() []Segment {
	segs := make([]Segment, d.count())
	for i := range segs {
		seg := &segs[i]
		seg.From, seg.Until, seg.Seq = d.varint(), d.varint(), int(d.uvarint())
		seg.Events = make([]Event, d.count())
		d.prev = ""
		for j := range seg.Events {
			ev := &seg.Events[j]
			ev.Change = Change(d.byte())
			if ev.Change < Created || ev.Change > Deleted {
				d.fail("bad change kind %d", ev.Change)
			}
			ev.Time = d.varint()
			ev.Record = new(Record)
			d.record(ev.Record)
		}
		if d.version >= 3 {
			seg.Kept = d.kept()
		}
	}
	return segs
}

func (d *decoder) packages() []Package {
	ps := make([]Package, d.count())
	for i := range ps {
		p := &ps[i]
		p.Set = d.str()
		p.Change = d.byte() == 1
		p.Path = d.str()
		p.At, p.From, p.Until, p.Length = d.varint(), d.varint(), d.varint(), d.varint()
		copy(p.SHA256[:], d.bytes(32))
	}
	return ps
}

func (d *decoder) kept() []Kept {
	ks := make([]Kept, d.count())
	for i := range ks {
		ks[i].Path = d.str()
		ks[i].Size = d.varint()
		copy(ks[i].SHA256[:], d.bytes(32))
	}
	return ks
}

// archived reads one archived document: format 3 has whole package records
// and the documents' checksums, format 2 the packages' paths alone.
func (d *decoder) archived(a *Archived) {
	a.Set = d.str()
	a.Dump = d.byte() == 1
	a.At, a.Completed = d.varint(), d.varint()
	if d.version >= 3 {
		a.Packages = d.packages()
		a.Docs = d.kept()
		return
	}
	a.Packages = make([]Package, d.count())
	for j := range a.Packages {
		a.Packages[j] = Package{Set: a.Set, Path: d.str()}
	}
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
}

// readFailed records a read that failed. An error other than the end of
// the file is the disk's, not the file's: its checksum was verified, and
// calling it corrupt would make the build set the file aside and rebuild
// the state from the output over an error that may not happen again.
func (d *decoder) readFailed(err error) {
	if d.ioErr == nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		d.ioErr = err
	}
	d.fail("read: %v", err)
}

// error returns the decoder's failure: the read error, or the corruption
// found.
func (d *decoder) error() error {
	switch {
	case d.ioErr != nil:
		return d.ioErr
	case d.err != nil:
		return fmt.Errorf("%w: %v", ErrCorrupt, d.err)
	}
	return nil
}

// count reads a length, refusing one longer than the bytes left could hold,
// so that a corrupt length cannot make a decoder allocate without bound.
func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(d.left) {
		d.fail("count %d exceeds the %d bytes left", n, d.left)
		return 0
	}
	return int(n)
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil || !d.fill(int(min(binary.MaxVarintLen64, d.left))) {
		return 0
	}
	v, n := binary.Uvarint(d.mem)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.take(n)
	return v
}

// varint reads a zig-zag encoded varint, as binary.AppendVarint writes it.
func (d *decoder) varint() int64 {
	u := d.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

// bytes reads the next n bytes, in a buffer that the next call may
// overwrite.
func (d *decoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if int64(n) > d.left {
		d.fail("unexpected end")
		return nil
	}
	if !d.fill(n) {
		return nil
	}
	return d.take(n)
}

// skip passes over the next n bytes, which the caller checked are left.
func (d *decoder) skip(n int64) {
	if d.err != nil {
		return
	}
	if n <= int64(len(d.mem)) {
		d.take(int(n))
		return
	}
	rest := n - int64(len(d.mem))
	d.take(len(d.mem))
	if _, err := io.CopyN(io.Discard, d.r, rest); err != nil {
		d.readFailed(err)
		return
	}
	d.left -= rest
}

func (d *decoder) byte() byte {
	if b := d.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *decoder) str() string { return string(d.bytes(d.count())) }

func (d *decoder) record(r *Record) {
	shared := int(d.uvarint())
	suffix := d.bytes(d.count())
	if shared > len(d.prev) {
		d.fail("bad path prefix")
		return
	}
	r.Path = d.paths.join(d.prev[:shared], suffix)
	d.prev = r.Path
	var flags byte
	switch {
	case d.version >= 5:
		flags = d.recordFlags(flagRewritten | flagFingerprintIsSHA256 | flagPatched)
	case d.version == 4:
		flags = d.recordFlags(flagRewritten | flagFingerprintIsSHA256)
	}
	r.Size = d.varint()
	r.ModTime = d.varint()
	r.Inode = d.uvarint()
	var fingerprint [32]byte
	sourceSize := int64(-1)
	if flags&flagFingerprintIsSHA256 == 0 {
		copy(fingerprint[:], d.bytes(32))
		if d.version >= 5 && flags&flagRewritten != 0 {
			sourceSize = d.varint()
		}
	}
	r.Digests.setAll(d.byte(), func(a rs.HashAlgorithm) []byte { return d.bytes(digestSizes[a]) })
	r.mediaType = d.mediaType(d.bytes(d.count()))
	r.Seen = d.varint()
	if d.version == 3 {
		flags = d.recordFlags(flagRewritten)
	}
	r.Rewritten = flags&flagRewritten != 0
	r.Patched = flags&flagPatched != 0
	switch {
	case flags&flagFingerprintIsSHA256 != 0:
		if !r.Digests.has(rs.SHA256) {
			d.fail("record %s: fingerprint is its SHA-256, which it does not have", r.Path)
		}
		r.fingerprintIsSHA256 = true
	case d.version < 4:
		migrateFingerprint(r)
	default:
		r.SetFingerprint(fingerprint)
		r.setSourceSize(sourceSize)
	}
}

// mediaType returns the handle of the media type name, looked up once
// per name: the last one is kept, for the runs of files of one type.
func (d *decoder) mediaType(name []byte) unique.Handle[string] {
	if d.lastType != (unique.Handle[string]{}) && string(name) == d.lastType.Value() {
		return d.lastType
	}
	h, ok := d.types[string(name)]
	if !ok {
		h = typeHandle(string(name))
		d.types[string(name)] = h
	}
	d.lastType = h
	return h
}

// recordFlags reads a record's flags byte, of which only known may be set.
func (d *decoder) recordFlags(known byte) byte {
	flags := d.byte()
	if flags&^known != 0 {
		d.fail("unknown record flags %#x", flags)
	}
	return flags
}

// migrateFingerprint turns the BLAKE3 fingerprint of a record written
// before format 4 into the SHA-256 fingerprint of format 4: the record's
// SHA-256 digest when it has one of its own bytes. Otherwise (a record of
// a build that published no SHA-256, or one rewritten for publishing) the
// fingerprint is dropped: the next scan reads the file again and compares
// it by its published digests, as it does a recovered record, so that the
// upgrade reports no change that did not happen.
func migrateFingerprint(r *Record) {
	if r.Digests.has(rs.SHA256) && !r.Rewritten {
		r.SetFingerprint(r.Digests.SHA256)
		return
	}
	r.SetFingerprint([32]byte{})
}
