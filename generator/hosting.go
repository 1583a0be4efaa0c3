package generator

import (
	"bufio"
	"fmt"
	"io"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
)

// Hosting files ([publish] targets, robots)
//
// Each host learns from its own file how to serve the output: the Source
// Description, which has no extension, as XML; a Link: rel="resourcesync"
// header on every resource of a set, to the set's Capability List; and the
// cache policy. Closed Change Lists, closed Change Dumps and dump packages
// are never rewritten (packages are named by their content), so hosts may
// cache them for a year as immutable. Every other document changes from
// build to build and is cached for [publish] short_cache.
//
// All the files come from one plan (hostPlan), so the hosts agree. The
// files are written after the documents, at the top of the output folder,
// and recorded as this build's outputs: a target turned off has its file
// removed by the next build. They are never resources; a source file at
// the same path fails the build, as one at a document's path does.

// The hosting files, by output path (layout.HostingFiles), and robots.txt.
const (
	noJekyllFile = layout.NoJekyllFile
	headersFile  = layout.HeadersFile
	nginxFile    = layout.NginxFile
	htaccessFile = layout.HtaccessFile
	robotsFile   = "robots.txt" // [publish] robots
	cacheForever = "public, max-age=31536000, immutable"
)

// cloudflareMaxRules is the most rules Cloudflare Pages reads from a
// _headers file.
const cloudflareMaxRules = 100

// hostingFiles returns the output paths of the hosting files the
// configuration asks for, in the order they are written.
func (b *builder) hostingFiles() []string {
	p := &b.cfg.Publish
	var files []string
	for _, f := range []struct {
		name string
		on   bool
	}{
		{noJekyllFile, p.HasTarget(config.TargetGitHubPages)},
		{headersFile, p.HasTarget(config.TargetNetlify) || p.HasTarget(config.TargetCloudflarePages)},
		{nginxFile, p.HasTarget(config.TargetNginx)},
		{htaccessFile, p.HasTarget(config.TargetApache)},
		{robotsFile, p.Robots},
	} {
		if f.on {
			files = append(files, f.name)
		}
	}
	return files
}

// cacheClass is how long a host may keep a file.
type cacheClass uint8

const (
	cacheHost      cacheClass = iota // the host's default
	cacheShort                       // [publish] short_cache
	cacheImmutable                   // a year, immutable
)

// hostRule says how hosts serve one output path, or, when the path ends
// in "/", a folder and everything below it. The rules of a plan never
// overlap, so that no host has to merge two of them.
type hostRule struct {
	path        string
	contentType string // "" leaves the host's own
	cache       cacheClass
	links       []string // Capability Lists, for Link: rel="resourcesync"
	closedFrom  int64    // for a closed segment document, its segment's from
}

func (r *hostRule) folder() bool { return strings.HasSuffix(r.path, "/") }

// hostPlan is what every hosting file says, in its own syntax.
type hostPlan struct {
	basePath   string // the decoded path of base_url, "/" or "/a/b/"
	rules      []hostRule
	hidden     []string // hosting files no host should serve
	shortCache string   // Cache-Control value of cacheShort
}

// writeHosting writes the hosting files. It runs after the documents, so
// that the plan covers every document of this build.
func (b *builder) writeHosting() error {
	files := b.hostingFiles()
	if len(files) == 0 {
		return nil
	}
	plan := b.hostPlan(files)
	writers := map[string]func(*bufio.Writer, *hostPlan) error{
		noJekyllFile: func(*bufio.Writer, *hostPlan) error { return nil },
		headersFile:  b.writeHeaders,
		nginxFile:    writeNginx,
		htaccessFile: writeHtaccess,
		robotsFile:   b.writeRobots,
	}
	for _, f := range files {
		if err := b.writeSideFile(f, func(w *bufio.Writer) error { return writers[f](w, plan) }); err != nil {
			return err
		}
	}
	return nil
}

// writeSideFile writes a file rsgen generates beside the documents (the
// stylesheet, the hosting files) at output path rel, atomically and only
// when its bytes change, and records it as an output of this build, so
// that a later build that no longer writes it removes it.
func (b *builder) writeSideFile(rel string, fill func(*bufio.Writer) error) error {
	return b.sink.Write(rel, func(f io.Writer) error {
		w := bufio.NewWriter(f)
		if err := fill(w); err != nil {
			return err
		}
		return w.Flush()
	})
}

