package generator

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html"
	"net/url"
	"path/filepath"
	"slices"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
)

// site is what a build publishes and how, resolved once from the
// configuration and the options (resolve): the base URLs, parsed once,
// the digests, and the sets with their dumps, archives and links. Every
// stage reads it; none changes it.
type site struct {
	cfg     *config.Config
	opts    Options // with the limits resolved
	algs    []rs.HashAlgorithm
	sets    []*set
	base    string  // base URL of the documents, with a trailing slash
	baseURL url.URL // base, parsed
	resBase string  // base URL of the resources, with a trailing slash
	// tags identifies the tags html_link inserts into HTML pages (see
	// tagsConfig); "" when it inserts none.
	tags string
	// digest identifies everything besides the source and the clock that
	// shapes the output (outputDigest).
	digest string
}

// resolve returns the site of a configuration that config.Validate
// accepted, and the options of a build.
func resolve(cfg *config.Config, opts Options) (*site, error) {
	base, err := layout.ParseBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("generator: base_url: %w", err)
	}
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("generator: base_url: %w", err)
	}
	if opts.limits == (limits{}) {
		opts.limits = limits{rs.MaxEntries, rs.MaxBytes}
	}
	if err := checkConfiguredSizes(cfg, base, opts.limits); err != nil {
		return nil, err
	}
	s := &site{cfg: cfg, opts: opts, algs: cfg.Hashes, sets: newSets(cfg), base: base, baseURL: *u, resBase: resourceBase(cfg)}
	s.tags = s.tagsConfig()
	s.digest = outputDigest(cfg, opts)
	return s, nil
}

// notify sends n to Options.Notify, if any.
func (s *site) notify(n Note) {
	if s.opts.Notify != nil {
		s.opts.Notify(n)
	}
}

// warn sends a warning of the given code (a Warn constant).
func (s *site) warn(code, path, msg string) {
	s.notify(Note{Kind: NoteWarning, Code: code, Path: path, Msg: msg})
}

// docURL returns the URI of a document at output path rel.
func (s *site) docURL(rel string) string { return layout.URL(s.base, rel) }

// outPath returns the file at output path rel.
func (s *site) outPath(rel string) string { return filepath.Join(s.cfg.Out, filepath.FromSlash(rel)) }

// resURL returns the URI of the resource at source path p.
func (s *site) resURL(p string) string { return layout.URL(s.resBase, p) }

// upLink returns the link up from a document of set st to its Capability
// List.
func (s *site) upLink(st *set) rs.Link {
	return rs.Link{Rel: rs.RelUp, Href: s.docURL(layout.CapabilityList(st.Name))}
}

// describedBy returns the URL of the description of set st, or of the
// Source when st is nil (§8, §9): the set's describedby, else the
// Source's, else, when the document browser is published, its page, which
// describes the Source from its own documents. "" when there is none.
func (s *site) describedBy(st *set) string {
	switch {
	case st != nil && st.DescribedBy != "":
		return st.DescribedBy
	case s.cfg.DescribedBy != "":
		return s.cfg.DescribedBy
	case s.cfg.Publish.Viewer:
		return s.docURL(layout.ViewerPage)
	}
	return ""
}

// archivesLink returns the rel="archives" link that set st's live
// documents of a capability carry, when that capability's archive is
// published: it is archived, and the archive lists something (no empty
// document but the open Change List is published).
func (s *site) archivesLink(st *set, capability string, published bool) []rs.Link {
	if !published || !slices.Contains(st.archives, capability) {
		return nil
	}
	return []rs.Link{{Rel: rs.RelArchives, Href: s.docURL(layout.Archive(st.Name, capability))}}
}

// versioned reports whether the resource at source path p is in a set
// that keeps versions, and whether in one that publishes patches.
func (s *site) versioned(p string) (keep, patches bool) {
	for _, st := range s.sets {
		if st.KeepVersions && st.Contains(p) {
			keep, patches = true, patches || st.Patches
		}
	}
	return keep, patches
}

// capabilityLists returns the URLs of the Capability Lists of the sets
// that hold source path p.
func (s *site) capabilityLists(p string) []string {
	var urls []string
	for _, st := range s.sets {
		if st.Contains(p) {
			urls = append(urls, s.docURL(layout.CapabilityList(st.Name)))
		}
	}
	return urls
}

// tagsVersion changes when the form of the inserted tags does, so that a
// build of a newer rsgen writes every rewritten page again.
const tagsVersion = "1"

// tagsConfig identifies what the tags linkTags inserts depend on beside a
// page's path: html_link and copy_resources, the base URL of the
// documents and the sets' names and selections; "" when nothing is
// inserted. The state keeps it (snapshot.State.HTMLLink).
func (s *site) tagsConfig() string {
	if !s.cfg.Publish.HTMLLink || !s.cfg.CopyResources {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%q\n", tagsVersion, s.base)
	for _, st := range s.sets {
		fmt.Fprintf(h, "%q %q %q %q\n", st.Name, st.prefix, st.Include, st.Exclude)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// linkTags returns the tags to insert into the HTML resource at source
// path p, or nil when it is published as it is.
func (s *site) linkTags(p string) []byte {
	if s.tags == "" || layout.TypeByName(p) != layout.TypeHTML {
		return nil
	}
	var tags []byte
	for _, u := range s.capabilityLists(p) {
		tags = fmt.Appendf(tags, `<link rel="resourcesync" href="%s">`, html.EscapeString(u))
	}
	return tags
}

// rewrites reports whether the resource at source path p is published
// with other bytes than its source file's.
func (s *site) rewrites(p string) bool { return s.linkTags(p) != nil }
