package rs

import (
	"bytes"
	"encoding/xml"
	"errors"
	"testing"
	"time"
)

// FuzzWriterEscaping writes an arbitrary string as a <loc>, as attribute
// values of rs:md and rs:ln, and reads it back with encoding/xml: the
// writer either refuses it with ErrInvalidXMLChar or writes a document
// that decodes to exactly the same string.
func FuzzWriterEscaping(f *testing.F) {
	for _, s := range []string{"plain", `a&b<c>d"e'f`, "tab\tnl\ncr\r", "\x00", "\x01", "\ufffe", "\xff", "é e\u0301",
		"]]>", "&amp;", "\U0001F600", "\ud7ff\ue000", "a\r\nb", " lead and trail "} {
		f.Add(s)
	}
	type md struct {
		Type string `xml:"type,attr"`
		Path string `xml:"path,attr"`
	}
	type ln struct {
		Href string `xml:"href,attr"`
	}
	type url struct {
		Loc string `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 loc"`
		MD  md     `xml:"http://www.openarchives.org/rs/terms/ md"`
		LN  ln     `xml:"http://www.openarchives.org/rs/terms/ ln"`
	}
	type doc struct {
		URL url `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 url"`
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		w := NewWriter(&buf, URLSet)
		err := w.Start(MD{Capability: CapResourceList})
		if err == nil {
			err = w.Entry(&Entry{Loc: s, MD: MD{Type: s, Path: s}, Links: []Link{{Rel: "alternate", Href: s}}})
		}
		if err == nil {
			err = w.Close()
		}
		if s == "" {
			return // empty values are left out
		}
		if err != nil {
			if !errors.Is(err, ErrInvalidXMLChar) {
				t.Fatalf("%q refused with %v, want ErrInvalidXMLChar", s, err)
			}
			return
		}
		var d doc
		if err := xml.Unmarshal(buf.Bytes(), &d); err != nil {
			t.Fatalf("%q: the document does not parse: %v\n%s", s, err, buf.Bytes())
		}
		if u := d.URL; u.Loc != s || u.MD.Type != s || u.MD.Path != s || u.LN.Href != s {
			t.Fatalf("%q read back as loc %q, type %q, path %q, href %q", s, u.Loc, u.MD.Type, u.MD.Path, u.LN.Href)
		}
	})
}

// FuzzAppendTime: the fixed-form time writer writes what TimeLayout
// does, for every instant, in any zone, including years it cannot hold.
func FuzzAppendTime(f *testing.F) {
	for _, sec := range []int64{0, 1767225600, -62135596800, -62135596801, 253402300799, 253402300800, 951782400, -1} {
		f.Add(sec, int64(999_999_999), int32(0))
	}
	f.Add(int64(1767225599), int64(1), int32(-5*3600))
	f.Fuzz(func(t *testing.T, sec, nsec int64, offset int32) {
		tm := time.Unix(sec, nsec).In(time.FixedZone("z", int(offset%(26*3600))))
		got := appendTime([]byte("x"), tm)
		if want := tm.UTC().AppendFormat([]byte("x"), TimeLayout); !bytes.Equal(got, want) {
			t.Fatalf("%v: %q, want %q", tm, got, want)
		}
	})
}
