package zippkg

import (
	"os"
	"regexp"
	"testing"
)

// TestDeflaterNamesTheEncoderRequired: Deflater names the version of
// klauspost/compress that go.mod requires, so that a go.mod that moves to
// another version, whose deflate output may differ, renames packages (see
// Deflater) instead of giving an old name new bytes.
func TestDeflaterNamesTheEncoderRequired(t *testing.T) {
	mod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*(github\.com/klauspost/compress) (v\S+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod does not require github.com/klauspost/compress")
	}
	if want := string(m[1]) + "/flate@" + string(m[2]); Deflater != want {
		t.Errorf("Deflater is %q; go.mod requires %s: change Deflater with go.mod", Deflater, want)
	}
}
