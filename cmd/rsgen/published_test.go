package main

import (
	"encoding/xml"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// The end-to-end tests read what rsgen published with encoding/xml, not
// with rsgen's own code.

// testBase is the base URL of the sites the end-to-end tests build.
const testBase = "https://data.example.org/"

// publishedDoc is a sitemap document: its url or its sitemap entries.
type publishedDoc struct {
	XMLName xml.Name
	URLs    []publishedEntry `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 url"`
	Maps    []publishedEntry `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 sitemap"`
	entries []publishedEntry
}

type publishedEntry struct {
	Loc string `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 loc"`
	MD  struct {
		Change   string `xml:"change,attr"`
		Datetime string `xml:"datetime,attr"`
		Hash     string `xml:"hash,attr"`
	} `xml:"http://www.openarchives.org/rs/terms/ md"`
}

// readPublished reads the document at output path rel of out.
func readPublished(out, rel string) (*publishedDoc, error) {
	data, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	var d publishedDoc
	if err := xml.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("%s does not parse: %w", rel, err)
	}
	d.entries = append(d.URLs, d.Maps...)
	return &d, nil
}

// publishedPath returns the output path of a URI under testBase.
func publishedPath(loc string) (string, error) {
	rest, ok := strings.CutPrefix(loc, testBase)
	if !ok {
		return "", fmt.Errorf("%s is not under %s", loc, testBase)
	}
	return url.PathUnescape(rest)
}

// publishedEvent is one entry of a Change List, with the list's URI and
// the path of the resource it is about.
type publishedEvent struct {
	List, Path string
	publishedEntry
}

// publishedEvents returns the events of the Change Lists that the Change
// List Index of the default set lists, in its order.
func publishedEvents(out string) ([]publishedEvent, error) {
	idx, err := readPublished(out, "resourcesync/default/changelist.xml")
	if err != nil {
		return nil, err
	}
	var events []publishedEvent
	for _, list := range idx.entries {
		rel, err := publishedPath(list.Loc)
		if err != nil {
			return nil, err
		}
		cl, err := readPublished(out, rel)
		if err != nil {
			return nil, err
		}
		for _, e := range cl.entries {
			p, err := publishedPath(e.Loc)
			if err != nil {
				return nil, err
			}
			events = append(events, publishedEvent{List: list.Loc, Path: p, publishedEntry: e})
		}
	}
	return events, nil
}
