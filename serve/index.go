package serve

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/rsgen/rsgen/internal/sysfile"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
)

// resource is what the Resource Lists publish about one resource.
type resource struct {
	lastmod time.Time
	typ     string
	links   []string // the Capability Lists of the sets that list it
}

// index is what the published documents say: the base URL, the sets the
// Source Description lists, and, by output path, the resources their
// Resource Lists list. It remembers the stat of every document it read,
// or tried to, so that it can tell when it is stale.
type index struct {
	base      string // "" when neither configured nor published yet
	basePath  string // the decoded path of base, "/" or "/a/b/"
	resources map[string]*resource
	// topics holds the notification topics the Capability Lists
	// advertise, by output path, with their hubs.
	topics map[string]string
	stamps map[string]stamp
	// shortCache is the site's short_cache, kept with the index so that a
	// request sees the configuration of one Reload.
	shortCache time.Duration
}

// stamp identifies one version of a file; the zero stamp is a missing
// file.
type stamp struct {
	size, mtime int64
	ino         uint64
}

func stampOf(info fs.FileInfo) stamp {
	return stamp{size: info.Size(), mtime: info.ModTime().UnixNano(), ino: sysfile.Inode(info)}
}

// fresh reports whether no document changed since the index was read.
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

// readIndex reads the Source Description, and the Resource List of every
// set it lists with the parts of those that are indexes. The base URL is
// s.base, else the one the Source Description was published under. A
// missing document (no build yet, or a build in progress that has not
// renamed it into place) is empty.
func readIndex(root *os.Root, s *site) (*index, error) {
	x := &index{base: s.base, resources: map[string]*resource{}, topics: map[string]string{}, stamps: map[string]stamp{}, shortCache: s.shortCache}
	sets, err := x.readSourceDescription(root)
	if err != nil {
		return nil, err
	}
	if x.basePath, err = basePath(x.base); err != nil {
		return nil, err
	}
	resBase := s.resBase
	if resBase == "" {
		resBase = x.base
	}
	for _, set := range sets {
		if err := x.readResourceList(root, set, resBase); err != nil {
			return nil, err
		}
		if err := x.readChannels(root, set); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// readChannels reads the notification channels the Capability List of
// set advertises: the topics under the base URL, each with its hub, which
// the topic names in its Link header.
func (x *index) readChannels(root *os.Root, set string) error {
	_, err := x.read(root, layout.CapabilityList(set), func(_ *rs.Head, e *rs.Entry) error {
		if e.MD.Capability != rs.CapChangeNotification && e.MD.Capability != rs.CapFrameworkNotification {
			return nil
		}
		p, ok := layout.PathFromURL(x.base, e.Loc)
		if !ok {
			return nil // a topic elsewhere: not ours to serve
		}
		for _, l := range e.Links {
			if l.Rel == rs.RelHub {
				x.topics[p] = l.Href
			}
		}
		return nil
	})
	return err
}

// readSourceDescription returns the names of the sets whose Capability
// Lists the Source Description lists under the base URL, and sets the base
// URL from it when none was configured. Entries under another base URL
// (an output built for another one) name no set of this one.
func (x *index) readSourceDescription(root *os.Root) ([]string, error) {
	published := x.base == "" // the base URL is the one published
	var sets []string
	head, err := x.read(root, layout.SourceDescription, func(_ *rs.Head, e *rs.Entry) error {
		base, set, ok := capabilityListOf(e.Loc)
		if !ok {
			return nil // not a Capability List rsgen writes
		}
		if published && x.base == "" {
			x.base = base
		}
		switch {
		case base != x.base && published:
			return fmt.Errorf("Capability Lists under %s and under %s", x.base, base)
		case base != x.base:
			return nil
		}
		sets = append(sets, set)
		return nil
	})
	if err != nil || head == nil {
		return nil, err
	}
	if head.Root != rs.URLSet || head.MD.Capability != rs.CapDescription {
		return nil, fmt.Errorf("serve: %s is not a Source Description (capability %q)", layout.SourceDescription, head.MD.Capability)
	}
	return sets, nil
}

// capabilityListOf splits the URL of a Capability List rsgen writes,
// B/resourcesync/S/capabilitylist.xml, into B and S.
func capabilityListOf(loc string) (base, set string, ok bool) {
	rest, ok := strings.CutSuffix(loc, "/capabilitylist.xml")
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '/')
	base, dir := rest[:i+1], rest[i+1:]
	base, ok = strings.CutSuffix(base, layout.DocumentsDir+"/")
	if !ok || dir == "" {
		return "", "", false
	}
	if _, err := layout.ParseBaseURL(base); err != nil || layout.URL(base, layout.CapabilityList(dir)) != loc {
		return "", "", false
	}
	return base, dir, true
}

// basePath returns the decoded path of base, "/" when base is empty.
func basePath(base string) (string, error) {
	if base == "" {
		return "/", nil
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("serve: base URL %s: %w", base, err)
	}
	return pathOf(u), nil
}

// readResourceList reads the Resource List of set, or its index and
// parts, into the index.
func (x *index) readResourceList(root *os.Root, set, resBase string) error {
	capURL := layout.URL(x.base, layout.CapabilityList(set))
	var parts []string
	add := func(_ *rs.Head, e *rs.Entry) error {
		p, ok := layout.PathFromURL(resBase, e.Loc)
		if !ok {
			return nil // published elsewhere: nothing of ours to serve
		}
		r := x.resources[p]
		if r == nil {
			r = &resource{typ: e.MD.Type, lastmod: e.Lastmod} // a zero lastmod: the file's mtime serves
			x.resources[p] = r
		}
		r.links = append(r.links, capURL)
		return nil
	}
	head, err := x.read(root, layout.ResourceList(set), func(h *rs.Head, e *rs.Entry) error {
		if h.Root == rs.URLSet {
			return add(h, e)
		}
		parts = append(parts, e.Loc)
		return nil
	})
	if err != nil || head == nil {
		return err
	}
	if head.Root != rs.SitemapIndex {
		return nil
	}
	for _, loc := range parts {
		p, ok := layout.PathFromURL(x.base, loc)
		if !ok {
			return fmt.Errorf("serve: the Resource List Index of set %s links to %s, outside %s", set, loc, x.base)
		}
		if _, err := x.read(root, p, add); err != nil {
			return err
		}
	}
	return nil
}

// read streams the document at p, passing its head and each entry to
// each, and returns the head; nil when p does not exist.
func (x *index) read(root *os.Root, p string, each func(*rs.Head, *rs.Entry) error) (*rs.Head, error) {
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
	rd := rs.NewReader(f)
	head, err := rd.Head()
	if err == nil {
		err = rd.Entries(func(e *rs.Entry) error { return each(head, e) })
	}
	if err != nil {
		return nil, fmt.Errorf("serve: read %s: %w", p, err)
	}
	return head, nil
}

// PublishedBaseURL returns the base URL under which the output folder dir
// was built: the one its Source Description's Capability Lists are
// under. It fails when dir holds no Source Description written by rsgen.
func PublishedBaseURL(dir string) (string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", fmt.Errorf("serve: %w", err)
	}
	defer root.Close()
	x := &index{stamps: map[string]stamp{}}
	sets, err := x.readSourceDescription(root)
	switch {
	case err != nil:
		return "", err
	case x.stamps[layout.SourceDescription] == stamp{}:
		return "", fmt.Errorf("serve: no Source Description in %s", dir)
	case len(sets) == 0:
		return "", fmt.Errorf("serve: the Source Description in %s lists no Capability List rsgen writes", dir)
	}
	return x.base, nil
}
