package snapshot

import (
	"bytes"
	"reflect"
	"testing"
)

// TestFormat2 checks that the archive and version records survive a round
// trip as format 2, and that a state without them is still written as
// format 1, which older rsgens read.
func TestFormat2(t *testing.T) {
	st := sampleState()
	var v1 bytes.Buffer
	if err := Encode(&v1, st); err != nil {
		t.Fatal(err)
	}
	if got := v1.Bytes()[len(magic)]; got != 1 {
		t.Errorf("a state without archives is written as format %d, want 1", got)
	}
	st.Archived = []Archived{
		{Set: "default", At: 100, Completed: 150, Packages: []string{}},
		{Set: "default", Dump: true, At: 100, Completed: 150, Packages: []string{"resourcesync/default/resourcedump/a.zip"}},
	}
	st.Versions = []Record{st.Files[0], st.Files[0], st.Files[2]}
	st.Versions[1].Seen++
	var v2 bytes.Buffer
	if err := Encode(&v2, st); err != nil {
		t.Fatal(err)
	}
	if got := v2.Bytes()[len(magic)]; got != 2 {
		t.Errorf("a state with archives is written as format %d, want 2", got)
	}
	got, err := Decode(bytes.NewReader(v2.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !equalStates(got, st) || !reflect.DeepEqual(got.Archived, st.Archived) || !reflect.DeepEqual(got.Versions, st.Versions) {
		t.Errorf("decoded %+v\nwant %+v", got, st)
	}
	old, err := Decode(bytes.NewReader(v1.Bytes()))
	if err != nil || len(old.Archived) != 0 || len(old.Versions) != 0 {
		t.Errorf("format 1: %+v, %v", old, err)
	}
}
