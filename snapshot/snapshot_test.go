package snapshot

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
)

func sampleState() *State {
	rec := func(p string, size int64) Record {
		r := Record{Path: p, Size: size, ModTime: 1700000000123456789, Inode: 42, Seen: 1700000000}
		r.SetType("text/plain")
		r.Digests.Set(rs.SHA256, append(make([]byte, 31), 9))
		r.Digests.Set(rs.MD5, []byte{0, 7})
		r.SetFingerprint([32]byte{byte(size)})
		return r
	}
	return &State{
		LastBuild: 1767225600, ScanStart: 1767225600000000001,
		Files: RecordsOf(rec("a/b.txt", 1), rec("a/bc.txt", 2), rec("ü/x y#.txt", 3)),
		Journals: map[string][]Segment{"default": {
			{From: 100, Until: 200, Kept: []Kept{{Path: "resourcesync/default/changelists/changelist-19700101T000140Z.xml", Size: 700, SHA256: [32]byte{3}}}},
			{From: 200, Seq: 1, Events: []Event{
				{Change: Created, Time: 250, Record: ptr(rec("a/b.txt", 1))},
				{Change: Deleted, Time: 260, Record: ptr(rec("gone", 0))},
			}}}},
		Outputs:    []string{".well-known/resourcesync", "resourcesync/default/resourcelist.xml"},
		SetChanged: map[string]int64{"default": 250, "other": 100},
		Packages: []Package{
			{Set: "default", Path: "resourcesync/default/resourcedump/a.zip", At: 100, Length: 1234, SHA256: [32]byte{1, 2}},
			{Set: "default", Change: true, Path: "resourcesync/default/changedump/b.zip", From: 100, Until: 250, Length: 99},
		},
	}
}

// roundTrip encodes st and decodes it again, whole.
func roundTrip(t *testing.T, st *State) *State {
	t.Helper()
	var buf bytes.Buffer
	if err := Encode(&buf, st); err != nil {
		t.Fatal(err)
	}
	got, err := decodeAll(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestStateRoundTrip(t *testing.T) {
	st := sampleState()
	got := roundTrip(t, st)
	if !equalStates(got, st) {
		t.Errorf("decoded %+v\nwant %+v", got, st)
	}
}

func ptr[T any](v T) *T { return &v }

func equalStates(a, b *State) bool {
	return reflect.DeepEqual(normalized(a), normalized(b))
}

// normalized returns st with its file records in memory, and empty slices
// and maps as nil, which Decode and a literal may spell differently.
func normalized(st *State) State {
	n := *st
	if n.stored != nil {
		n.stored, n.Files = nil, Records{}
		for r, err := range st.Records() {
			if err != nil {
				panic(err)
			}
			n.Files.Append(r)
		}
	}
	var vs []Record
	for v, err := range st.Versions() {
		if err != nil {
			panic(err)
		}
		vs = append(vs, v)
	}
	n.versions, n.storedVersions = RecordsOf(vs...), nil
	n.Outputs, n.Packages, n.Shared = nilIfEmpty(n.Outputs), nilIfEmpty(n.Packages), nilIfEmpty(n.Shared)
	n.OutputStats, n.loadedFrom = nilIfEmpty(n.OutputStats), fileID{}
	n.Archived = nil
	for _, a := range st.Archived {
		a.Packages, a.Docs = nilIfEmpty(a.Packages), nilIfEmpty(a.Docs)
		n.Archived = append(n.Archived, a)
	}
	if len(n.SetChanged) == 0 {
		n.SetChanged = nil
	}
	n.Journals = nil
	for name, segs := range st.Journals {
		if n.Journals == nil {
			n.Journals = map[string][]Segment{}
		}
		n.Journals[name] = normalSegments(segs)
	}
	n.Shared = normalSegments(n.Shared)
	return n
}

func normalSegments(segs []Segment) []Segment {
	var out []Segment
	for _, seg := range segs {
		seg.Events, seg.Kept = nilIfEmpty(seg.Events), nilIfEmpty(seg.Kept)
		out = append(out, seg)
	}
	return out
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestDecodeDetectsCorruption(t *testing.T) {
	var buf bytes.Buffer
	if err := Encode(&buf, sampleState()); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	for i := range good {
		bad := slices.Clone(good)
		bad[i] ^= 0x20
		if _, err := decodeAll(bytes.NewReader(bad)); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flipping byte %d: %v, want ErrCorrupt", i, err)
		}
	}
	for n := 0; n < len(good); n++ {
		if _, err := decodeAll(bytes.NewReader(good[:n])); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d bytes: %v, want ErrCorrupt", n, err)
		}
	}
}

func TestDecodeRefusesNewerVersion(t *testing.T) {
	var buf bytes.Buffer
	if err := Encode(&buf, &State{}); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	b[len(magic)] = Version + 1
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], crcTable))
	if _, err := decodeAll(bytes.NewReader(b)); !errors.Is(err, ErrNewerVersion) {
		t.Errorf("got %v, want ErrNewerVersion", err)
	}
}

