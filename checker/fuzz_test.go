package checker

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// addSeeds adds every fixture and spec example to the fuzz corpus.
func addSeeds(f *testing.F) {
	for _, pattern := range []string{"testdata/docs/*.xml", "../testdata/spec-examples/*.xml"} {
		paths, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
}

// FuzzReadDocument checks that no input makes the reader panic and that
// every finding is well formed.
func FuzzReadDocument(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, fs := ReadDocument(bytes.NewReader(data), "fuzz.xml", Limits{MaxBytes: 1 << 20})
		if doc == nil {
			t.Fatal("nil document")
		}
		for _, x := range fs {
			if _, ok := rulesByID[x.Rule]; !ok || x.Line < 0 || x.Message == "" {
				t.Fatalf("malformed finding %+v", x)
			}
		}
	})
}

// FuzzParseDateTime checks that an accepted datetime survives a round trip.
func FuzzParseDateTime(f *testing.F) {
	for _, s := range []string{"2013-01-03T09:00:00Z", "2013-01-03T09:00:00.5+01:00", "2013-01-03", "2013-02-29T00:00:00Z", "9999-12-31T23:59:59-14:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		dt, err := parseDateTime(s, true)
		if err != nil || !dt.hasTim {
			return
		}
		back, err := parseDateTime(dt.t.Format("2006-01-02T15:04:05.999999999Z07:00"), false)
		if err != nil || !back.t.Equal(dt.t) {
			t.Fatalf("%q parsed as %v, which does not round-trip: %v", s, dt.t, err)
		}
	})
}

// FuzzParseHash checks that decoded digests have their algorithm's size.
func FuzzParseHash(f *testing.F) {
	for _, s := range []string{"md5:1584abdf8ebdc9802ac0c6a7402c03b6", "sha-256:f4OxZX_x_DFGFDgghgdfb6rtSx-iosjf6735432nklj md5:", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ds, _ := parseHash(s)
		for _, d := range ds {
			if d.sum != nil && len(d.sum) != hashAlgs[d.alg]().Size() {
				t.Fatalf("%s digest of %d bytes", d.alg, len(d.sum))
			}
		}
	})
}

// FuzzURIProblem checks that an accepted URI has only characters a URI may
// carry.
func FuzzURIProblem(f *testing.F) {
	for _, s := range []string{"http://example.com/a%20b", "http://example.com/a b", "http://é", "%zz", "a#b#c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if uriProblem(s) != "" {
			return
		}
		for i := 0; i < len(s); i++ {
			if !uriChar(s[i]) && s[i] != '%' {
				t.Fatalf("accepted %q with byte %q", s, s[i])
			}
		}
	})
}
