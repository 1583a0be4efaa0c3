package deploy

import (
	"fmt"
	"iter"
	"os"
	"time"

	"github.com/rsgen/rsgen/hosting"
	"github.com/rsgen/rsgen/layout"
)

// Headers are the HTTP headers an object is served with, on a store that
// keeps them. An empty field leaves the host's default.
type Headers struct {
	ContentType  string
	CacheControl string
}

// Immutable reports whether the headers say that the object never
// changes: such an object is written only where no object is yet.
func (h Headers) Immutable() bool { return h.CacheControl == hosting.ImmutableCacheControl }

// HeaderPolicy returns the headers of the output file at rel. A deploy asks
// it about every file on every run, so that a changed policy re-applies
// the headers of files whose bytes did not change.
type HeaderPolicy func(rel string) Headers

// OutputPolicy returns rsgen's header policy for the output folder root,
// whose files (output paths) are rels. Content-Type comes from rsgen's
// media-type table (layout.ContentType); a file whose name says nothing (a
// resource whose type was read from its bytes, and its mementos) gets
// the type types gives it, the one the last build recorded (and its lists
// and TimeMaps publish), none when it gives none. A memento keeps its
// type after its resource is deleted: its version's record still holds
// it. Cache-Control is that of the hosting files (hosting.CacheOf):
// immutable for what rsgen never rewrites, short ("public, max-age="
// shortCache) for the other files rsgen writes, none for the resources.
// Whether a segment document is the open one, which hosting.CacheOf
// needs, is read from its head (it has no until).
//
// It reads rels once, keeping none of them but the open segment
// documents, whose heads it reads.
func OutputPolicy(root *os.Root, rels iter.Seq[string], types map[string]string, shortCache time.Duration) (HeaderPolicy, error) {
	open := map[string]bool{}
	for rel := range rels {
		if hosting.MayBeOpen(rel) {
			isOpen, err := openSegment(root, rel)
			if err != nil {
				return nil, err
			}
			if isOpen {
				open[rel] = true
			}
		}
	}
	return func(rel string) Headers {
		h := Headers{ContentType: layout.ContentType(rel)}
		if h.ContentType == "" {
			h.ContentType = types[rel]
		}
		h.CacheControl = hosting.CacheControl(hosting.CacheOf(rel, open[rel]), shortCache)
		return h
	}, nil
}

// openSegment reports whether the document at rel is the open document of
// a Change List or Change Dump segment: one with no until. Other documents
// of the immutable step (manifests, archived lists) are never rewritten.
func openSegment(root *os.Root, rel string) (bool, error) {
	f, err := root.Open(rel)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", rel, err)
	}
	defer f.Close()
	open, err := hosting.IsOpenSegment(f)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", rel, err)
	}
	return open, nil
}