func TestSaveLoad(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	st, err := Load(dir)
	if err != nil || st.Files.Len() != 0 {
		t.Fatalf("Load of a missing state = %+v, %v", st, err)
	}
	if err := Save(dir, sampleState()); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !equalStates(got, sampleState()) {
		t.Error("Load(Save(st)) != st")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("state folder holds %d files, want only the state", len(entries))
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Load of garbage = %v, want ErrCorrupt", err)
	}
}

// TestLoadReadsRecordsAcrossTheDecoderWindow: a state whose records are
// many times the decoder's window, with records that straddle its edges
// and one longer than the window itself, loads equal to what was saved.
func TestLoadReadsRecordsAcrossTheDecoderWindow(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	st := sampleState()
	var recs []Record
	for i := range 5000 {
		r := Record{Path: fmt.Sprintf("folder %03d/%s %05d.txt", i/100, strings.Repeat("é", i%50), i), Size: int64(i), ModTime: int64(i) << 33, Inode: uint64(i) * 7919, Seen: 1700000000}
		if i == 2500 {
			r.Path = "folder 025/" + strings.Repeat("x", decoderWindow+100)
		}
		r.SetType("text/plain")
		r.Digests.Set(rs.SHA256, append(make([]byte, 31), byte(i)))
		r.SetFingerprint([32]byte{byte(i), 1})
		recs = append(recs, r)
	}
	slices.SortFunc(recs, func(a, b Record) int { return layout.ComparePaths(a.Path, b.Path) })
	st.Files = RecordsOf(recs...)
	if err := Save(dir, st); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	if !equalStates(got, st) {
		t.Error("Load(Save(st)) != st")
	}
}

