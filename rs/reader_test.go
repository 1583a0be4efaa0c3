package rs_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/rs"
)

var (
	t1 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	t2 = time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
)

// readAll reads a whole document.
func readAll(data []byte) (*rs.Head, []rs.Entry, error) {
	rd := rs.NewReader(bytes.NewReader(data))
	head, err := rd.Head()
	if err != nil {
		return nil, nil, err
	}
	var entries []rs.Entry
	err = rd.Entries(func(e *rs.Entry) error {
		entries = append(entries, *e)
		return nil
	})
	return head, entries, err
}

// TestReaderRoundTrip: what Writer writes, Reader reads back, every field
// of rs:md and rs:ln included, for both roots.
func TestReaderRoundTrip(t *testing.T) {
	head := rs.Head{
		Root:  rs.URLSet,
		MD:    rs.MD{Capability: rs.CapChangeDump, At: t1, Completed: t2, From: t1, Until: t2},
		Links: []rs.Link{{Rel: rs.RelUp, Href: "https://e.org/cap.xml"}, {Rel: rs.RelIndex, Href: "https://e.org/idx.xml"}},
	}
	entries := []rs.Entry{
		{Loc: "https://e.org/a&b.txt", Lastmod: t1, MD: rs.MD{Change: rs.ChangeUpdated, Datetime: t2, Hash: "md5:00 sha-256:11",
			Length: 0, HasLength: true, Type: "text/plain", Path: "/a&b.txt"},
			Links: []rs.Link{{Rel: rs.RelAlternate, Href: "https://e.org/a.html", Type: "text/html", Hash: "md5:22",
				Length: 7, HasLength: true, Modified: t1, Pri: 2}}},
		{Loc: "https://e.org/pkg.zip", MD: rs.MD{At: t1, From: t1, Until: t2, Completed: t2}},
		{Loc: "https://e.org/bare"},
	}
	data := write(t, head.Root, head.MD, head.Links, entries...)
	gotHead, got, err := readAll(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if !reflect.DeepEqual(*gotHead, head) {
		t.Errorf("head\n got %+v\nwant %+v", *gotHead, head)
	}
	if !reflect.DeepEqual(got, entries) {
		t.Errorf("entries\n got %+v\nwant %+v", got, entries)
	}

	index := write(t, rs.SitemapIndex, rs.MD{Capability: rs.CapResourceList, At: t1}, nil,
		rs.Entry{Loc: "https://e.org/part-1.xml", MD: rs.MD{At: t1}})
	gotHead, got, err = readAll(index)
	if err != nil {
		t.Fatal(err)
	}
	if gotHead.Root != rs.SitemapIndex || gotHead.MD.Capability != rs.CapResourceList || len(got) != 1 || got[0].Loc != "https://e.org/part-1.xml" {
		t.Errorf("index: head %+v, entries %+v", gotHead, got)
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestReaderHeadOnly: Head stops at the first entry: it reads a few
// kilobytes of a large document, and what follows, even broken, does not
// matter.
func TestReaderHeadOnly(t *testing.T) {
	var entries []rs.Entry
	for i := range 5000 {
		entries = append(entries, rs.Entry{Loc: fmt.Sprintf("https://e.org/%05d", i), Lastmod: t1})
	}
	data := write(t, rs.URLSet, rs.MD{Capability: rs.CapResourceList, At: t2}, nil, entries...)
	broken := append(data[:len(data)/2:len(data)/2], "<url><oops"...)
	for _, doc := range [][]byte{data, broken} {
		cr := &countingReader{r: bytes.NewReader(doc)}
		head, err := rs.NewReader(cr).Head()
		if err != nil {
			t.Fatal(err)
		}
		if !head.MD.At.Equal(t2) {
			t.Errorf("at %v", head.MD.At)
		}
		if cr.n > 64<<10 || cr.n >= len(doc) {
			t.Errorf("Head read %d of %d bytes", cr.n, len(doc))
		}
	}
	// The whole broken document fails, naming the problem.
	if _, _, err := readAll(broken); err == nil {
		t.Error("a truncated document reads without error")
	}
}

// TestReaderStop: an error of the callback stops the reading and comes
// back as it is.
func TestReaderStop(t *testing.T) {
	data := write(t, rs.URLSet, rs.MD{Capability: rs.CapResourceList}, nil, rs.Entry{Loc: "https://e.org/1"}, rs.Entry{Loc: "https://e.org/2"})
	stop := errors.New("stop")
	calls := 0
	err := rs.NewReader(bytes.NewReader(data)).Entries(func(*rs.Entry) error { calls++; return stop })
	if err != stop || calls != 1 {
		t.Errorf("err %v after %d calls, want stop after 1", err, calls)
	}
}

// TestReaderEquivalentForms: other prefixes, attribute orders, white
// space, comments, unknown attributes and extension elements read as the
// canonical form does.
func TestReaderEquivalentForms(t *testing.T) {
	doc := `<?xml version="1.0"?>
<!-- a comment -->
<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:x="http://www.openarchives.org/rs/terms/" xmlns:o="urn:other">
  <o:note><o:deep>skipped</o:deep></o:note>
  <x:md at="2026-01-02T04:04:05+01:00" capability="resourcelist" o:capability="ignored" future="ignored"/>
  <x:ln href="https://e.org/cap.xml" rel="up"></x:ln>
  <sm:url>
    <sm:priority>0.5</sm:priority>
    <sm:loc>
      https://e.org/a
    </sm:loc>
    <o:ext a="1"/>
    <x:md length="3" type="text/plain"/>
    <sm:lastmod>2026-01-02T03:04:05.000Z</sm:lastmod>
  </sm:url>
</sm:urlset>
<!-- trailing comment -->
`
	head, entries, err := readAll([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := rs.Head{Root: rs.URLSet, MD: rs.MD{Capability: rs.CapResourceList, At: t1}, Links: []rs.Link{{Rel: "up", Href: "https://e.org/cap.xml"}}}
	if !reflect.DeepEqual(*head, want) {
		t.Errorf("head %+v, want %+v", *head, want)
	}
	wantEntries := []rs.Entry{{Loc: "https://e.org/a", Lastmod: t1, MD: rs.MD{Length: 3, HasLength: true, Type: "text/plain"}}}
	if !reflect.DeepEqual(entries, wantEntries) {
		t.Errorf("entries %+v, want %+v", entries, wantEntries)
	}
}

const (
	docOpen  = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">`
	docClose = `</urlset>`
)

// TestReaderRefuses: what rsgen never writes is an error that says what
// and on which line.
func TestReaderRefuses(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"empty", ``, "no root element"},
		{"not XML", `hello`, "text before the root element"},
		{"other root", `<feed xmlns="http://www.w3.org/2005/Atom"/>`, `<feed> (namespace "http://www.w3.org/2005/Atom") is not`},
		{"no namespace", `<urlset><url><loc>x</loc></url></urlset>`, `<urlset> (namespace "") is not`},
		{"sitemap in urlset", docOpen + "\n<sitemap><loc>x</loc></sitemap>" + docClose, "line 2: <sitemap> in a <urlset>"},
		{"url in index", strings.ReplaceAll(docOpen, "urlset", "sitemapindex") + "<url><loc>x</loc></url></sitemapindex>", "<url> in a <sitemapindex>"},
		{"no loc", docOpen + "<url><lastmod>2026-01-01T00:00:00Z</lastmod></url>" + docClose, "<url> without <loc>"},
		{"empty loc", docOpen + "<url><loc> </loc></url>" + docClose, "<url> without <loc>"},
		{"two locs", docOpen + "<url><loc>a</loc><loc>b</loc></url>" + docClose, "more than one <loc>"},
		{"element in loc", docOpen + "<url><loc>a<b/></loc></url>" + docClose, "<b> inside a text element"},
		{"two lastmods", docOpen + "<url><loc>a</loc><lastmod>2026-01-01T00:00:00Z</lastmod><lastmod>2026-01-01T00:00:00Z</lastmod></url>" + docClose, "a: more than one <lastmod>"},
		{"bad lastmod", docOpen + "<url><loc>a</loc><lastmod>yesterday</lastmod></url>" + docClose, `entry a: lastmod "yesterday" is not an RFC 3339 time`},
		{"year 10000", docOpen + "<url><loc>a</loc><lastmod>9999-12-31T23:00:00-02:00</lastmod></url>" + docClose, "outside the years 0000 to 9999"},
		{"bad length", docOpen + "\n\n<url><loc>a</loc><rs:md length=\"-1\"/></url>" + docClose, `line 3: entry a: length "-1" is not a number of bytes`},
		{"bad datetime", docOpen + `<url><loc>a</loc><rs:md change="created" datetime="2026"/></url>` + docClose, `datetime "2026"`},
		{"two mds", docOpen + `<url><loc>a</loc><rs:md/><rs:md/></url>` + docClose, "a: more than one <rs:md>"},
		{"ln without href", docOpen + `<url><loc>a</loc><rs:ln rel="up"/></url>` + docClose, "rel and href are required"},
		{"bad pri", docOpen + `<url><loc>a</loc><rs:ln rel="up" href="b" pri="0"/></url>` + docClose, `pri "0"`},
		{"two root mds", docOpen + `<rs:md capability="a"/><rs:md capability="b"/>` + docClose, "more than one <rs:md>"},
		{"bad root md", docOpen + `<rs:md at="now"/>` + docClose, `root <rs:md>: at "now"`},
		{"md after entries", docOpen + `<url><loc>a</loc></url><rs:md capability="resourcelist"/>` + docClose, "<rs:md> after the entries"},
		{"two roots", docOpen + docClose + docOpen + docClose, "<urlset> after the root element"},
		{"text after root", docOpen + docClose + "x", "text after the root element"},
		{"truncated", docOpen + "<url><loc>a</loc>", "unexpected EOF"},
		{"not well-formed", docOpen + "<url><loc>a</url>" + docClose, "syntax error"},
		{"too deep", docOpen + strings.Repeat("<x:a xmlns:x=\"urn:x\">", 40) + strings.Repeat("</x:a>", 40) + docClose, "nested deeper than 32"},
	} {
		_, _, err := readAll([]byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// TestReaderLimits: a document past the byte or entry limit fails with
// ErrTooLarge; one exactly at them reads.
func TestReaderLimits(t *testing.T) {
	data := write(t, rs.URLSet, rs.MD{Capability: rs.CapResourceList}, nil,
		rs.Entry{Loc: "https://e.org/1"}, rs.Entry{Loc: "https://e.org/2"}, rs.Entry{Loc: "https://e.org/3"})
	read := func(entries int, bytes int64) error {
		rd := rs.NewReader(strings.NewReader(string(data)))
		rd.SetLimits(entries, bytes)
		return rd.Entries(func(*rs.Entry) error { return nil })
	}
	if err := read(3, int64(len(data))); err != nil {
		t.Errorf("at the limits: %v", err)
	}
	for _, c := range []struct {
		entries int
		bytes   int64
		want    string
	}{
		{2, int64(len(data)), "more than 2 entries"},
		{3, int64(len(data)) - 1, fmt.Sprintf("more than %d bytes", len(data)-1)},
		{3, 100, "more than 100 bytes"},
	} {
		err := read(c.entries, c.bytes)
		if !errors.Is(err, rs.ErrTooLarge) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("limits %d entries, %d bytes: %v, want ErrTooLarge: %s", c.entries, c.bytes, err, c.want)
		}
	}
	// The default limit is MaxBytes plus the slack.
	big := io.MultiReader(strings.NewReader(docOpen+"<!--"), io.LimitReader(zeros{'x'}, rs.MaxBytes+rs.ReadSlack), strings.NewReader("-->"+docClose))
	if _, err := rs.NewReader(big).Head(); !errors.Is(err, rs.ErrTooLarge) {
		t.Errorf("a document of MaxBytes+ReadSlack bytes and more: %v, want ErrTooLarge", err)
	}
}

// zeros is an endless stream of one byte.
type zeros [1]byte

func (z zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = z[0]
	}
	return len(p), nil
}

// FuzzReader reads arbitrary bytes: the Reader never panics, and what it
// reads, written again by Writer, reads back to the same document: the
// canonical form is a fixed point.
func FuzzReader(f *testing.F) {
	f.Add(writeSeed(rs.URLSet, rs.MD{Capability: rs.CapChangeList, From: t1}, []rs.Link{{Rel: "up", Href: "https://e.org/c"}},
		rs.Entry{Loc: "https://e.org/a", Lastmod: t1, MD: rs.MD{Change: rs.ChangeCreated, Datetime: t1, Hash: "md5:aa", Length: 1, HasLength: true},
			Links: []rs.Link{{Rel: "alternate", Href: "https://e.org/b", Pri: 1, Modified: t2}}}))
	f.Add(writeSeed(rs.SitemapIndex, rs.MD{Capability: rs.CapResourceList, At: t1}, nil, rs.Entry{Loc: "https://e.org/p1.xml", MD: rs.MD{At: t1}}))
	for _, s := range []string{"", "<", docOpen + docClose, docOpen + "<url><loc>&amp;&#x1;</loc></url>" + docClose,
		docOpen + `<url><loc>a</loc><rs:md length="99999999999999999999"/></url>` + docClose,
		docOpen + `<rs:md at="0000-01-01T00:00:00+01:00"/>` + docClose} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := rs.NewReader(bytes.NewReader(data))
		rd.SetLimits(100, 1<<16)
		head, err := rd.Head()
		if err != nil {
			return
		}
		var entries []rs.Entry
		if err := rd.Entries(func(e *rs.Entry) error { entries = append(entries, *e); return nil }); err != nil {
			return
		}
		canon, err := rewrite(head, entries)
		if err != nil {
			return // a value Writer refuses, such as a control character from a character reference
		}
		head2, entries2, err := readAll(canon)
		if err != nil {
			t.Fatalf("the canonical form of what was read does not read: %v\n%s", err, canon)
		}
		again, err := rewrite(head2, entries2)
		if err != nil || !bytes.Equal(again, canon) {
			t.Fatalf("not a fixed point (%v):\n%s\n%s", err, canon, again)
		}
	})
}

func writeSeed(root rs.Root, md rs.MD, links []rs.Link, entries ...rs.Entry) []byte {
	data, err := rewrite(&rs.Head{Root: root, MD: md, Links: links}, entries)
	if err != nil {
		panic(err)
	}
	return data
}

func rewrite(head *rs.Head, entries []rs.Entry) ([]byte, error) {
	var buf bytes.Buffer
	w := rs.NewWriter(&buf, head.Root)
	if err := w.Start(head.MD, head.Links...); err != nil {
		return nil, err
	}
	for i := range entries {
		if err := w.Entry(&entries[i]); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