// hostPlan derives the rules from this build's documents, sets and files.
func (b *builder) hostPlan(files []string) *hostPlan {
	u, _ := url.Parse(b.base) // parsed by newBuilder already
	plan := &hostPlan{basePath: u.Path,
		shortCache: fmt.Sprintf("public, max-age=%d", int64(b.cfg.Publish.ShortCache.Duration/time.Second))}
	if plan.basePath == "" {
		plan.basePath = "/"
	}
	for _, f := range files {
		if f != robotsFile {
			plan.hidden = append(plan.hidden, f)
		}
	}
	closed := map[string]int64{}
	var dumpDirs []string
	for _, s := range b.sets {
		for _, kind := range b.segmentKinds(s) {
			journal := b.next.Journals[s.Name]
			for i := range journal {
				if seg := &journal[i]; seg.Until != 0 {
					closed[segmentPath(kind, s.Name, seg)] = seg.From
				}
			}
		}
		if s.resourceDump {
			dumpDirs = append(dumpDirs, path.Dir(layout.ResourceDumpPackage(s.Name, "x"))+"/")
		}
		if s.changeDump {
			dumpDirs = append(dumpDirs, path.Dir(layout.ChangeDumpPackage(s.Name, time.Time{}, "x"))+"/")
		}
	}
	for _, d := range dumpDirs {
		plan.rules = append(plan.rules, hostRule{path: d, cache: cacheImmutable})
	}
	for _, rel := range b.sink.Outputs() {
		switch from, isClosed := closed[rel]; {
		case slices.ContainsFunc(dumpDirs, func(d string) bool { return strings.HasPrefix(rel, d) }):
			// covered by its folder's rule
		case isClosed:
			plan.rules = append(plan.rules, hostRule{path: rel, contentType: layout.TypeXML, cache: cacheImmutable, closedFrom: from})
		case rel == StylesheetPath:
			plan.rules = append(plan.rules, hostRule{path: rel, contentType: layout.TypeXSL, cache: cacheShort})
		case rel == layout.SourceDescription || strings.HasSuffix(rel, ".xml"):
			plan.rules = append(plan.rules, hostRule{path: rel, contentType: layout.TypeXML, cache: cacheShort})
		default:
			// another kind of output, served as the host's defaults say
		}
	}
	plan.rules = append(plan.rules, b.linkRules()...)
	slices.SortFunc(plan.rules, func(x, y hostRule) int { return layout.ComparePaths(x.path, y.path) })
	return plan
}

// linkRules returns the rules that give resources their Link headers: one
// per folder whose published files all belong to the same sets (the
// largest such folder), and one per file elsewhere, so that a typical
// folder-shaped set costs one rule. Resources served from another base URL
// than the documents are not in the output, and get no rule.
func (b *builder) linkRules() []hostRule {
	if !b.cfg.CopyResources || b.resBase != b.base {
		return nil
	}
	const mixed = "\x00"
	labels := make([]string, len(b.next.Files))
	folders := map[string]string{} // folder -> the label all its files share, or mixed
	for i := range b.next.Files {
		p := b.next.Files[i].Path
		labels[i] = strings.Join(b.capabilityLists(p), "\n")
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if l, seen := folders[dir]; !seen {
				folders[dir] = labels[i]
			} else if l != labels[i] {
				folders[dir] = mixed
			}
		}
	}
	var rules []hostRule
	done := map[string]bool{}
	for i := range b.next.Files {
		if labels[i] == "" {
			continue
		}
		p := b.next.Files[i].Path
		rule := p
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if folders[dir] == labels[i] {
				rule = dir + "/" // keep climbing: the largest folder wins
			}
		}
		if !done[rule] {
			done[rule] = true
			rules = append(rules, hostRule{path: rule, links: strings.Split(labels[i], "\n")})
		}
	}
	return rules
}

// cacheControl returns the Cache-Control value of a rule, or "".
func (p *hostPlan) cacheControl(r *hostRule) string {
	switch r.cache {
	case cacheShort:
		return p.shortCache
	case cacheImmutable:
		return cacheForever
	}
	return ""
}

// linkValue returns the value of a Link header to a Capability List.
func linkValue(capabilityList string) string { return "<" + capabilityList + `>; rel="resourcesync"` }

