package deploy

import (
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"strings"
	"time"

	"github.com/rsgen/rsgen/hosting"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
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
// whose files (output paths) are rels, served at base with the documents
// of sets. Content-Type comes from rsgen's media-type table
// (layout.ContentType); a resource whose name says nothing gets the type
// its set's Resource List publishes for it, and a memento the type the
// list gives its link, else its resource's; none when the list gives none
// (the resource was deleted, or its type has no place in a list).
// Cache-Control is that of the hosting files (hosting.CacheOf): immutable
// for what rsgen never rewrites, short ("public, max-age=" shortCache) for
// the other files rsgen writes, none for the resources. Whether a segment
// document is the open one, which hosting.CacheOf needs, is read from its
// head (it has no until).
//
// It reads rels once, keeping none of them but the open segment
// documents; then it reads the heads of the segment documents, and the
// Resource Lists when some file needs them, once, here.
func OutputPolicy(root *os.Root, rels iter.Seq[string], base string, sets []string, shortCache time.Duration) (HeaderPolicy, error) {
	open := map[string]bool{}
	untyped := false
	for rel := range rels {
		switch {
		case hosting.MayBeOpen(rel):
			isOpen, err := openSegment(root, rel)
			if err != nil {
				return nil, err
			}
			if isOpen {
				open[rel] = true
			}
		case layout.ContentType(rel) == "":
			untyped = true
		}
	}
	listed := map[string]string{}
	if untyped {
		var err error
		if listed, err = listedTypes(root, base, sets); err != nil {
			return nil, err
		}
	}
	return func(rel string) Headers {
		h := Headers{ContentType: layout.ContentType(rel)}
		if h.ContentType == "" {
			h.ContentType = listed[rel]
		}
		if p, ok := resourceOfMemento(rel); ok && h.ContentType == "" {
			h.ContentType = listed[p]
		}
		h.CacheControl = hosting.CacheControl(hosting.CacheOf(rel, open[rel]), shortCache)
		return h
	}, nil
}

// resourceOfMemento returns the source path of the resource whose version
// the output file at rel is, when rel is a memento (layout.Memento).
func resourceOfMemento(rel string) (string, bool) {
	rest, ok := strings.CutPrefix(rel, layout.DocumentsDir+"/mementos/")
	stamp, p, cut := strings.Cut(rest, "/")
	if !ok || !cut {
		return "", false
	}
	t, err := time.Parse("20060102150405", stamp)
	if err != nil || layout.Memento(t, p) != rel {
		return "", false
	}
	return p, true
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

// listedTypes returns the media types the Resource Lists of sets publish
// for the output paths whose names say nothing (layout.ContentType): the
// type of an entry's resource, and the type of its links (its mementos).
// Only those are kept, with the types shared: the others' come from their
// names.
func listedTypes(root *os.Root, base string, sets []string) (map[string]string, error) {
	types := map[string]string{}
	shared := map[string]string{}
	note := func(u, typ string) {
		rel, ok := layout.PathFromURL(base, u)
		if !ok || typ == "" || layout.ContentType(rel) != "" {
			return
		}
		if s, ok := shared[typ]; ok {
			typ = s
		} else {
			shared[typ] = typ
		}
		types[rel] = typ
	}
	for _, set := range sets {
		err := readList(root, layout.ResourceList(set), base, true, func(e *rs.Entry) {
			note(e.Loc, e.MD.Type)
			for _, ln := range e.Links {
				note(ln.Href, ln.Type)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return types, nil
}

// readList calls fn with every entry of the Resource List at rel, through
// its parts when it is an index (and index says one may be). A set without
// a Resource List (none published yet) has no entries.
func readList(root *os.Root, rel, base string, index bool, fn func(*rs.Entry)) error {
	f, err := root.Open(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", rel, err)
	}
	defer f.Close()
	r := rs.NewReader(f)
	head, err := r.Head()
	if err != nil {
		return fmt.Errorf("read %s: %w", rel, err)
	}
	if head.Root == rs.SitemapIndex && !index {
		return fmt.Errorf("read %s: a part of a Resource List Index is itself an index", rel)
	}
	var parts []string
	err = r.Entries(func(e *rs.Entry) error {
		if head.Root == rs.SitemapIndex {
			if part, ok := layout.PathFromURL(base, e.Loc); ok {
				parts = append(parts, part)
			}
			return nil
		}
		fn(e)
		return nil
	})
	if err != nil {
		return fmt.Errorf("read %s: %w", rel, err)
	}
	for _, part := range parts {
		if err := readList(root, part, base, false, fn); err != nil {
			return err
		}
	}
	return nil
}
