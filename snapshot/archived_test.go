package snapshot

import (
	"bytes"
	"errors"
	"flag"
	"iter"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/state-format5 with the current encoder")

// fullState is sampleState with archives, versions, a rewritten record,
// a fingerprint that is the record's SHA-256 digest and a base URL: every
// field format 4 writes; with patched, a patched version, the size of a
// rewritten file's source and the base URL of the resources, which format
// 5 adds.
func fullState(patched bool) *State {
	st := sampleState()
	st.BaseURL = "https://data.example.org/"
	if patched {
		st.ResourceBaseURL = "https://files.example.org/"
		st.Files.List.At(1).setSourceSize(1900) // its source's, before html_link
		st.HTMLLink = "sha256:0123"
	}
	st.Files.List.At(0).SetFingerprint(st.Files.List.At(0).Digests.SHA256)
	st.Files.List.At(1).Rewritten = true
	st.Archived = []Archived{
		{Set: "default", At: 100, Completed: 150},
		{Set: "default", Dump: true, At: 100, Completed: 150,
			Packages: []Package{{Set: "default", Path: "resourcesync/default/resourcedump/a.zip", At: 100, Length: 1234, SHA256: [32]byte{1, 2}}},
			Docs:     []Kept{{Path: "resourcesync/default/resourcedumps/resourcedump-19700101T000140Z.xml", Size: 900, SHA256: [32]byte{7}}}},
	}
	vs := []Record{*st.Files.List.At(0), *st.Files.List.At(0), *st.Files.List.At(2)}
	vs[1].Seen++
	vs[1].Patched = patched
	st.SetVersions(vs)
	return st
}

// format6State is fullState(true) with what format 6 adds: the output
// digest and the stats of the outputs.
func format6State() *State {
	st := fullState(true)
	st.OutputDigest = "sha256:4567"
	st.OutputStats = make([]Stat, len(st.Outputs))
	for i := range st.OutputStats {
		st.OutputStats[i] = Stat{Size: int64(100 * i), ModTime: 1_700_000_000_123_456_789 + int64(i), Inode: uint64(4242 + i)}
	}
	return st
}

// TestFormat6Fixture: the state of format6State encodes to the bytes of
// testdata/state-format6 (run with -update after a deliberate change of
// the format, which also needs a new Version) and decodes back equal, with
// its versions in memory or left in the file.
func TestFormat6Fixture(t *testing.T) {
	var buf bytes.Buffer
	if err := Encode(&buf, format6State()); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("testdata/state-format6", buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/state-format6")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Error("format 6 encodes to other bytes than testdata/state-format6: a changed format needs a new Version and a migration")
	}
	// A fingerprint equal to the SHA-256 digest is not stored again.
	other := format6State()
	f := other.Files.List.At(0).Fingerprint()
	f[0]++
	other.Files.List.At(0).SetFingerprint(f)
	var otherBuf bytes.Buffer
	if err := Encode(&otherBuf, other); err != nil {
		t.Fatal(err)
	}
	if otherBuf.Len() != buf.Len()+32 {
		t.Errorf("%d bytes with the fingerprint its SHA-256, %d without: want 32 less", buf.Len(), otherBuf.Len())
	}
	got, err := decodeAll(bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	if !equalStates(got, format6State()) {
		t.Errorf("decoded %+v\nwant %+v", got, format6State())
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), want, 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer loaded.Close()
	if loaded.storedVersions == nil || loaded.versions.Len() != 0 {
		t.Error("Load decoded the versions into memory; want them left in the file")
	}
	if !equalStates(loaded, format6State()) {
		t.Errorf("loaded %+v\nwant %+v", loaded, format6State())
	}
	// Written again, the versions left in the file are copied as they are.
	var again bytes.Buffer
	if err := Encode(&again, loaded); err != nil || !bytes.Equal(again.Bytes(), want) {
		t.Errorf("the loaded state encodes to other bytes (%v)", err)
	}
	// Moved to another state, they stay readable once the first is closed.
	moved := &State{}
	if err := moved.TakeVersions(loaded); err != nil {
		t.Fatal(err)
	}
	loaded.Close()
	defer moved.Close()
	if n := count(moved.Versions()); n != 3 || loaded.NumVersions() != 0 {
		t.Errorf("moved %d versions, %d left; want 3, 0", n, loaded.NumVersions())
	}
}

// TestFormat5Decodes: a state of format 5 (testdata/state-format5, written
// by that encoder) decodes to what it held, without an output digest or
// the stats of its outputs, which the generator's fast path needs (so the
// first build after an upgrade takes the full path, and saves format 6).
func TestFormat5Decodes(t *testing.T) {
	data, err := os.ReadFile("testdata/state-format5")
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeAll(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if want := fullState(true); !equalStates(got, want) {
		t.Errorf("decoded %+v\nwant %+v", got, want)
	}
}

// count counts the records of seq, failing on an error.
func count(seq iter.Seq2[Record, error]) int {
	n := 0
	for _, err := range seq {
		if err != nil {
			panic(err)
		}
		n++
	}
	return n
}

// TestVersionsFromARecordFile: the versions a build appends to a
// RecordFile become the state's, and are saved and loaded back.
func TestVersionsFromARecordFile(t *testing.T) {
	dir := t.TempDir()
	f, err := NewRecordFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := fullState(true)
	for v := range want.Versions() {
		f.Append(&v)
	}
	if err := f.Finish(); err != nil {
		t.Fatal(err)
	}
	st := fullState(true)
	st.UseVersions(f)
	if err := Save(dir, st); err != nil {
		t.Fatal(err)
	}
	st.Close()
	loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer loaded.Close()
	if !equalStates(loaded, want) {
		t.Errorf("loaded %+v\nwant %+v", loaded, want)
	}
}

// TestFormat4Migrates reads a state written in format 4, which kept the
// versions without the length of their section and without patch marks.
func TestFormat4Migrates(t *testing.T) {
	data, err := os.ReadFile("testdata/state-format4")
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeAll(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !equalStates(got, fullState(false)) {
		t.Errorf("decoded %+v\nwant %+v", got, fullState(false))
	}
}

// TestFormat3Migrates reads a state written in format 3, when fingerprints
// were BLAKE3 (testdata/state-format3 holds fullState with fingerprints
// that are not SHA-256): a record's fingerprint becomes its SHA-256 digest,
// except a rewritten record's, whose digest is of other bytes, which
// becomes unknown: the next scan reads it and compares its digests.
func TestFormat3Migrates(t *testing.T) {
	data, err := os.ReadFile("testdata/state-format3")
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeAll(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	want := fullState(false)
	migrated := func(r *Record) {
		r.SetFingerprint(r.Digests.SHA256)
		if r.Rewritten {
			r.SetFingerprint([32]byte{})
		}
	}
	for _, r := range want.Files.List.All() {
		migrated(r)
	}
	var vs []Record
	for v := range want.Versions() {
		migrated(&v)
		vs = append(vs, v)
	}
	want.SetVersions(vs)
	for i := range want.Journals["default"][1].Events {
		ev := &want.Journals["default"][1].Events[i]
		ev.Record.SetFingerprint(ev.Record.Digests.SHA256)
	}
	if !equalStates(got, want) {
		t.Errorf("decoded %+v\nwant %+v", got, want)
	}
	if got.Files.List.At(1).Known() || !got.Files.List.At(0).Known() {
		t.Errorf("rewritten record known %v, other record known %v", got.Files.List.At(1).Known(), got.Files.List.At(0).Known())
	}
}

// TestOlderFormatsDecode reads states that rsgen wrote in formats 1 and 2
// (byte fixtures written by those encoders): their shared segments come
// back in Shared for the generator to turn into journals, their archived
// packages with their paths.
func TestOlderFormatsDecode(t *testing.T) {
	for _, tc := range []struct {
		file      string
		archived  int
		versions  int
		packageOf string
	}{
		{"testdata/state-format1", 0, 0, ""},
		{"testdata/state-format2", 2, 3, "resourcesync/default/resourcedump/a.zip"},
	} {
		data, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		st, err := decodeAll(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		want := sampleState()
		if st.LastBuild != want.LastBuild || st.Files.Len() != want.Files.Len() || st.Files.List.At(2).Path != "ü/x y#.txt" ||
			st.BaseURL != "" || st.Journals != nil || len(st.Shared) != 2 || len(st.Shared[1].Events) != 2 ||
			st.Shared[1].Events[1].Record.Path != "gone" || len(st.Packages) != 2 || st.SetChanged["default"] != 250 {
			t.Errorf("%s decoded as %+v", tc.file, st)
		}
		if len(st.Archived) != tc.archived || st.NumVersions() != tc.versions {
			t.Errorf("%s: %d archived, %d versions; want %d, %d", tc.file, len(st.Archived), st.NumVersions(), tc.archived, tc.versions)
		}
		if tc.packageOf != "" && (len(st.Archived[1].Packages) != 1 || st.Archived[1].Packages[0].Path != tc.packageOf) {
			t.Errorf("%s: archived packages %+v", tc.file, st.Archived[1].Packages)
		}
		// Written again, the state is in the current format and holds the same.
		var buf bytes.Buffer
		if err := Encode(&buf, st); err != nil {
			t.Fatal(err)
		}
		again, err := decodeAll(bytes.NewReader(buf.Bytes()))
		if err != nil || buf.Bytes()[len(magic)] != Version || again.Files.Len() != st.Files.Len() {
			t.Errorf("%s written again: %v", tc.file, err)
		}
	}
}

// failingBody is a state file whose body cannot be read once its checksum
// has been verified: the disk fails the second pass.
type failingBody struct{ data []byte }

func (f failingBody) ReadAt(p []byte, off int64) (int, error) {
	if off == int64(len(magic)) {
		return 0, syscall.EIO
	}
	return bytes.NewReader(f.data).ReadAt(p, off)
}

// TestReadErrorIsNotCorruption: an I/O error while the state is decoded is
// reported as itself, not as a corrupt state, which the generator would
// set aside and rebuild from the output.
func TestReadErrorIsNotCorruption(t *testing.T) {
	var buf bytes.Buffer
	if err := Encode(&buf, fullState(true)); err != nil {
		t.Fatal(err)
	}
	_, err := decodeState(failingBody{buf.Bytes()}, int64(buf.Len()), nil)
	if !errors.Is(err, syscall.EIO) || errors.Is(err, ErrCorrupt) {
		t.Errorf("decoding with the disk failing: %v; want EIO, not ErrCorrupt", err)
	}
	if _, err := decodeState(bytes.NewReader(buf.Bytes()), int64(buf.Len()), nil); err != nil {
		t.Errorf("decoding the same bytes: %v", err)
	}
}