// writeHeaders writes the _headers file of Netlify and Cloudflare Pages.
// Both merge the headers of every rule that matches a request; the plan's
// rules never overlap. Cloudflare reads at most 100 rules: past that, the
// rules of the oldest closed documents are left out (those are then
// cached as Cloudflare's default says, which is correct, only slower), and
// a warning says so if even that is not enough.
func (b *builder) writeHeaders(w *bufio.Writer, plan *hostPlan) error {
	rules := plan.rules
	if b.cfg.Publish.HasTarget(config.TargetCloudflarePages) && len(rules) > cloudflareMaxRules {
		rules = dropOldestClosed(rules, len(rules)-cloudflareMaxRules)
		if len(rules) > cloudflareMaxRules {
			b.warn(WarnHosting, headersFile, fmt.Sprintf("%d rules, but Cloudflare Pages reads only the first %d: some resources get no Link header; "+
				"give each set a folder of its own (a set of whole folders needs one rule)", len(rules), cloudflareMaxRules))
		}
	}
	fmt.Fprintf(w, "# %s: written by rsgen for Netlify and Cloudflare Pages ([publish] targets); every build rewrites it.\n", headersFile)
	for i := range rules {
		r := &rules[i]
		pattern := string(layout.AppendEscapedPath([]byte(escapedBasePath(plan.basePath)), r.path))
		if r.folder() {
			pattern += "*"
		}
		fmt.Fprintf(w, "%s\n", pattern)
		if r.contentType != "" {
			fmt.Fprintf(w, "  Content-Type: %s\n", r.contentType)
		}
		if cc := plan.cacheControl(r); cc != "" {
			fmt.Fprintf(w, "  Cache-Control: %s\n", cc)
		}
		for _, l := range r.links {
			fmt.Fprintf(w, "  Link: %s\n", linkValue(l))
		}
	}
	return nil
}

// escapedBasePath returns the base path percent-encoded as rsgen encodes
// paths in URLs.
func escapedBasePath(basePath string) string {
	return string(layout.AppendEscapedPath(nil, basePath))
}

// dropOldestClosed leaves out the rules of the n oldest closed documents,
// or of all of them when there are fewer.
func dropOldestClosed(rules []hostRule, n int) []hostRule {
	var closed []int64
	for _, r := range rules {
		if r.closedFrom != 0 {
			closed = append(closed, r.closedFrom)
		}
	}
	if len(closed) == 0 {
		return rules
	}
	slices.Sort(closed)
	cut := closed[min(n, len(closed))-1]
	return slices.DeleteFunc(slices.Clone(rules), func(r hostRule) bool { return r.closedFrom != 0 && r.closedFrom <= cut })
}

// nginxString quotes s for an nginx configuration file: nginx unescapes
// \", \\, \n, \r and \t inside a quoted string, so that no byte of s can end
// the string or the line it stands on.
func nginxString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s) + `"`
}

// writeNginx writes the snippet to include in the nginx server block that
// serves the output folder. Locations match decoded paths; exact ones
// ("=") and folders ("^~", which also keeps regex locations of the server
// away) never overlap.
func writeNginx(w *bufio.Writer, plan *hostPlan) error {
	fmt.Fprintf(w, `# %s: written by rsgen ([publish] targets = ["nginx"]); every build rewrites it.
# Include it in the server block whose root is the output folder, served at
# base_url's path %s:
#
#     server {
#         root /srv/site/public;
#         include /srv/site/public/%s;
#     }
#
# nginx does not merge add_header across levels: the locations below send
# only the headers they list, not those of the server block.
#
# The types block replaces nginx's mime.types for this server with rsgen's
# own table, so that a resource is served with the type its Resource List
# publishes.
`, nginxFile, escapedBasePath(plan.basePath), nginxFile)
	writeNginxTypes(w)
	for i := range plan.rules {
		r := &plan.rules[i]
		op := "="
		if r.folder() {
			op = "^~"
		}
		fmt.Fprintf(w, "\nlocation %s %s {\n", op, nginxString(plan.basePath+r.path))
		if r.contentType != "" {
			fmt.Fprintf(w, "    types { }\n    default_type %s;\n", r.contentType)
		}
		if cc := plan.cacheControl(r); cc != "" {
			fmt.Fprintf(w, "    add_header Cache-Control %s;\n", nginxString(cc))
		}
		for _, l := range r.links {
			fmt.Fprintf(w, "    add_header Link %s;\n", nginxString(linkValue(l)))
		}
		w.WriteString("}\n")
	}
	for _, f := range plan.hidden {
		fmt.Fprintf(w, "\nlocation = %s {\n    return 404;\n}\n", nginxString(plan.basePath+f))
	}
	fmt.Fprintf(w, "\nlocation ^~ %s {\n    return 404;\n}\n", nginxString(plan.basePath+layout.DeployMetaDir+"/"))
	return nil
}

// writeNginxTypes writes rsgen's media-type table as an nginx types block:
// one line per type, with its extensions.
func writeNginxTypes(w *bufio.Writer) {
	byType := map[string][]string{}
	var types []string
	for _, e := range layout.Extensions() {
		if byType[e.Type] == nil {
			types = append(types, e.Type)
		}
		byType[e.Type] = append(byType[e.Type], e.Ext[1:])
	}
	slices.Sort(types)
	w.WriteString("\ntypes {\n")
	for _, t := range types {
		fmt.Fprintf(w, "    %s %s;\n", t, strings.Join(byType[t], " "))
	}
	w.WriteString("}\ndefault_type application/octet-stream;\n")
}

