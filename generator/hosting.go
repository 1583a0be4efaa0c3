package generator

import (
	"bufio"
	"io"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/hosting"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/snapshot"
)

// Hosting files ([publish] targets, robots; package hosting). The plan is
// derived from this build's documents, sets and resources; the files are
// written after the documents, at the top of the output folder, and
// recorded as this build's outputs: a target turned off has its file
// removed by the next build. They are never resources; a source file at
// the same path fails the build, as one at a document's path does.

// writeHosting writes the hosting files. It runs after the documents, so
// that the plan covers every document of this build.
func (b *builder) writeHosting() error {
	files := hosting.Files(&b.cfg.Publish)
	if len(files) == 0 {
		return nil
	}
	plan, err := b.hostPlan(files)
	if err != nil {
		return err
	}
	warn := func(file, msg string) { b.warn(WarnHosting, file, msg) }
	for _, f := range files {
		if err := b.writeSideFile(f, func(w *bufio.Writer) error { return hosting.Write(w, f, plan, warn) }); err != nil {
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

// hostPlan derives the rules from this build's documents, sets, files and
// versions.
func (b *builder) hostPlan(files []string) (*hosting.Plan, error) {
	u, _ := url.Parse(b.base) // parsed by newBuilder already
	plan := &hosting.Plan{BasePath: u.Path, ShortCache: b.cfg.Publish.ShortCache.Duration,
		Cloudflare: b.cfg.Publish.HasTarget(config.TargetCloudflarePages)}
	if plan.BasePath == "" {
		plan.BasePath = "/"
	}
	for _, f := range files {
		if f != hosting.RobotsFile {
			plan.Hidden = append(plan.Hidden, f)
		}
	}
	for _, s := range b.sets {
		if rl := layout.ResourceList(s.Name); b.sink.Recorded(rl) { // a set without files has none
			plan.Sitemaps = append(plan.Sitemaps, b.docURL(rl))
		}
	}
	closed := map[string]int64{} // closed segment documents -> their from
	open := map[string]bool{}    // the open segment documents
	// Folders whose files all share one rule: the dump packages and the
	// versions, never rewritten, and the TimeMaps, rewritten as versions
	// are added. A rule's type is that of all its files, where they share
	// one (hosts without rsgen's media-type table, such as Netlify's, do
	// not know .timemap or .json-patch).
	folders := map[string]hosting.Rule{
		layout.DocumentsDir + "/mementos/": {Cache: hosting.CacheImmutable},
		layout.DocumentsDir + "/patches/":  {Cache: hosting.CacheImmutable, ContentType: layout.ContentType(layout.Patch(time.Time{}, "x"))},
		layout.DocumentsDir + "/timemaps/": {Cache: hosting.CacheShort, ContentType: layout.ContentType(layout.TimeMap("x"))},
	}
	for _, s := range b.sets {
		for _, kind := range b.journals.segmentKinds(s) {
			journal := b.next.Journals[s.Name]
			for i := range journal {
				seg := &journal[i]
				if rel := segmentPath(kind, s.Name, seg); seg.Until != 0 {
					closed[rel] = seg.From
				} else {
					open[rel] = true
				}
			}
		}
		if s.resourceDump {
			folders[path.Dir(layout.ResourceDumpPackage(s.Name, "x"))+"/"] = hosting.Rule{Cache: hosting.CacheImmutable} // packages and their manifests
		}
		if s.changeDump {
			folders[path.Dir(layout.ChangeDumpPackage(s.Name, time.Time{}, "x"))+"/"] = hosting.Rule{Cache: hosting.CacheImmutable} // packages and their manifests
		}
	}
	used := map[string]bool{}
	for _, rel := range b.sink.Outputs() {
		if folder, ok := ruledFolder(folders, rel); ok {
			used[folder] = true
			continue
		}
		rule := hosting.Rule{Path: rel, ContentType: layout.ContentType(rel), Cache: hosting.CacheOf(rel, open[rel]), ClosedFrom: closed[rel]}
		if rule.Cache != hosting.CacheHost {
			plan.Rules = append(plan.Rules, rule)
		}
	}
	for top := range b.versioner.used {
		used[layout.DocumentsDir+"/"+top+"/"] = true
	}
	for folder := range used {
		rule := folders[folder]
		rule.Path = folder
		plan.Rules = append(plan.Rules, rule)
	}
	plan.Rules = append(plan.Rules, b.linkRules()...)
	for v, err := range b.next.Versions() {
		if err != nil {
			return nil, err
		}
		if t := sniffedType(&v); t != "" { // a type rule in the mementos' folder rule
			plan.Rules = append(plan.Rules, hosting.Rule{Path: layout.Memento(unixTime(v.Seen), v.Path), ContentType: t})
		}
	}
	slices.SortFunc(plan.Rules, func(x, y hosting.Rule) int { return layout.ComparePaths(x.Path, y.Path) })
	return plan, nil
}

// ruledFolder returns the folder of folders that holds the output file rel.
func ruledFolder(folders map[string]hosting.Rule, rel string) (string, bool) {
	for dir := path.Dir(rel); dir != "."; dir = path.Dir(dir) {
		if _, ok := folders[dir+"/"]; ok {
			return dir + "/", true
		}
	}
	return "", false
}

// linkRules returns the rules that give resources their Link headers: one
// per folder whose published files all belong to the same sets (the
// largest such folder), and one per file elsewhere, so that a typical
// folder-shaped set costs one rule. A file whose name tells no type (a
// copyright, a README, a .go file) has the type the build sniffed in its
// rule, or in a type rule of its own inside its folder's (see
// hosting.Rule): hosts type files by name. So do its mementos (hostPlan).
// Resources served from another base URL than the documents are not in
// the output, and get no rule.
func (b *builder) linkRules() []hosting.Rule {
	if !b.cfg.CopyResources || b.resBase != b.base {
		return nil
	}
	const mixed = "\x00"
	labels := make([]string, b.next.Files.Len())
	folders := map[string]string{} // folder -> the label all its files share, or mixed
	for i, r := range b.next.Files.All() {
		p := r.Path
		labels[i] = strings.Join(b.linker.capabilityLists(p), "\n")
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if l, seen := folders[dir]; !seen {
				folders[dir] = labels[i]
			} else if l != labels[i] {
				folders[dir] = mixed
			}
		}
	}
	var rules []hosting.Rule
	done := map[string]bool{}
	for i, r := range b.next.Files.All() {
		p := r.Path
		own := hosting.Rule{Path: p, ContentType: sniffedType(r)}
		if labels[i] != "" {
			folder := p
			for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
				if folders[dir] == labels[i] {
					folder = dir + "/" // keep climbing: the largest folder wins
				}
			}
			if folder == p {
				own.Links = strings.Split(labels[i], "\n")
			} else if !done[folder] {
				done[folder] = true
				rules = append(rules, hosting.Rule{Path: folder, Links: strings.Split(labels[i], "\n")})
			}
		}
		if own.ContentType != "" || own.Links != nil {
			rules = append(rules, own)
		}
	}
	return rules
}

// sniffedType returns the type of resource r that hosts cannot tell from
// its name, which names no type of rsgen's table: the type the build
// sniffed, when the documents publish it (schemaSafeType); else "".
func sniffedType(r *snapshot.Record) string {
	if t := r.Type(); t != "" && layout.ContentType(r.Path) == "" && schemaSafeType(t) {
		return t
	}
	return ""
}
