// Package hosting writes the files that tell each host how to serve an
// output folder ([publish] targets), and robots.txt ([publish] robots).
//
// Each host learns from its own file how to serve the output: the Source
// Description, which has no extension, as XML; a Link: rel="resourcesync"
// header on every resource of a set, to the set's Capability List; and the
// cache policy (CacheOf), which rsgen deploy applies to S3 objects and
// rsgen serve to its responses too:
// what rsgen never rewrites (versions of resources, dump packages, which
// are named by their content, manifests, closed and archived documents) is
// cached for a year as immutable; a notification topic is revalidated on
// every request (no-cache), so that a hub that fetches it gets the newest
// notification, and is served with the Link headers naming itself and the
// hub (Rule.Header); every other file rsgen writes changes from build to
// build and is cached for [publish] short_cache.
//
// All the files come from one Plan, which the generator derives from a
// build's documents and sets, so the hosts agree. Every name in a file is
// quoted or escaped for its host, so that no file name becomes a
// directive (FuzzHostingFiles).
package hosting

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
)

// RobotsFile is robots.txt, written with [publish] robots.
const RobotsFile = "robots.txt"

// ImmutableCacheControl is the Cache-Control of what is never rewritten.
const ImmutableCacheControl = "public, max-age=31536000, immutable"

// cloudflareMaxRules is the most rules Cloudflare Pages reads from a
// _headers file.
const cloudflareMaxRules = 100

// apacheManyRules is how many rules a .htaccess holds before a warning
// says what they cost: Apache took about 16 µs a rule on each request
// (1.6 s for 100,000, 2026-11-26), so 5,000 rules cost a request 80 ms. A
// set of a whole tree costs a rule per top folder (846 for
// /usr/share/doc here), which stays below.
const apacheManyRules = 5000

// nginxManyRules is how many locations the nginx snippet holds before a
// warning says what they cost: nginx took about 7.6 KB of memory and 54 µs
// to load a location (760 MB and 5.4 s for 100,000, 2026-11-26).
const nginxManyRules = 20000

// Files returns the output paths of the hosting files the configuration
// asks for, in the order they are written.
func Files(p *config.Publish) []string {
	var files []string
	for _, f := range []struct {
		name string
		on   bool
	}{
		{layout.NoJekyllFile, p.HasTarget(config.TargetGitHubPages)},
		{layout.HeadersFile, p.HasTarget(config.TargetNetlify) || p.HasTarget(config.TargetCloudflarePages)},
		{layout.NginxFile, p.HasTarget(config.TargetNginx)},
		{layout.HtaccessFile, p.HasTarget(config.TargetApache)},
		{RobotsFile, p.Robots},
	} {
		if f.on {
			files = append(files, f.name)
		}
	}
	return files
}

// Cache is how long a host may keep a file.
type Cache uint8

const (
	CacheHost      Cache = iota // the host's default
	CacheShort                  // [publish] short_cache
	CacheImmutable              // a year, immutable
	// CacheRevalidate is for a notification topic: a hub that fetches it
	// after a publish ping must get the newest notification, never a
	// cached one.
	CacheRevalidate
)

// Rule says how hosts serve one output path, or, when the path ends
// in "/", a folder and everything below it. The rules of a plan never
// overlap, so that no host has to merge two of them, but for a type rule:
// the rule of one file that gives nothing but its ContentType (a resource
// whose name tells no type, which the build sniffed), which may lie in a
// folder's rule; hosts serve that file with the folder's headers and its
// own type.
type Rule struct {
	Path        string // an output path
	ContentType string // "" leaves the host's own
	Cache       Cache
	Links       []string // Capability Lists, for Link: rel="resourcesync"
	ClosedFrom  int64    // for a closed segment document, its segment's from
	// Header holds more headers, sent as they are: the Link header of a
	// notification topic (notify.TopicHeaders), say. Its values are
	// URLs and quoted words, which every host file can carry.
	Header http.Header
}

// extraHeaders returns the rule's Header as "Name", value pairs, in the
// order of their names, so that every file writes them alike.
func (r *Rule) extraHeaders() [][2]string {
	var out [][2]string
	for _, name := range slices.Sorted(maps.Keys(r.Header)) {
		for _, v := range r.Header[name] {
			out = append(out, [2]string{name, v})
		}
	}
	return out
}