// apacheRegex returns an ap_expr regular expression matching exactly the
// path p, or everything below it when folder is set, with a delimiter
// that p does not contain; ok is false when p contains them all.
func apacheRegex(p string, folder bool) (re string, ok bool) {
	delim := ""
	for _, d := range []string{"#", "|", "!", "%", "^"} {
		if !strings.Contains(p, d) {
			delim = d
			break
		}
	}
	if delim == "" {
		return "", false
	}
	var sb strings.Builder
	sb.WriteString("m" + delim + "^")
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c < 0x20 || c == 0x7f:
			// A control character would end the line; PCRE reads \xHH.
			fmt.Fprintf(&sb, `\x%02x`, c)
			continue
		case c < 0x80 && !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '/' || c == '_' || c == '-'):
			sb.WriteByte('\\')
		}
		sb.WriteByte(c)
	}
	if !folder {
		sb.WriteByte('$')
	}
	sb.WriteString(delim)
	return sb.String(), true
}

// writeHtaccess writes the .htaccess of an Apache served output folder.
// It needs mod_headers and AllowOverride FileInfo. <If> sections match
// the decoded path, like nginx.
func writeHtaccess(w *bufio.Writer, plan *hostPlan) error {
	fmt.Fprintf(w, `# %s: written by rsgen ([publish] targets = ["apache"]); every build rewrites it.
# The output folder must be served at base_url's path %s, with
# AllowOverride FileInfo (or All) and mod_headers enabled. The AddType
# lines are rsgen's media-type table, so that a resource is served with the
# type its Resource List publishes.
`, htaccessFile, escapedBasePath(plan.basePath))
	for _, e := range layout.Extensions() {
		fmt.Fprintf(w, "AddType %s %s\n", e.Type, e.Ext)
	}
	for i := range plan.rules {
		r := &plan.rules[i]
		re, ok := apacheRegex(plan.basePath+r.path, r.folder())
		if !ok {
			fmt.Fprintf(w, "# %q: no rule (its name holds every regular expression delimiter)\n", r.path)
			continue
		}
		fmt.Fprintf(w, "<If \"%%{REQUEST_URI} =~ %s\">\n", re)
		if r.contentType != "" {
			fmt.Fprintf(w, "    ForceType %s\n", r.contentType)
		}
		if cc := plan.cacheControl(r); cc != "" {
			fmt.Fprintf(w, "    Header set Cache-Control \"%s\"\n", cc)
		}
		for _, l := range r.links {
			fmt.Fprintf(w, "    Header add Link \"%s\"\n", strings.ReplaceAll(linkValue(l), `"`, `\"`))
		}
		w.WriteString("</If>\n")
	}
	for _, f := range plan.hidden {
		writeApacheNotFound(w, plan.basePath+f, false)
	}
	writeApacheNotFound(w, plan.basePath+layout.DeployMetaDir+"/", true)
	return nil
}

// writeApacheNotFound answers 404 for the path p, or everything below it
// when folder is set. Redirect 404 is allowed by AllowOverride FileInfo;
// Require would need AuthConfig too.
func writeApacheNotFound(w *bufio.Writer, p string, folder bool) {
	if re, ok := apacheRegex(p, folder); ok {
		fmt.Fprintf(w, "<If \"%%{REQUEST_URI} =~ %s\">\n    Redirect 404\n</If>\n", re)
	}
}

// writeRobots writes a robots.txt that names every Resource List as a
// sitemap. It is opt-in: search engines read a Resource List as a sitemap
// and then index every URI in it, and the URIs of its rs:ln links too, which
// a Source may not want in search results.
func (b *builder) writeRobots(w *bufio.Writer, plan *hostPlan) error {
	if plan.basePath != "/" {
		b.warn(WarnHosting, robotsFile, fmt.Sprintf("crawlers read robots.txt only at the root of a host, and base_url's path is %s: copy its Sitemap lines into the host's robots.txt", escapedBasePath(plan.basePath)))
	}
	fmt.Fprintf(w, "# %s: written by rsgen ([publish] robots = true); every build rewrites it.\nUser-agent: *\nDisallow:\n\n", robotsFile)
	for _, s := range b.sets {
		fmt.Fprintf(w, "Sitemap: %s\n", b.docURL(layout.ResourceList(s.Name)))
	}
	return nil
}
