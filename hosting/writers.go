package hosting

import (
	"bufio"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/rsgen/rsgen/layout"
)

// writeHeaders writes the _headers file of Netlify and Cloudflare Pages.
// Both merge the headers of every rule that matches a request; the plan's
// rules never overlap, and a type rule adds its Content-Type to its
// folder's headers. Cloudflare reads at most 100 rules: past that, the
// rules of the oldest closed documents are left out (those are then
// cached as Cloudflare's default says, which is correct, only slower), and
// a warning says so if even that is not enough.
func writeHeaders(w *bufio.Writer, plan *Plan, warn func(file, msg string)) error {
	rules := plan.Rules
	if plan.Cloudflare && len(rules) > cloudflareMaxRules {
		rules = dropOldestClosed(rules, len(rules)-cloudflareMaxRules)
		if len(rules) > cloudflareMaxRules {
			warn(layout.HeadersFile, fmt.Sprintf("%d rules, but Cloudflare Pages reads only the first %d: some resources get no Link header; "+
				"give each set a folder of its own (a set of whole folders needs one rule)", len(rules), cloudflareMaxRules))
		}
	}
	fmt.Fprintf(w, "# %s: written by rsgen for Netlify and Cloudflare Pages ([publish] targets); every build rewrites it.\n", layout.HeadersFile)
	for i := range rules {
		r := &rules[i]
		pattern := string(layout.AppendEscapedPath([]byte(escapedBasePath(plan.BasePath)), r.Path))
		if r.Folder() {
			pattern += "*"
		}
		fmt.Fprintf(w, "%s\n", pattern)
		if r.ContentType != "" {
			fmt.Fprintf(w, "  Content-Type: %s\n", r.ContentType)
		}
		if cc := plan.cacheControl(r); cc != "" {
			fmt.Fprintf(w, "  Cache-Control: %s\n", cc)
		}
		for _, l := range r.Links {
			fmt.Fprintf(w, "  Link: %s\n", linkValue(l))
		}
		for _, h := range r.extraHeaders() {
			fmt.Fprintf(w, "  %s: %s\n", h[0], h[1])
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
func dropOldestClosed(rules []Rule, n int) []Rule {
	var closed []int64
	for _, r := range rules {
		if r.ClosedFrom != 0 {
			closed = append(closed, r.ClosedFrom)
		}
	}
	if len(closed) == 0 {
		return rules
	}
	slices.Sort(closed)
	cut := closed[min(n, len(closed))-1]
	return slices.DeleteFunc(slices.Clone(rules), func(r Rule) bool { return r.ClosedFrom != 0 && r.ClosedFrom <= cut })
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
// away) never overlap, but for a type rule's, which nginx serves instead
// of its folder's: it repeats the folder's headers. The type rules of an
// extension whose files share one type join the types block instead
// (foldTypes). nginx holds every location in memory, so past
// nginxManyRules a warning says what that costs.
func writeNginx(w *bufio.Writer, plan *Plan, warn func(file, msg string)) error {
	extTypes, rules := foldTypes(plan.Rules)
	if len(rules) > nginxManyRules {
		warn(layout.NginxFile, fmt.Sprintf("%d locations, which nginx holds in memory in every worker (100,000 took 760 MB and 5.4 s to load when measured): "+
			"give each set a folder of its own (a set of whole folders needs one rule)", len(rules)))
	}
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
`, layout.NginxFile, escapedBasePath(plan.BasePath), layout.NginxFile)
	writeNginxTypes(w, extTypes)
	var folder *Rule // the last folder's rule: the one a type rule may lie in
	for i := range rules {
		r := &rules[i]
		op := "="
		if r.Folder() {
			op, folder = "^~", r
		}
		fmt.Fprintf(w, "\nlocation %s %s {\n", op, nginxString(plan.BasePath+r.Path))
		if r.ContentType != "" {
			fmt.Fprintf(w, "    types { }\n    default_type %s;\n", r.ContentType)
		}
		headers := r
		if r.typeOnly() && folder != nil && strings.HasPrefix(r.Path, folder.Path) {
			headers = folder
		}
		if cc := plan.cacheControl(headers); cc != "" {
			fmt.Fprintf(w, "    add_header Cache-Control %s;\n", nginxString(cc))
		}
		for _, l := range headers.Links {
			fmt.Fprintf(w, "    add_header Link %s;\n", nginxString(linkValue(l)))
		}
		for _, h := range r.extraHeaders() {
			fmt.Fprintf(w, "    add_header %s %s;\n", h[0], nginxString(h[1]))
		}
		w.WriteString("}\n")
	}
	for _, f := range plan.Hidden {
		fmt.Fprintf(w, "\nlocation = %s {\n    return 404;\n}\n", nginxString(plan.BasePath+f))
	}
	fmt.Fprintf(w, "\nlocation ^~ %s {\n    return 404;\n}\n", nginxString(plan.BasePath+layout.DeployMetaDir+"/"))
	return nil
}

// writeNginxTypes writes rsgen's media-type table, and the extensions
// foldTypes found, as an nginx types block: one line per type, with its
// extensions.
func writeNginxTypes(w *bufio.Writer, extTypes []layout.Extension) {
	byType := map[string][]string{}
	var types []string
	for _, e := range append(layout.Extensions(), extTypes...) {
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

// foldTypes returns, for hosts that type files by their extension (nginx's
// types, Apache's AddType, both case-insensitive), the extensions whose
// type rules all give one type, such as .go files sniffed as text/plain,
// sorted, and the rules without those type rules: an extension costs a
// line instead of a rule per file. Only extensions of letters, digits,
// "-", "_" and "+" are folded, which neither host reads as syntax.
func foldTypes(rules []Rule) ([]layout.Extension, []Rule) {
	byExt := map[string]string{} // lower-case extension -> its one type, or "" when several
	for i := range rules {
		if ext, ok := foldableExt(&rules[i]); ok {
			if t, seen := byExt[ext]; !seen {
				byExt[ext] = rules[i].ContentType
			} else if t != rules[i].ContentType {
				byExt[ext] = ""
			}
		}
	}
	var exts []layout.Extension
	for ext, t := range byExt {
		if t != "" {
			exts = append(exts, layout.Extension{Ext: ext, Type: t})
		}
	}
	if len(exts) == 0 {
		return nil, rules
	}
	slices.SortFunc(exts, func(x, y layout.Extension) int { return strings.Compare(x.Ext, y.Ext) })
	return exts, slices.DeleteFunc(slices.Clone(rules), func(r Rule) bool {
		ext, ok := foldableExt(&r)
		return ok && byExt[ext] != ""
	})
}

// foldableExt returns the lower-case extension of a type rule's file, when
// foldTypes may fold it.
func foldableExt(r *Rule) (string, bool) {
	ext := strings.ToLower(path.Ext(r.Path))
	if !r.typeOnly() || len(ext) < 2 {
		return "", false
	}
	for _, c := range ext[1:] {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '+') {
			return "", false
		}
	}
	return ext, true
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
// the decoded path, like nginx; Apache applies every one that matches, so
// a type rule's ForceType adds to its folder's headers. Apache reads the
// file and tests every <If> on each request, so past apacheManyRules a
// warning says what that costs.
func writeHtaccess(w *bufio.Writer, plan *Plan, warn func(file, msg string)) error {
	extTypes, rules := foldTypes(plan.Rules)
	if len(rules) > apacheManyRules {
		warn(layout.HtaccessFile, fmt.Sprintf("%d rules, which Apache reads and tests on every request (100,000 rules took 1.6 s a request when measured): "+
			"give each set a folder of its own (a set of whole folders needs one rule)", len(rules)))
	}
	fmt.Fprintf(w, `# %s: written by rsgen ([publish] targets = ["apache"]); every build rewrites it.
# The output folder must be served at base_url's path %s, with
# AllowOverride FileInfo (or All) and mod_headers enabled. The AddType
# lines are rsgen's media-type table, with the extensions whose files the
# build sniffed alike, and ForceType gives a file whose name tells no type
# the one the build sniffed, so that a resource is served with the type its
# Resource List publishes.
`, layout.HtaccessFile, escapedBasePath(plan.BasePath))
	for _, e := range append(layout.Extensions(), extTypes...) {
		fmt.Fprintf(w, "AddType %s %s\n", e.Type, e.Ext)
	}
	for i := range rules {
		r := &rules[i]
		re, ok := apacheRegex(plan.BasePath+r.Path, r.Folder())
		if !ok {
			fmt.Fprintf(w, "# %q: no rule (its name holds every regular expression delimiter)\n", r.Path)
			continue
		}
		fmt.Fprintf(w, "<If \"%%{REQUEST_URI} =~ %s\">\n", re)
		if r.ContentType != "" {
			fmt.Fprintf(w, "    ForceType %s\n", r.ContentType)
		}
		if cc := plan.cacheControl(r); cc != "" {
			fmt.Fprintf(w, "    Header set Cache-Control \"%s\"\n", cc)
		}
		for _, l := range r.Links {
			fmt.Fprintf(w, "    Header add Link \"%s\"\n", strings.ReplaceAll(linkValue(l), `"`, `\"`))
		}
		for _, h := range r.extraHeaders() {
			fmt.Fprintf(w, "    Header set %s \"%s\"\n", h[0], apacheHeaderValue(h[1]))
		}
		w.WriteString("</If>\n")
	}
	for _, f := range plan.Hidden {
		writeApacheNotFound(w, plan.BasePath+f, false)
	}
	writeApacheNotFound(w, plan.BasePath+layout.DeployMetaDir+"/", true)
	return nil
}

// apacheHeaderValue quotes v for a mod_headers value in double quotes:
// a quote is escaped, and a percent sign, which mod_headers reads as the
// start of a format specifier (%{VAR}e, %t), is doubled.
func apacheHeaderValue(v string) string {
	return strings.NewReplacer(`"`, `\"`, "%", "%%").Replace(v)
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
func writeRobots(w *bufio.Writer, plan *Plan, warn func(file, msg string)) error {
	if plan.BasePath != "/" {
		warn(RobotsFile, fmt.Sprintf("crawlers read robots.txt only at the root of a host, and base_url's path is %s: copy its Sitemap lines into the host's robots.txt", escapedBasePath(plan.BasePath)))
	}
	fmt.Fprintf(w, "# %s: written by rsgen ([publish] robots = true); every build rewrites it.\nUser-agent: *\nDisallow:\n\n", RobotsFile)
	for _, u := range plan.Sitemaps {
		fmt.Fprintf(w, "Sitemap: %s\n", u)
	}
	return nil
}