// Folder reports whether the rule is a folder's.
func (r *Rule) Folder() bool { return strings.HasSuffix(r.Path, "/") }

// typeOnly reports whether r is a type rule (see Rule).
func (r *Rule) typeOnly() bool {
	return !r.Folder() && r.ContentType != "" && r.Cache == CacheHost && len(r.Links) == 0 && len(r.Header) == 0
}

// Plan is what every hosting file says, in its own syntax.
type Plan struct {
	BasePath   string        // the decoded path of base_url, "/" or "/a/b/"
	Rules      []Rule        // sorted by layout.ComparePaths
	Hidden     []string      // output paths no host should serve: the hosting files
	ShortCache time.Duration // [publish] short_cache
	// Cloudflare says the _headers file is read by Cloudflare Pages,
	// which reads at most cloudflareMaxRules rules.
	Cloudflare bool
	// Sitemaps are the URIs robots.txt names: the Resource Lists.
	Sitemaps []string
}

// CacheOf returns how long hosts may keep the output file at rel, for the
// hosting files, rsgen deploy and rsgen serve alike: immutable for what rsgen never
// rewrites (the versions of resources, and the files of
// layout.StepImmutable but the open document of a Change List or Change
// Dump segment, which open says rel is); short for every other file rsgen
// writes (the Source Description and everything under
// layout.DocumentsDir) but the notification topics, revalidated every
// time; the host's default for the resources.
func CacheOf(rel string, open bool) Cache {
	switch step := layout.PublishStep(rel); {
	case layout.IsTopic(rel):
		return CacheRevalidate
	case step == layout.StepVersions || step == layout.StepImmutable && !open:
		return CacheImmutable
	case rel == layout.SourceDescription || strings.HasPrefix(rel, layout.DocumentsDir+"/"):
		return CacheShort
	}
	return CacheHost
}

// MayBeOpen reports whether the output file at rel may be the open
// document of a Change List or Change Dump segment, which only its head
// tells (IsOpenSegment) and which CacheOf needs to know.
func MayBeOpen(rel string) bool {
	return layout.PublishStep(rel) == layout.StepImmutable && layout.ContentType(rel) == layout.TypeXML
}

// IsOpenSegment reports whether the document r holds is the open document
// of a Change List or Change Dump segment: one with no until. It reads
// only the document's head. Other documents of the immutable step
// (manifests, archived lists) are never rewritten.
func IsOpenSegment(r io.Reader) (bool, error) {
	head, err := rs.NewReader(r).Head()
	if err != nil {
		return false, err
	}
	capability := head.MD.Capability
	return (capability == rs.CapChangeList || capability == rs.CapChangeDump) && head.MD.Until.IsZero(), nil
}

// CacheControl returns the Cache-Control value of c, "" for the host's
// default; short is [publish] short_cache.
func CacheControl(c Cache, short time.Duration) string {
	switch c {
	case CacheShort:
		return fmt.Sprintf("public, max-age=%d", int64(short/time.Second))
	case CacheImmutable:
		return ImmutableCacheControl
	case CacheRevalidate:
		return "no-cache"
	}
	return ""
}

// cacheControl returns the Cache-Control value of a rule, or "".
func (p *Plan) cacheControl(r *Rule) string { return CacheControl(r.Cache, p.ShortCache) }

// linkValue returns the value of a Link header to a Capability List.
func linkValue(capabilityList string) string { return "<" + capabilityList + `>; rel="resourcesync"` }

// Write writes the hosting file at output path file (one of Files) for
// plan. warn is told what a file cannot say.
func Write(w *bufio.Writer, file string, plan *Plan, warn func(file, msg string)) error {
	switch file {
	case layout.NoJekyllFile:
		return nil // its presence is all GitHub Pages reads
	case layout.HeadersFile:
		return writeHeaders(w, plan, warn)
	case layout.NginxFile:
		return writeNginx(w, plan, warn)
	case layout.HtaccessFile:
		return writeHtaccess(w, plan, warn)
	case RobotsFile:
		return writeRobots(w, plan, warn)
	}
	return fmt.Errorf("hosting: no such file %s", file)
}
