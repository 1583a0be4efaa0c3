package checker

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// # Where a Source is read
//
// A Source names its documents and resources by the URLs Destinations
// fetch. A check reads them there, or where they stand for those URLs:
//
//   - a folder: the output folder, at its base URL (CheckDir);
//   - a staging host: a URL the Source is served at before it is
//     published at its base URL (CheckURL with Options.BaseURL), every URL
//     under the base URL read at the same place under the staging URL;
//   - the resources of a Source built with copy_resources = false, which
//     are published under resource_base_url, apart from the documents and
//     not in the output folder (Options.ResourceBaseURL): they are part of
//     the Source, read at their own URLs, or where Options.Resources says
//     they are, a folder (the source folder) or a URL.
//
// Findings name documents and resources by the URLs the Source gives
// them, whatever they were read from.

// rebased reads the URLs under from at the same place under to. What it
// returns keeps the URLs under from, so that a redirect within to is
// reported as one within the Source.
type rebased struct {
	from, to string // both end with "/"
	next     Fetcher
}

func (r rebased) Fetch(ctx context.Context, rawURL string) (*Resource, error) {
	rest, ok := strings.CutPrefix(rawURL, r.from)
	if !ok {
		return nil, fmt.Errorf("%s is not under %s: %w", rawURL, r.from, ErrNotFound)
	}
	res, err := r.next.Fetch(ctx, r.to+rest)
	if err != nil {
		return nil, err
	}
	if after, ok := strings.CutPrefix(res.URL, r.to); ok {
		res.URL = r.from + after
	}
	return res, nil
}

// mountResources sets how the walker reads the resources under
// opts.ResourceBaseURL, when set, and returns what releases it.
func (w *walker) mountResources() (release func(), err error) {
	base, where := w.opts.ResourceBaseURL, w.opts.Resources
	switch {
	case base == "":
		return func() {}, nil
	case where == "":
		w.resources = w.remote
	case isHTTP(where):
		w.resources = rebased{from: base, to: withSlash(where), next: w.remote}
	default:
		root, err := os.OpenRoot(where)
		if err != nil {
			return nil, fmt.Errorf("resources: %w", err)
		}
		w.resources = dirFetcher{base: base, dir: where, root: root}
		return func() { root.Close() }, nil
	}
	return func() {}, nil
}

// isHTTP reports whether s is an http or https URL rather than a path.
func isHTTP(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// withSlash returns u ending with "/".
func withSlash(u string) string {
	if strings.HasSuffix(u, "/") {
		return u
	}
	return u + "/"
}
