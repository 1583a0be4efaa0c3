package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/rsgen/rsgen/internal/sitemaptest"
)

// The end-to-end tests read what rsgen published with the shared test
// reader (internal/sitemaptest), not with rsgen's own code.

// testBase is the base URL of the sites the end-to-end tests build.
const testBase = "https://data.example.org/"

// readPublished reads the document at output path rel of out.
func readPublished(out, rel string) (*sitemaptest.Doc, error) {
	data, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	d, err := sitemaptest.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s does not parse: %w", rel, err)
	}
	return d, nil
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
	sitemaptest.Entry
}

// publishedEvents returns the events of the Change Lists that the Change
// List Index of the default set lists, in its order.
func publishedEvents(out string) ([]publishedEvent, error) {
	idx, err := readPublished(out, "resourcesync/default/changelist.xml")
	if err != nil {
		return nil, err
	}
	var events []publishedEvent
	for _, list := range idx.Entries() {
		rel, err := publishedPath(list.Loc)
		if err != nil {
			return nil, err
		}
		cl, err := readPublished(out, rel)
		if err != nil {
			return nil, err
		}
		for _, e := range cl.Entries() {
			p, err := publishedPath(e.Loc)
			if err != nil {
				return nil, err
			}
			events = append(events, publishedEvent{List: list.Loc, Path: p, Entry: e})
		}
	}
	return events, nil
}
