package rs_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/rs"
)

// doc is an independent reading of a document through encoding/xml with
// namespace-URI tags.
type doc struct {
	XMLName xml.Name
	Links   []xmlLink `xml:"http://www.openarchives.org/rs/terms/ ln"`
	MD      []xmlMD   `xml:"http://www.openarchives.org/rs/terms/ md"`
	URLs    []xmlURL  `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 url"`
}

type xmlURL struct {
	Loc     string    `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 loc"`
	Lastmod string    `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 lastmod"`
	MD      []xmlMD   `xml:"http://www.openarchives.org/rs/terms/ md"`
	Links   []xmlLink `xml:"http://www.openarchives.org/rs/terms/ ln"`
}

type xmlMD struct {
	Attrs []xml.Attr `xml:",any,attr"`
}

type xmlLink struct {
	Rel  string `xml:"rel,attr"`
	Href string `xml:"href,attr"`
	Pri  string `xml:"pri,attr"`
}

func (m xmlMD) get(name string) string {
	for _, a := range m.Attrs {
		if a.Name.Local == name {
			if a.Name.Space != "" {
				return "PREFIXED:" + a.Value
			}
			return a.Value
		}
	}
	return ""
}

func write(t *testing.T, root rs.Root, md rs.MD, links []rs.Link, entries ...rs.Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := rs.NewWriter(&buf, root)
	if err := w.Start(md, links...); err != nil {
		t.Fatal(err)
	}
	for i := range entries {
		if err := w.Entry(&entries[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if int64(buf.Len()) != w.Bytes() {
		t.Errorf("Bytes() = %d, wrote %d", w.Bytes(), buf.Len())
	}
	return buf.Bytes()
}

func TestRoundTripThroughEncodingXML(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 999, time.FixedZone("X", 3600))
	odd := `https://example.org/a&b<c>"d'e`
	out := write(t, rs.URLSet,
		rs.MD{Capability: rs.CapResourceList, At: at},
		[]rs.Link{{Rel: rs.RelUp, Href: "https://example.org/cap.xml"}},
		rs.Entry{Loc: odd, Lastmod: at, MD: rs.MD{Hash: "sha-256:ab", Length: 0, HasLength: true, Type: "text/html"},
			Links: []rs.Link{{Rel: "duplicate", Href: "https://mirror.example.org/x", Pri: 2}}},
		rs.Entry{Loc: "https://example.org/tab\there"},
	)
	var d doc
	if err := xml.Unmarshal(out, &d); err != nil {
		t.Fatalf("encoding/xml cannot read the document: %v\n%s", err, out)
	}
	if d.XMLName.Space != rs.SitemapNS || d.XMLName.Local != "urlset" {
		t.Errorf("root = %v", d.XMLName)
	}
	if len(d.MD) != 1 || d.MD[0].get("capability") != "resourcelist" || d.MD[0].get("at") != "2026-01-02T02:04:05Z" {
		t.Errorf("root md = %+v", d.MD)
	}
	if len(d.Links) != 1 || d.Links[0].Rel != "up" {
		t.Errorf("root links = %+v", d.Links)
	}
	if len(d.URLs) != 2 {
		t.Fatalf("got %d entries", len(d.URLs))
	}
	u := d.URLs[0]
	if u.Loc != odd {
		t.Errorf("loc = %q, want %q", u.Loc, odd)
	}
	if u.MD[0].get("length") != "0" || u.MD[0].get("hash") != "sha-256:ab" || u.MD[0].get("type") != "text/html" {
		t.Errorf("entry md = %+v", u.MD)
	}
	if u.Links[0].Pri != "2" {
		t.Errorf("pri = %q", u.Links[0].Pri)
	}
	if d.URLs[1].Loc != "https://example.org/tab\there" {
		t.Errorf("tab not preserved: %q", d.URLs[1].Loc)
	}
	if len(d.URLs[1].MD) != 0 {
		t.Errorf("empty md written: %+v", d.URLs[1].MD)
	}
}

func TestCanonicalShape(t *testing.T) {
	out := string(write(t, rs.SitemapIndex, rs.MD{Capability: rs.CapChangeList, From: time.Unix(0, 0)},
		[]rs.Link{{Rel: rs.RelUp, Href: "u"}}, rs.Entry{Loc: "l", MD: rs.MD{From: time.Unix(60, 0), Until: time.Unix(120, 0)}}))
	want := `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="u"/>
  <rs:md capability="changelist" from="1970-01-01T00:00:00Z"/>
  <sitemap>
    <loc>l</loc>
    <rs:md from="1970-01-01T00:01:00Z" until="1970-01-01T00:02:00Z"/>
  </sitemap>
</sitemapindex>
`
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

func TestRejectsCharactersXMLCannotCarry(t *testing.T) {
	for _, s := range []string{"a\x00b", "a\x1bb", "\xff", "a\ufffeb"} {
		var buf bytes.Buffer
		w := rs.NewWriter(&buf, rs.URLSet)
		if err := w.Start(rs.MD{Capability: rs.CapResourceList}); err != nil {
			t.Fatal(err)
		}
		err := w.Entry(&rs.Entry{Loc: s})
		if !errors.Is(err, rs.ErrInvalidXMLChar) {
			t.Errorf("Entry(%q) = %v, want ErrInvalidXMLChar", s, err)
		}
	}
}

func TestLinkNeedsRelAndHref(t *testing.T) {
	w := rs.NewWriter(&bytes.Buffer{}, rs.URLSet)
	if err := w.Start(rs.MD{Capability: rs.CapResourceList}, rs.Link{Rel: "up"}); err == nil {
		t.Error("a link without href was written")
	}
}

func TestDocumentFullAtMaxEntries(t *testing.T) {
	var buf bytes.Buffer
	w := rs.NewWriter(&buf, rs.URLSet)
	if err := w.Start(rs.MD{Capability: rs.CapResourceList}); err != nil {
		t.Fatal(err)
	}
	e := rs.Entry{Loc: "https://example.org/x"}
	for i := 0; i < rs.MaxEntries; i++ {
		if err := w.Entry(&e); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
	}
	before := buf.Len()
	if err := w.Entry(&e); !errors.Is(err, rs.ErrDocumentFull) {
		t.Fatalf("entry %d: %v, want ErrDocumentFull", rs.MaxEntries+1, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(buf.String(), "<url>"); got != rs.MaxEntries {
		t.Errorf("%d entries written (%d bytes before the refused one)", got, before)
	}
}

func TestDocumentFullAtByteLimit(t *testing.T) {
	var buf bytes.Buffer
	w := rs.NewWriter(&buf, rs.URLSet)
	w.SetLimits(rs.MaxEntries, 1000)
	if err := w.Start(rs.MD{Capability: rs.CapResourceList}); err != nil {
		t.Fatal(err)
	}
	e := rs.Entry{Loc: "https://example.org/" + strings.Repeat("x", 100)}
	var err error
	for err == nil {
		err = w.Entry(&e)
	}
	if !errors.Is(err, rs.ErrDocumentFull) {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 1000 {
		t.Errorf("document of %d bytes passes the 1000-byte limit", buf.Len())
	}
}

func BenchmarkEntry(b *testing.B) {
	w := rs.NewWriter(discard{}, rs.URLSet)
	if err := w.Start(rs.MD{Capability: rs.CapResourceList}); err != nil {
		b.Fatal(err)
	}
	e := rs.Entry{Loc: "https://data.example.org/collection/items/item-000123/record.json", Lastmod: time.Unix(1767225600, 0),
		MD: rs.MD{Hash: "sha-256:3e189266d0af953947c3e7669682d6fade219e406f765969c5e8d564a3469a69", Length: 12345, HasLength: true, Type: "application/json"}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if w.Entries() == rs.MaxEntries-1 {
			w = rs.NewWriter(discard{}, rs.URLSet)
			_ = w.Start(rs.MD{Capability: rs.CapResourceList})
		}
		if err := w.Entry(&e); err != nil {
			b.Fatal(err)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func TestStylesheetInstructionFollowsTheDeclaration(t *testing.T) {
	var buf bytes.Buffer
	w := rs.NewWriter(&buf, rs.URLSet)
	w.SetStylesheet(`../a&b"/s.xsl`)
	if err := w.Start(rs.MD{Capability: rs.CapResourceList}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<?xml-stylesheet type="text/xsl" href="../a&amp;b&quot;/s.xsl"?>` + "\n<urlset "
	if !strings.HasPrefix(buf.String(), want) {
		t.Fatalf("document starts\n%s\nwant\n%s", buf.String(), want)
	}
	// encoding/xml reads the instruction as one, and the document as before.
	d := xml.NewDecoder(&buf)
	var pis []string
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		if pi, ok := tok.(xml.ProcInst); ok {
			pis = append(pis, pi.Target)
		}
	}
	if strings.Join(pis, ",") != "xml,xml-stylesheet" {
		t.Errorf("processing instructions %v, want xml and xml-stylesheet", pis)
	}
}

// TestBytesFieldsWriteTheSameAsStrings checks that LocBytes and HashBytes
// are written exactly as Loc and Hash are, with no allocation per entry.
func TestBytesFieldsWriteTheSameAsStrings(t *testing.T) {
	loc, hash := "https://example.org/a%20b&c", "sha-256:00ff"
	viaStrings := write(t, rs.URLSet, rs.MD{Capability: rs.CapResourceList}, nil,
		rs.Entry{Loc: loc, MD: rs.MD{Hash: hash, Length: 1, HasLength: true}})
	viaBytes := write(t, rs.URLSet, rs.MD{Capability: rs.CapResourceList}, nil,
		rs.Entry{LocBytes: []byte(loc), MD: rs.MD{HashBytes: []byte(hash), Length: 1, HasLength: true}})
	if !bytes.Equal(viaStrings, viaBytes) {
		t.Errorf("bytes fields give\n%s\nstrings give\n%s", viaBytes, viaStrings)
	}
	w := rs.NewWriter(discard{}, rs.URLSet)
	if err := w.Start(rs.MD{Capability: rs.CapResourceList}); err != nil {
		t.Fatal(err)
	}
	e := rs.Entry{LocBytes: []byte(loc), Lastmod: time.Unix(1, 0), MD: rs.MD{HashBytes: []byte(hash), Length: 1, HasLength: true, Type: "text/plain"}}
	if allocs := testing.AllocsPerRun(100, func() { _ = w.Entry(&e) }); allocs != 0 {
		t.Errorf("%v allocations per entry, want 0", allocs)
	}
}
