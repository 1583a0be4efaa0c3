// Package sitemaptest is test support: the one reader of Sitemap and
// ResourceSync documents (lists, indexes, Capability Lists, the Source
// Description, dump manifests) that the tests of every package read
// rsgen's output with. It is built on encoding/xml alone and imports no
// rsgen package, so that tests check what rsgen publishes against a
// reader rsgen did not write (rs.Reader, which recovery and serve use, is
// rsgen's own).
package sitemaptest

import (
	"encoding/xml"
	"errors"
	"fmt"
	"os"
)

// The namespaces of the two vocabularies.
const (
	SitemapNS = "http://www.sitemaps.org/schemas/sitemap/0.9"
	RSNS      = "http://www.openarchives.org/rs/terms/"
)

// MD is an rs:md element: the attributes ResourceSync defines, and any
// other in Other.
type MD struct {
	Capability string     `xml:"capability,attr"`
	At         string     `xml:"at,attr"`
	Completed  string     `xml:"completed,attr"`
	From       string     `xml:"from,attr"`
	Until      string     `xml:"until,attr"`
	Change     string     `xml:"change,attr"`
	Datetime   string     `xml:"datetime,attr"`
	Hash       string     `xml:"hash,attr"`
	Length     string     `xml:"length,attr"`
	Type       string     `xml:"type,attr"`
	Path       string     `xml:"path,attr"`
	Encoding   string     `xml:"encoding,attr"`
	Other      []xml.Attr `xml:",any,attr"`
}

// Link is an rs:ln element: the attributes ResourceSync defines, and any
// other in Other.
type Link struct {
	Rel      string     `xml:"rel,attr"`
	Href     string     `xml:"href,attr"`
	Type     string     `xml:"type,attr"`
	Hash     string     `xml:"hash,attr"`
	Length   string     `xml:"length,attr"`
	Modified string     `xml:"modified,attr"`
	Path     string     `xml:"path,attr"`
	Pri      string     `xml:"pri,attr"`
	Encoding string     `xml:"encoding,attr"`
	Other    []xml.Attr `xml:",any,attr"`
}

// Entry is a <url> or <sitemap> element.
type Entry struct {
	Loc     string `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 loc"`
	Lastmod string `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 lastmod"`
	MDs     []MD   `xml:"http://www.openarchives.org/rs/terms/ md"`
	Links   []Link `xml:"http://www.openarchives.org/rs/terms/ ln"`
}

// MD returns the entry's first rs:md, or a zero MD.
func (e *Entry) MD() MD {
	if len(e.MDs) == 0 {
		return MD{}
	}
	return e.MDs[0]
}

// Doc is a document: a <urlset> or a <sitemapindex>.
type Doc struct {
	XMLName  xml.Name
	MDs      []MD    `xml:"http://www.openarchives.org/rs/terms/ md"`
	Links    []Link  `xml:"http://www.openarchives.org/rs/terms/ ln"`
	URLs     []Entry `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 url"`
	Sitemaps []Entry `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 sitemap"`
}

// MD returns the document's first rs:md, or a zero MD.
func (d *Doc) MD() MD {
	if len(d.MDs) == 0 {
		return MD{}
	}
	return d.MDs[0]
}

// Entries returns the <url> entries, then the <sitemap> entries.
func (d *Doc) Entries() []Entry {
	return append(append([]Entry{}, d.URLs...), d.Sitemaps...)
}

// Link returns the href of the document's first rs:ln of relation rel,
// or "".
func (d *Doc) Link(rel string) string {
	for _, l := range d.Links {
		if l.Rel == rel {
			return l.Href
		}
	}
	return ""
}

// ErrNotSitemap is Parse's error for well-formed XML whose root is not in
// the Sitemap namespace: a resource, not a document.
var ErrNotSitemap = errors.New("not a Sitemap document")

// Parse reads a document whose root is in the Sitemap namespace.
func Parse(data []byte) (*Doc, error) {
	var d Doc
	if err := xml.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	if d.XMLName.Space != SitemapNS {
		return nil, fmt.Errorf("%w: its root is {%s}%s", ErrNotSitemap, d.XMLName.Space, d.XMLName.Local)
	}
	return &d, nil
}

// ReadFile reads the document in the file at path.
func ReadFile(path string) (*Doc, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// Attrs returns the attributes of m that are set, by their names: the
// defined ones in the order above, then the others.
func (m MD) Attrs() []xml.Attr {
	return attrs([]string{"capability", "at", "completed", "from", "until", "change", "datetime", "hash", "length", "type", "path", "encoding"},
		[]string{m.Capability, m.At, m.Completed, m.From, m.Until, m.Change, m.Datetime, m.Hash, m.Length, m.Type, m.Path, m.Encoding}, m.Other)
}

// Attrs returns the attributes of l that are set, by their names: the
// defined ones in the order above, then the others.
func (l Link) Attrs() []xml.Attr {
	return attrs([]string{"rel", "href", "type", "hash", "length", "modified", "path", "pri", "encoding"},
		[]string{l.Rel, l.Href, l.Type, l.Hash, l.Length, l.Modified, l.Path, l.Pri, l.Encoding}, l.Other)
}

func attrs(names, values []string, other []xml.Attr) []xml.Attr {
	var out []xml.Attr
	for i, v := range values {
		if v != "" {
			out = append(out, xml.Attr{Name: xml.Name{Local: names[i]}, Value: v})
		}
	}
	return append(out, other...)
}
