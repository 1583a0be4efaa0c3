package generator

import (
	"bufio"
	"iter"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/hosting"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// Hosting files ([publish] targets, robots; package hosting). The plan is
// derived from this build's documents, sets and resources; the files are
// written after the documents, at the top of the output folder, and
// recorded as this build's outputs: a target turned off has its file
// removed by the next build. They are never resources; a source file at
// the same path fails the build, as one at a document's path does.

// hostingFiles is what the hosting files describe of this build: its
// journals, after the documents are written, the folders of its versions,
// its files and its kept versions (whose mementos a host may need told
// their type).
type hostingFiles struct {
	journals map[string][]snapshot.Segment
	versions map[string]bool // the folders of layout.VersionDirs this build publishes into
	files    *snapshot.Records
	mementos iter.Seq2[snapshot.Record, error]
}

// writeHosting writes the hosting files of site s through the sink w. It
// runs after the documents, so that the plan covers every document of
// this build.
func writeHosting(s *site, w *sink.Sink, h hostingFiles) error {
	files := hosting.Files(&s.cfg.Publish)
	if len(files) == 0 {
		return nil
	}
	hp, err := hostPlan(s, w, h, files)
	if err != nil {
		return err
	}
	warn := func(file, msg string) { s.warn(WarnHosting, file, msg) }
	for _, f := range files {
		if err := writeSideFile(w, f, func(bw *bufio.Writer) error { return hosting.Write(bw, f, hp, warn) }); err != nil {
			return err
		}
	}
	return nil
}

// hostPlan derives the rules from this build's documents, outputs, sets
// and files.
func hostPlan(s *site, w *sink.Sink, h hostingFiles, files []string) (*hosting.Plan, error) {
	hp := &hosting.Plan{BasePath: s.baseURL.Path, ShortCache: s.cfg.Publish.ShortCache.Duration,
		Cloudflare: s.cfg.Publish.HasTarget(config.TargetCloudflarePages)}
	if hp.BasePath == "" {
		hp.BasePath = "/"
	}
	for _, f := range files {
		if f != hosting.RobotsFile {
			hp.Hidden = append(hp.Hidden, f)
		}
	}
	for _, st := range s.sets {
		if rl := layout.ResourceList(st.Name); w.Recorded(rl) { // a set without files has none
			hp.Sitemaps = append(hp.Sitemaps, s.docURL(rl))
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
	for _, st := range s.sets {
		for _, kind := range segmentKinds(st) {
			journal := h.journals[st.Name]
			for i := range journal {
				seg := &journal[i]
				if rel := segmentPath(kind, st.Name, seg); seg.Until != 0 {
					closed[rel] = seg.From
				} else {
					open[rel] = true
				}
			}
		}
		if st.resourceDump {
			folders[path.Dir(layout.ResourceDumpPackage(st.Name, "x"))+"/"] = hosting.Rule{Cache: hosting.CacheImmutable} // packages and their manifests
		}
		if st.changeDump {
			folders[path.Dir(layout.ChangeDumpPackage(st.Name, time.Time{}, "x"))+"/"] = hosting.Rule{Cache: hosting.CacheImmutable} // packages and their manifests
		}
	}
	used := map[string]bool{}
	for _, rel := range w.Outputs() {
		if folder, ok := ruledFolder(folders, rel); ok {
			used[folder] = true
			continue
		}
		rule := hosting.Rule{Path: rel, ContentType: layout.ContentType(rel), Cache: hosting.CacheOf(rel, open[rel]), ClosedFrom: closed[rel]}
		topicHeaders(s, &rule)
		if rule.Cache != hosting.CacheHost {
			hp.Rules = append(hp.Rules, rule)
		}
	}
	for top := range h.versions {
		used[layout.DocumentsDir+"/"+top+"/"] = true
	}
	for folder := range used {
		rule := folders[folder]
		rule.Path = folder
		hp.Rules = append(hp.Rules, rule)
	}
	links, err := linkRules(s, h.files)
	if err != nil {
		return nil, err
	}
	hp.Rules = append(hp.Rules, links...)
	for v, err := range h.mementos {
		if err != nil {
			return nil, err
		}
		if t := sniffedType(&v); t != "" { // a type rule in the mementos' folder rule
			hp.Rules = append(hp.Rules, hosting.Rule{Path: layout.Memento(unixTime(v.Seen), v.Path), ContentType: t})
		}
	}
	slices.SortFunc(hp.Rules, func(x, y hosting.Rule) int { return layout.ComparePaths(x.Path, y.Path) })
	return hp, nil
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
func linkRules(s *site, files *snapshot.Records) ([]hosting.Rule, error) {
	if !s.cfg.CopyResources || s.resBase != s.base {
		return nil, nil
	}
	const mixed = "\x00"
	labels := make([]string, 0, files.Len())
	folders := map[string]string{} // folder -> the label all its files share, or mixed
	for r, err := range files.All() {
		if err != nil {
			return nil, err
		}
		p := r.Path
		label := strings.Join(s.capabilityLists(p), "\n")
		labels = append(labels, label)
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if l, seen := folders[dir]; !seen {
				folders[dir] = label
			} else if l != label {
				folders[dir] = mixed
			}
		}
	}
	var rules []hosting.Rule
	done := map[string]bool{}
	i := -1
	for r, err := range files.All() {
		if err != nil {
			return nil, err
		}
		i++
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
	return rules, nil
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
