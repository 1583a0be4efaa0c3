package snapshot

import (
	"fmt"
	"strings"
	"testing"
)

// TestPathArenaKeepsEveryPath joins enough paths to fill several blocks,
// and one longer than a block's quarter, and finds each as it was made.
func TestPathArenaKeepsEveryPath(t *testing.T) {
	var a pathArena
	var got, want []string
	for i := range 5000 {
		prefix := fmt.Sprintf("Sammlung %02d/dossier été %02d/", i/100, i%100)
		name := fmt.Sprintf("日本語 メモ %07d.txt", i)
		got = append(got, a.join(prefix, []byte(name)))
		want = append(want, prefix+name)
	}
	long := strings.Repeat("x/", pathBlockSize/4)
	got, want = append(got, a.join(long, []byte("y"))), append(want, long+"y")
	got, want = append(got, a.join("", nil)), append(want, "")
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("path %d: %q, want %q", i, got[i], want[i])
		}
	}
}