// TestScanMergesWithPrevious scans a tree against previous records, held
// in memory and left in a loaded state file: a path only in the tree is
// created, only in the records deleted, in both with other content
// updated, and the first-seen time of unchanged content carries over.
func TestScanMergesWithPrevious(t *testing.T) {
	dir := t.TempDir()
	content := func(p string) []byte { return []byte("content of " + p) }
	for _, p := range []string{"a", "b", "b2", "d/x", "e"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), content(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := func(p string, same bool) Record {
		rec := Record{Path: p, Size: int64(len(content(p))), Seen: 10}
		rec.SetType("application/octet-stream")
		sum := sha256.Sum256(content(p))
		if !same {
			sum[0]++
		}
		rec.Digests.Set(rs.SHA256, sum[:])
		rec.SetFingerprint(rec.Digests.SHA256)
		return rec
	}
	mem := &State{Files: RecordsOf(r("a", true), r("b", false), r("c", true), r("d/x", true))}
	stateDir := t.TempDir()
	if err := Save(stateDir, mem); err != nil {
		t.Fatal(err)
	}
	stored, err := Load(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Files.Len() != 0 || stored.NumFiles() != 4 {
		t.Fatalf("Load held %d records in memory, counts %d", stored.Files.Len(), stored.NumFiles())
	}
	for name, prev := range map[string]*State{"in memory": mem, "stored": stored} {
		files, events, _, err := scanRecords(context.Background(), prev, ScanOptions{FS: os.DirFS(dir), Algorithms: []rs.HashAlgorithm{rs.SHA256}, Now: 99})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ev := range events {
			if ev.Time != 99 {
				t.Errorf("%s: event time %d", name, ev.Time)
			}
			got = append(got, ev.Change.String()+" "+ev.Record.Path)
		}
		want := []string{"updated b", "created b2", "deleted c", "created e"}
		if !slices.Equal(got, want) {
			t.Errorf("%s: events %q, want %q", name, got, want)
		}
		seen := []int64{10, 99, 99, 10, 99}
		for i := range files {
			if files[i].Seen != seen[i] {
				t.Errorf("%s: %s: Seen = %d, want %d", name, files[i].Path, files[i].Seen, seen[i])
			}
		}
	}
}

// TestStoredRecordsOutliveAReplacedStateFile: the records Load leaves in
// the state file are those of the file it verified, even after a build
// replaced it (status reads the state without the lock).
func TestStoredRecordsOutliveAReplacedStateFile(t *testing.T) {
	stateDir := t.TempDir()
	if err := Save(stateDir, sampleState()); err != nil {
		t.Fatal(err)
	}
	st, err := Load(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := Save(stateDir, &State{Files: RecordsOf(Record{Path: "other"})}); err != nil {
		t.Fatal(err)
	}
	_, events, _, err := Scan(context.Background(), st, ScanOptions{FS: os.DirFS(t.TempDir()), Algorithms: []rs.HashAlgorithm{rs.SHA256}})
	if err != nil {
		t.Fatal(err)
	}
	var gone []string
	for _, ev := range events {
		gone = append(gone, ev.Change.String()+" "+ev.Record.Path)
	}
	if want := []string{"deleted a/b.txt", "deleted a/bc.txt", "deleted ü/x y#.txt"}; !slices.Equal(gone, want) {
		t.Errorf("events against an empty tree: %q, want %q", gone, want)
	}
}

func scanDir(t *testing.T, dir string, prev *State, verify bool) ([]Record, ScanStats) {
	t.Helper()
	recs, _, stats, err := scanRecords(context.Background(), prev, ScanOptions{
		FS: os.DirFS(dir), Algorithms: []rs.HashAlgorithm{rs.SHA256, rs.MD5}, Verify: verify,
		Exclude: func(p string, isDir bool) bool { return p == "skip" },
	})
	if err != nil {
		t.Fatal(err)
	}
	return recs, stats
}

func TestScanTrustsOnlyUnchangedOldFiles(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for _, name := range []string{"a.txt", "b.html", "skip/x", "c/d.bin"} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("content of "+name), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	recs, stats := scanDir(t, dir, &State{}, false)
	if stats.Hashed != 3 || len(recs) != 3 {
		t.Fatalf("first scan read %d files, found %d; want 3 and 3", stats.Hashed, len(recs))
	}
	if recs[1].Type() != "text/html" || recs[0].Type() != "text/plain" {
		t.Errorf("types %q %q", recs[0].Type(), recs[1].Type())
	}
	if !recs[0].Digests.HasAll([]rs.HashAlgorithm{rs.MD5, rs.SHA256}) || recs[0].Digests.Has()&(1<<rs.SHA1) != 0 {
		t.Errorf("digests %b", recs[0].Digests.Has())
	}
	prev := &State{Files: RecordsOf(recs...), ScanStart: time.Now().UnixNano()}

	_, stats = scanDir(t, dir, prev, false)
	if stats.Hashed != 0 {
		t.Errorf("unchanged tree: read %d files, want 0", stats.Hashed)
	}
	_, stats = scanDir(t, dir, prev, true)
	if stats.Hashed != 3 {
		t.Errorf("--verify: read %d files, want 3", stats.Hashed)
	}

	// Same size, new mtime: re-read, same fingerprint.
	newer := old.Add(time.Minute)
	os.Chtimes(filepath.Join(dir, "a.txt"), newer, newer)
	recs2, stats := scanDir(t, dir, prev, false)
	if stats.Hashed != 1 || recs2[0].Fingerprint() != recs[0].Fingerprint() {
		t.Errorf("touched file: read %d, fingerprint changed %v", stats.Hashed, recs2[0].Fingerprint() != recs[0].Fingerprint())
	}

	// A record written within the race window of its scan is not trusted.
	racy := &State{Files: RecordsOf(recs...), ScanStart: old.UnixNano() + int64(time.Second)}
	if _, stats = scanDir(t, dir, racy, false); stats.Hashed != 3 {
		t.Errorf("racy records: read %d files, want 3", stats.Hashed)
	}
}

func TestScanSkipsSpecialFilesWithAWarning(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "real"), []byte("x"), 0o644)
	if err := os.Symlink("real", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := mkfifo(filepath.Join(dir, "fifo")); err != nil {
		t.Fatal(err)
	}
	var notes []Note
	recs, _, stats, err := scanRecords(context.Background(), &State{}, ScanOptions{
		FS: os.DirFS(dir), Algorithms: []rs.HashAlgorithm{rs.SHA256},
		Notify: func(n Note) {
			if n.Kind == NoteSkipped {
				notes = append(notes, n)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Path != "real" || stats.Skipped != 2 || len(notes) != 2 {
		t.Errorf("records %v, skipped %d, notes %v", recs, stats.Skipped, notes)
	}
}

func TestScanNamesAnUnreadableFolder(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: permissions do not deny reads")
	}
	dir := t.TempDir()
	locked := filepath.Join(dir, "locked")
	os.Mkdir(locked, 0o000)
	defer os.Chmod(locked, 0o755)
	_, _, _, err := Scan(context.Background(), &State{}, ScanOptions{FS: os.DirFS(dir), Algorithms: []rs.HashAlgorithm{rs.SHA256}})
	var pe *PathError
	if !errors.As(err, &pe) || pe.Path != "locked" {
		t.Errorf("got %v, want a PathError naming locked", err)
	}
}

func TestScanIsCancellable(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), []byte("x"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, _, err := Scan(ctx, &State{}, ScanOptions{FS: os.DirFS(dir), Algorithms: []rs.HashAlgorithm{rs.SHA256}}); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestDigestsHashFormat(t *testing.T) {
	var d Digests
	d.Set(rs.SHA1, nil)
	d.Set(rs.SHA256, nil)
	d.Set(rs.MD5, []byte{0xAB})
	got := d.Hash([]rs.HashAlgorithm{rs.MD5, rs.SHA256})
	want := "md5:ab000000000000000000000000000000 sha-256:" + string(bytes.Repeat([]byte("0"), 64))
	if got != want {
		t.Errorf("Hash = %q, want %q", got, want)
	}
}

func TestDirFSOpensNamesThatAreNotUTF8(t *testing.T) {
	dir := t.TempDir()
	name := "latin1-\xe9.txt"
	if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, _, _, err := scanRecords(context.Background(), &State{}, ScanOptions{FS: openTree(t, dir), Algorithms: []rs.HashAlgorithm{rs.SHA256}})
	if err != nil || len(recs) != 1 || recs[0].Path != name {
		t.Fatalf("scan = %v, %v", recs, err)
	}
	for _, bad := range []string{"../x", "/etc/passwd", "a/../../x", "", "a//b"} {
		if _, err := openTree(t, dir).Open(bad); err == nil {
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
}

// TestScanToleratesAFolderRemovedDuringTheScan: a folder removed between
// the listing of its parent and its own listing is left out, as a file
// removed before its read is. The Exclude hook removes it at that moment.
func TestScanToleratesAFolderRemovedDuringTheScan(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a.txt", "gone/b.txt", "gone/sub/c.txt", "z.txt"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(p), 0o644)
	}
	exclude := func(p string, isDir bool) bool {
		if p == "gone" {
			if err := os.RemoveAll(filepath.Join(dir, "gone")); err != nil {
				t.Fatal(err)
			}
		}
		return false
	}
	files, _, _, err := scanRecords(context.Background(), &State{}, ScanOptions{FS: openTree(t, dir), Algorithms: []rs.HashAlgorithm{rs.SHA256}, Exclude: exclude})
	if err != nil {
		t.Fatalf("a folder removed during the scan failed it: %v", err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Path)
	}
	if !slices.Equal(got, []string{"a.txt", "z.txt"}) {
		t.Errorf("scanned %v, want a.txt and z.txt", got)
	}
}

// TestFingerprintIsSHA256 scans with SHA-256 published and without: the
// fingerprint is the SHA-256 of the bytes either way (so each byte is
// hashed once with the default digests), and an unknown fingerprint, of
// a record migrated from format 3 or recovered, is never trusted by stat.
func TestFingerprintIsSHA256(t *testing.T) {
	dir := t.TempDir()
	content := []byte("some content")
	old := time.Now().Add(-time.Hour)
	p := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(p, content, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, old, old)
	want := sha256.Sum256(content)
	for _, algs := range [][]rs.HashAlgorithm{{rs.SHA256}, {rs.MD5}} {
		recs, _, _, err := scanRecords(context.Background(), &State{}, ScanOptions{FS: os.DirFS(dir), Algorithms: algs})
		if err != nil {
			t.Fatal(err)
		}
		if recs[0].Fingerprint() != want || !recs[0].Known() {
			t.Errorf("%v: fingerprint %x, want the SHA-256 %x", algs, recs[0].Fingerprint(), want)
		}
		if got := recs[0].Digests.Hash(algs); strings.Contains(got, "sha") != (algs[0] == rs.SHA256) {
			t.Errorf("%v: published hash %q", algs, got)
		}
		prev := &State{Files: RecordsOf(recs...), ScanStart: time.Now().UnixNano()}
		prev.Files.List.At(0).SetFingerprint([32]byte{})
		again, _, stats, err := scanRecords(context.Background(), prev, ScanOptions{FS: os.DirFS(dir), Algorithms: algs})
		if err != nil {
			t.Fatal(err)
		}
		if stats.Hashed != 1 || !SameContent(prev.Files.List.At(0), &again[0]) {
			t.Errorf("%v: a record without a fingerprint: read %d files, same content %v", algs, stats.Hashed, SameContent(prev.Files.List.At(0), &again[0]))
		}
	}
}

// TestRebuildStatsAheadOfTheWalkAndNotesTheWalkOnce: on a rebuild the
// folder readers stat the files as they list their folders; the records
// stay in walk order, trusted ones marked unchanged, and every file is
// noted as found before the one note that the walk has found them all.
func TestRebuildStatsAheadOfTheWalkAndNotesTheWalkOnce(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	const n = 327
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("d%d/f%03d", i%3, i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	first, _ := scanDir(t, dir, &State{}, false)
	prev := &State{Files: RecordsOf(first...), ScanStart: time.Now().UnixNano()}
	touched := map[string]bool{}
	for i := 0; i < n; i += 50 {
		touched[first[i].Path] = true
		newer := old.Add(time.Minute)
		os.Chtimes(filepath.Join(dir, first[i].Path), newer, newer)
	}

	var mu sync.Mutex
	var found, walked, foundAfterWalked int
	recs, _, stats, err := scanRecords(context.Background(), prev, ScanOptions{
		FS: os.DirFS(dir), Algorithms: []rs.HashAlgorithm{rs.SHA256, rs.MD5}, Workers: 2,
		Notify: func(note Note) {
			mu.Lock()
			defer mu.Unlock()
			switch note.Kind {
			case NoteFound:
				found++
				if walked > 0 {
					foundAfterWalked++
				}
			case NoteWalked:
				walked++
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if found != n || walked != 1 || foundAfterWalked != 0 {
		t.Errorf("notes: %d found (want %d), %d walked (want 1), %d found after walked", found, n, walked, foundAfterWalked)
	}
	if stats.Hashed != len(touched) {
		t.Errorf("read %d files, want the %d touched", stats.Hashed, len(touched))
	}
	if len(recs) != n {
		t.Fatalf("%d records, want %d", len(recs), n)
	}
	for i := range recs {
		if recs[i].Path != first[i].Path || recs[i].Fingerprint() != first[i].Fingerprint() {
			t.Fatalf("record %d: %s, want %s with the same fingerprint", i, recs[i].Path, first[i].Path)
		}
		if recs[i].Unchanged == touched[recs[i].Path] {
			t.Errorf("%s: Unchanged = %v", recs[i].Path, recs[i].Unchanged)
		}
	}
}

// TestRebuildToleratesAFileRemovedBeforeItsStat: a file the previous
// build published, removed after its folder was listed but before its
// stat, is a deletion, not a failure. The folder's listing removes it at
// that moment.
func TestRebuildToleratesAFileRemovedBeforeItsStat(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for _, name := range []string{"a", "b", "c"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	first, _ := scanDir(t, dir, &State{}, false)
	prev := &State{Files: RecordsOf(first...), ScanStart: time.Now().UnixNano()}
	listed := afterListing{FS: os.DirFS(dir), then: func() { os.Remove(filepath.Join(dir, "b")) }}
	files, events, _, err := scanRecords(context.Background(), prev, ScanOptions{FS: listed, Algorithms: []rs.HashAlgorithm{rs.SHA256, rs.MD5}})
	if err != nil {
		t.Fatalf("scan failed: %v", err)
	}
	var paths, changes []string
	for i := range files {
		paths = append(paths, files[i].Path)
	}
	for _, ev := range events {
		changes = append(changes, ev.Change.String()+" "+ev.Record.Path)
	}
	if !slices.Equal(paths, []string{"a", "c"}) || !slices.Equal(changes, []string{"deleted b"}) {
		t.Errorf("files %q, events %q; want [a c] and [deleted b]", paths, changes)
	}
}

// afterListing is an fs.FS that calls then after it lists a folder, before
// anything stats the folder's entries.
type afterListing struct {
	fs.FS
	then func()
}

func (a afterListing) ReadDir(name string) ([]fs.DirEntry, error) {
	entries, err := fs.ReadDir(a.FS, name)
	a.then()
	return entries, err
}

// TestRecordSize guards the memory a build holds per resource: a build
// keeps one Record per source file, and every byte added here is a
// megabyte per million files (176 bytes before the fingerprint and the
// legacy digests moved out of line, 128 before the media type became a
// handle, 120 before which digests a record holds went out of line).
func TestRecordSize(t *testing.T) {
	if got := unsafe.Sizeof(Record{}); got > 112 {
		t.Errorf("Record is %d bytes, want at most 112", got)
	}
}

// scanRecords is Scan with the records in a slice, for comparisons.
func scanRecords(ctx context.Context, prev *State, opts ScanOptions) ([]Record, []Event, ScanStats, error) {
	files, events, stats, err := Scan(ctx, prev, opts)
	var recs []Record
	for r, rerr := range files.All() {
		if rerr != nil {
			return nil, nil, stats, rerr
		}
		recs = append(recs, *r)
	}
	return recs, events, stats, err
}

// throughRecordFile returns a finished RecordFile in dir ("": in memory)
// holding recs.
func throughRecordFile(t *testing.T, dir string, recs *Records) *RecordFile {
	t.Helper()
	rf, err := NewRecordFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	for r, err := range recs.All() {
		if err != nil {
			t.Fatal(err)
		}
		rf.Append(r)
	}
	if err := rf.Finish(); err != nil {
		t.Fatal(err)
	}
	return rf
}

// TestRecordFileKeepsEveryRecord: a state whose records went through a
// RecordFile yields the records appended, every field format 4 writes (a
// rewritten record, fingerprints in and out of line, several digests),
// holds none in memory, and leaves no file in its folder; it saves as the
// state in memory does.
func TestRecordFileKeepsEveryRecord(t *testing.T) {
	dir := t.TempDir()
	st, want := fullState(true), fullState(true)
	st.UseFiles(throughRecordFile(t, dir, &st.Files))
	defer st.Close()
	if st.Files.Len() != 0 || st.NumFiles() != want.NumFiles() {
		t.Errorf("the state holds %d records in memory and counts %d, want 0 and %d", st.Files.Len(), st.NumFiles(), want.NumFiles())
	}
	if !equalStates(st, want) {
		t.Errorf("from the record file %+v\nwant %+v", normalized(st), normalized(want))
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("the record file left %v in its folder", left)
	}
	var spilled, kept bytes.Buffer
	if err := Encode(&spilled, st); err != nil {
		t.Fatal(err)
	}
	if err := Encode(&kept, want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(spilled.Bytes(), kept.Bytes()) {
		t.Error("the state encodes to other bytes than the state in memory")
	}

	// Without a folder, the records stay in memory.
	inMemory := fullState(true)
	rf := throughRecordFile(t, "", &inMemory.Files)
	inMemory.Files = Records{}
	inMemory.UseFiles(rf)
	if inMemory.Files.Len() != want.NumFiles() || !equalStates(inMemory, want) {
		t.Errorf("from the record file in memory %+v\nwant %+v", normalized(inMemory), normalized(want))
	}
}

// TestRewrittenRecordKeepsItsSourceStat: a record published with other
// bytes than its source's (html_link) keeps the source's size for the
// scan's stat check, through a state file and back, while its Size is the
// published bytes'.
func TestRewrittenRecordKeepsItsSourceStat(t *testing.T) {
	st := sampleState()
	r := st.Files.List.At(1)
	r.Size = 100
	var d Digests
	d.Set(rs.SHA256, append(make([]byte, 31), 5))
	r.SetPublished(150, d)
	if r.Size != 150 || r.Stat().Size != 100 || !r.Rewritten {
		t.Fatalf("published: Size %d, Stat().Size %d, Rewritten %v; want 150, 100, true", r.Size, r.Stat().Size, r.Rewritten)
	}
	got := roundTrip(t, st)
	if g := got.Files.List.At(1); g.Size != 150 || g.Stat().Size != 100 || g.Fingerprint() != r.Fingerprint() {
		t.Errorf("decoded: Size %d, Stat().Size %d; want 150, 100", g.Size, g.Stat().Size)
	}
}

// denyFS refuses to open the paths in deny, files or folders, for lack of
// permission, as a file of mode 000 refuses anyone but root.
type denyFS struct {
	fs.FS
	deny map[string]bool
}

func (d denyFS) Open(name string) (fs.File, error) {
	if d.deny[name] {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return d.FS.Open(name)
}

// TestSkipUnreadableKeepsThePublishedVersion: with SkipUnreadable, a file
// or a folder published before that cannot be read now (for a moment,
// most often) keeps its previous records, unchanged, with a note of its
// own; only a file never published is left out (#33: it was published as
// deleted, and as created again once readable).
func TestSkipUnreadableKeepsThePublishedVersion(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{"a", "private/x", "private/y", "secret", "z"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(filepath.Join(dir, p), old, old)
	}
	first, _ := scanDir(t, dir, &State{}, false)
	prev := &State{Files: RecordsOf(first...), ScanStart: time.Now().UnixNano()}
	// secret changes, so that the scan must read it; fresh is new
	os.WriteFile(filepath.Join(dir, "secret"), []byte("secret, second version"), 0o644)
	os.WriteFile(filepath.Join(dir, "fresh"), []byte("fresh"), 0o644)
	var notes []string
	var mu sync.Mutex
	files, events, stats, err := scanRecords(context.Background(), prev, ScanOptions{
		FS:         denyFS{os.DirFS(dir), map[string]bool{"private": true, "secret": true, "fresh": true}},
		Algorithms: []rs.HashAlgorithm{rs.SHA256, rs.MD5}, SkipUnreadable: true, Now: 99,
		Notify: func(n Note) {
			if n.Kind == NoteSkipped {
				mu.Lock()
				notes = append(notes, n.Code+" "+n.Path)
				mu.Unlock()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 0 {
		t.Errorf("events %v, want none", events)
	}
	if !slices.EqualFunc(files, first, func(a, b Record) bool { return a.Path == b.Path && a.Fingerprint() == b.Fingerprint() && a.Change == 0 }) {
		t.Errorf("records %v, want the previous ones, unchanged", files)
	}
	slices.Sort(notes)
	if want := []string{"unreadable fresh", "unreadable-kept private", "unreadable-kept secret"}; !slices.Equal(notes, want) {
		t.Errorf("notes %q, want %q", notes, want)
	}
	if stats.Skipped != 1 {
		t.Errorf("%d skipped, want 1: the files kept are not left out", stats.Skipped)
	}
}
