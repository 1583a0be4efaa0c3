package snapshot

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecode: Decode never panics, fails only with ErrCorrupt or
// ErrNewerVersion, allocates in proportion to its input (no count may
// exceed the bytes that hold it), and what it accepts encodes back to a
// state that decodes equal.
func FuzzDecode(f *testing.F) {
	var buf bytes.Buffer
	Encode(&buf, sampleState())
	f.Add(buf.Bytes())
	buf.Reset()
	Encode(&buf, &State{})
	f.Add(buf.Bytes())
	f.Add([]byte(magic))
	f.Add([]byte(magic + "\x01\xff\xff\xff\xff\xff\xff\xff\xff\x7f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := decodeAll(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNewerVersion) {
				t.Fatalf("Decode error %v is neither ErrCorrupt nor ErrNewerVersion", err)
			}
			return
		}
		items := st.Files.Len() + len(st.Shared) + len(st.Outputs) + len(st.SetChanged) + len(st.Packages)
		for _, seg := range st.Shared {
			items += len(seg.Events)
		}
		for _, segs := range st.Journals {
			items += len(segs)
			for _, seg := range segs {
				items += len(seg.Events)
			}
		}
		if items > len(data) {
			t.Fatalf("%d items decoded from %d bytes", items, len(data))
		}
		var again bytes.Buffer
		if err := Encode(&again, st); err != nil {
			t.Fatal(err)
		}
		st.Shared = nil // a migration input, never written
		st2, err := decodeAll(bytes.NewReader(again.Bytes()))
		if err != nil || !equalStates(st, st2) {
			t.Fatalf("re-encoded state does not decode equal: %v", err)
		}
	})
}
