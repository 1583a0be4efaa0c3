package generator

import (
	"fmt"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
)

// Configured sizes
//
// Some of what the configuration says goes into documents as it is: the
// base URL begins the URI of every document, and the describedby URLs of
// the Source and of each set, the mirrors' base URLs, the via, the
// profiles of metadata and the collections' hrefs are written into links.
// A value too long for a document passes every other check, and would
// fail the build half way ("document is full") after it created the
// output folder. checkConfiguredSizes refuses it first, as a configuration
// error, before the build writes anything.

// configuredURL is a URL of the configuration that documents carry.
type configuredURL struct {
	key, url string
}

// configuredURLs returns the URLs of cfg that documents carry, by key.
func configuredURLs(cfg *config.Config) []configuredURL {
	urls := []configuredURL{{"describedby", cfg.DescribedBy}}
	for i, s := range cfg.SetsOrDefault() {
		set := func(key string) string { return fmt.Sprintf("set %d (%s): %s", i+1, s.Name, key) }
		urls = append(urls, configuredURL{set("describedby"), s.DescribedBy}, configuredURL{set("via"), s.Via})
		for _, m := range s.Mirrors {
			urls = append(urls, configuredURL{set("mirror.base_url"), m.BaseURL})
		}
		for _, m := range s.Metadata {
			urls = append(urls, configuredURL{set("metadata.profile"), m.Profile})
		}
		for _, c := range s.Collections {
			urls = append(urls, configuredURL{set("collection.href"), c.Href})
		}
	}
	return urls
}

// docPathBound bounds the length of the output path of every document of
// set, but the versions' (whose paths hold the resources'): the longest is
// a part of an archived document, as estimated for archives' entries.
func docPathBound(set string) int { return len(layout.SetDir(set)) + 80 }

// checkConfiguredSizes refuses a configuration whose documents cannot hold
// what it says, with the base URL base and documents of at most lim: a URL
// longer than a <loc> may be, a base URL that leaves a document's URI no
// room, or sets too many, or too long described, for the Source
// Description.
func checkConfiguredSizes(cfg *config.Config, base string, lim limits) error {
	for _, u := range configuredURLs(cfg) {
		if len(u.url) > rs.MaxLocLength {
			return &config.Error{Msg: fmt.Sprintf("%s: a URL of %d characters: the documents that carry it take URLs of at most %d (the length of a <loc>)",
				u.key, len(u.url), rs.MaxLocLength)}
		}
	}
	// The Source Description: a header with the Source's describedby,
	// and an entry per set, with its own.
	size := int64(len(cfg.DescribedBy) + 500)
	for _, s := range cfg.SetsOrDefault() {
		if n := len(base) + docPathBound(s.Name); n > rs.MaxLocLength {
			return &config.Error{Msg: fmt.Sprintf("base_url: %d characters: the URIs of set %s's documents would be longer than the %d characters of a <loc>",
				len(base), s.Name, rs.MaxLocLength)}
		}
		size += int64(len(base) + docPathBound(s.Name) + max(len(s.DescribedBy), len(cfg.DescribedBy)) + 200)
	}
	if n := len(cfg.SetsOrDefault()); n > lim.entries || size > lim.bytes {
		return &config.Error{Msg: fmt.Sprintf("set: %d sets: the Source Description, which lists them with their describedby, would be larger than a document may be (%d entries, %d bytes)",
			n, lim.entries, lim.bytes)}
	}
	return nil
}
