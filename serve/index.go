package serve

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
)

// resource is what the Resource Lists publish about one resource.
type resource struct {
	lastmod time.Time
	typ     string
	links   []string // the Capability Lists of the sets that list it
}

// index maps output paths of resources to what the Resource Lists say of
// them. It remembers the stat of every list file it read, or tried to, so
// that it can tell when it is stale.
type index struct {
	resources map[string]*resource
	stamps    map[string]stamp
}

// stamp identifies one version of a file; the zero stamp is a missing
// file.
type stamp struct {
	size, mtime int64
	ino         uint64
}

func stampOf(info fs.FileInfo) stamp {
	s := stamp{size: info.Size(), mtime: info.ModTime().UnixNano()}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		s.ino = st.Ino
	}
	return s
}

// fresh reports whether no list file changed since the index was read.
func (x *index) fresh(root *os.Root) bool {
	for p, s := range x.stamps {
		var cur stamp
		if info, err := root.Stat(p); err == nil {
			cur = stampOf(info)
		}
		if cur != s {
			return false
		}
	}
	return true
}

// readIndex reads the Resource List of every set, and the parts of those
// that are indexes.
func readIndex(root *os.Root, s *site) (*index, error) {
	x := &index{resources: map[string]*resource{}, stamps: map[string]stamp{}}
	for _, set := range s.sets {
		capURL := layout.URL(s.base, layout.CapabilityList(set))
		add := func(e entry) {
			p, ok := layout.PathFromURL(s.resBase, e.Loc)
			if !ok {
				return // published elsewhere: nothing of ours to serve
			}
			r := x.resources[p]
			if r == nil {
				r = &resource{typ: e.MD.Type}
				r.lastmod, _ = time.Parse(time.RFC3339, e.Lastmod) // zero if absent: the file's mtime serves
				x.resources[p] = r
			}
			r.links = append(r.links, capURL)
		}
		parts, err := x.readList(root, layout.ResourceList(set), add)
		if err != nil {
			return nil, err
		}
		for _, loc := range parts {
			p, ok := layout.PathFromURL(s.base, loc)
			if !ok {
				return nil, fmt.Errorf("serve: Resource List Index of set %s links to %s, outside %s", set, loc, s.base)
			}
			if _, err := x.readList(root, p, add); err != nil {
				return nil, err
			}
		}
	}
	return x, nil
}

// entry is a <url> of a Resource List or a <sitemap> of its index.
type entry struct {
	Loc     string `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 loc"`
	Lastmod string `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 lastmod"`
	MD      struct {
		Type string `xml:"type,attr"`
	} `xml:"http://www.openarchives.org/rs/terms/ md"`
}

// readList streams the list at p, passing each <url> to add, and returns
// the locations of the parts when it is an index. A missing list (no build
// yet) is empty.
func (x *index) readList(root *os.Root, p string, add func(entry)) (parts []string, err error) {
	f, err := root.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		x.stamps[p] = stamp{}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	x.stamps[p] = stampOf(info)
	d := xml.NewDecoder(f)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return parts, nil
		}
		if err != nil {
			return nil, fmt.Errorf("serve: read %s: %w", p, err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Space != rs.SitemapNS || se.Name.Local != "url" && se.Name.Local != "sitemap" {
			continue
		}
		var e entry
		if err := d.DecodeElement(&e, &se); err != nil {
			return nil, fmt.Errorf("serve: read %s: %w", p, err)
		}
		if se.Name.Local == "sitemap" {
			parts = append(parts, e.Loc)
		} else {
			add(e)
		}
	}
}
