package checker

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/rsgen/rsgen/rs"
)

const head = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:rs="http://www.openarchives.org/rs/terms/">
  <rs:ln rel="up" href="http://example.com/capabilitylist.xml"/>
  <rs:md capability="resourcelist" at="2013-01-03T09:00:00Z"/>
`

// endless yields head and then repeats unit forever, counting what was read.
type endless struct {
	head, unit []byte
	off        int
	n          int64
}

func (e *endless) Read(p []byte) (int, error) {
	k := 0
	for k < len(p) {
		var src []byte
		if e.off < len(e.head) {
			src = e.head[e.off:]
		} else {
			src = e.unit[(e.off-len(e.head))%len(e.unit):]
		}
		c := copy(p[k:], src)
		k += c
		e.off += c
	}
	e.n += int64(k)
	return k, nil
}

func onlyRule(t *testing.T, fs []Finding, rule string) {
	t.Helper()
	if got := ruleSet(fs); len(got) != 1 || got[0] != rule {
		t.Fatalf("got rules %v, want only %s:\n%s", got, rule, findingLines(fs))
	}
}

func TestLimitEntries(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(head)
	for i := range rs.MaxEntries + 1 {
		fmt.Fprintf(&b, "<url><loc>http://example.com/r/%d</loc></url>\n", i)
	}
	b.WriteString("</urlset>\n")
	doc, fs := ReadDocument(&b, "big.xml", Limits{})
	onlyRule(t, fs, "limit-entries")
	if fs[0].Line != 5+rs.MaxEntries {
		t.Errorf("finding on line %d, want %d", fs[0].Line, 5+rs.MaxEntries)
	}
	if doc.EntryCount != rs.MaxEntries+1 || len(doc.Entries) != rs.MaxEntries {
		t.Errorf("counted %d entries and kept %d", doc.EntryCount, len(doc.Entries))
	}
}

// TestLimitBytes feeds a document that never ends: reading must stop just
// after the size limit, 4 MB here to keep the test short.
func TestLimitBytes(t *testing.T) {
	if DefaultLimits().MaxBytes != rs.MaxBytes {
		t.Errorf("default size limit %d, want %d", DefaultLimits().MaxBytes, rs.MaxBytes)
	}
	const limit = 4 << 20
	src := &endless{head: []byte(head), unit: []byte("<url><loc>http://example.com/res</loc></url>\n")}
	_, fs := ReadDocument(src, "endless.xml", Limits{MaxBytes: limit})
	found := false
	for _, f := range fs {
		found = found || f.Rule == "limit-bytes"
	}
	if !found {
		t.Fatalf("no limit-bytes finding:\n%s", findingLines(fs))
	}
	if max := int64(limit + 1<<16); src.n > max {
		t.Errorf("read %d bytes; want at most %d", src.n, max)
	}
}

// TestDeepNesting feeds endlessly nested elements: reading stops at the
// depth limit, after a few hundred bytes, so the decoder's stack stays small.
func TestDeepNesting(t *testing.T) {
	src := &endless{head: []byte(head + "<url><loc>http://example.com/res</loc>"), unit: []byte("<x:a xmlns:x='urn:x'>")}
	_, fs := ReadDocument(io.LimitReader(src, 1<<30), "deep.xml", Limits{})
	if len(fs) == 0 || fs[len(fs)-1].Rule != "xml-limit" {
		t.Fatalf("last finding is not xml-limit:\n%s", findingLines(fs))
	}
	if src.n > 1<<16 {
		t.Errorf("read %d bytes before stopping", src.n)
	}
}

// TestHugeToken feeds a loc that never ends.
func TestHugeToken(t *testing.T) {
	src := &endless{head: []byte(head + "<url><loc>http://example.com/"), unit: []byte(strings.Repeat("a", 4096))}
	_, fs := ReadDocument(src, "huge.xml", Limits{MaxToken: 1 << 16})
	onlyRule(t, fs, "xml-limit")
	if src.n > 1<<17+1<<16 {
		t.Errorf("read %d bytes before stopping", src.n)
	}
}
