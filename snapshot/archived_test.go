package snapshot

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"syscall"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/state-format4 with the current encoder")

// fullState is sampleState with archives, versions, a rewritten record,
// a fingerprint that is the record's SHA-256 digest and a base URL: every
// field format 4 writes.
func fullState() *State {
	st := sampleState()
	st.BaseURL = "https://data.example.org/"
	st.Files.At(0).SetFingerprint(st.Files.At(0).Digests.SHA256)
	st.Files.At(1).Rewritten = true
	st.Archived = []Archived{
		{Set: "default", At: 100, Completed: 150},
		{Set: "default", Dump: true, At: 100, Completed: 150,
			Packages: []Package{{Set: "default", Path: "resourcesync/default/resourcedump/a.zip", At: 100, Length: 1234, SHA256: [32]byte{1, 2}}},
			Docs:     []Kept{{Path: "resourcesync/default/resourcedumps/resourcedump-19700101T000140Z.xml", Size: 900, SHA256: [32]byte{7}}}},
	}
	st.Versions = []Record{*st.Files.At(0), *st.Files.At(0), *st.Files.At(2)}
	st.Versions[1].Seen++
	return st
}

// TestFormat4Fixture: the state of fullState encodes to the bytes of
// testdata/state-format4 (run with -update after a deliberate change of
// the format, which also needs a new Version) and decodes back equal.
func TestFormat4Fixture(t *testing.T) {
	var buf bytes.Buffer
	if err := Encode(&buf, fullState()); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("testdata/state-format4", buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/state-format4")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Error("format 4 encodes to other bytes than testdata/state-format4: a changed format needs a new Version and a migration")
	}
	// A fingerprint equal to the SHA-256 digest is not stored again.
	other := fullState()
	f := other.Files.At(0).Fingerprint()
	f[0]++
	other.Files.At(0).SetFingerprint(f)
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
	if !equalStates(got, fullState()) {
		t.Errorf("decoded %+v\nwant %+v", got, fullState())
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
	want := fullState()
	migrated := func(r *Record) {
		r.SetFingerprint(r.Digests.SHA256)
		if r.Rewritten {
			r.SetFingerprint([32]byte{})
		}
	}
	for _, r := range want.Files.All() {
		migrated(r)
	}
	for i := range want.Versions {
		migrated(&want.Versions[i])
	}
	for i := range want.Journals["default"][1].Events {
		ev := &want.Journals["default"][1].Events[i]
		ev.Record.SetFingerprint(ev.Record.Digests.SHA256)
	}
	if !equalStates(got, want) {
		t.Errorf("decoded %+v\nwant %+v", got, want)
	}
	if got.Files.At(1).Known() || !got.Files.At(0).Known() {
		t.Errorf("rewritten record known %v, other record known %v", got.Files.At(1).Known(), got.Files.At(0).Known())
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
		if st.LastBuild != want.LastBuild || st.Files.Len() != want.Files.Len() || st.Files.At(2).Path != "ü/x y#.txt" ||
			st.BaseURL != "" || st.Journals != nil || len(st.Shared) != 2 || len(st.Shared[1].Events) != 2 ||
			st.Shared[1].Events[1].Record.Path != "gone" || len(st.Packages) != 2 || st.SetChanged["default"] != 250 {
			t.Errorf("%s decoded as %+v", tc.file, st)
		}
		if len(st.Archived) != tc.archived || len(st.Versions) != tc.versions {
			t.Errorf("%s: %d archived, %d versions; want %d, %d", tc.file, len(st.Archived), len(st.Versions), tc.archived, tc.versions)
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
	if err := Encode(&buf, fullState()); err != nil {
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
