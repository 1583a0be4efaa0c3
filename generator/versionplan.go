package generator

import (
	"cmp"
	"slices"
	"strings"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// Prior versions (§14.6) and patches (§14.4). In a set with keep_versions
// every version of every resource is copied, when the build that first
// sees it runs, to a time-specific URI (layout.Memento), and a static
// TimeMap per resource (RFC 7089) lists its versions; with patches, each
// update of a JSON resource also gets an RFC 6902 JSON Patch from the
// previous version. Versions and patches stay while their set keeps them:
// closed Change Lists link to them.
//
// The versions of a site that keeps them grow with every build, so a build
// never holds them whole: the versions writer (versions.go) merges the
// previous build's, read from its state as they are needed, with the
// scan's records, one resource at a time, and versionPlan.resource decides
// what becomes of each resource's versions.

// versionPlan is what the plan decides of the kept versions as a whole.
type versionPlan struct {
	// on says that there are versions to keep or to drop: a set keeps
	// them, or the previous state has some.
	on bool
	// recheck writes every TimeMap and patch again, whatever the state
	// says: with --verify, after a failed build (its publishing record
	// names version files) or a state of an older format (its outputs
	// do), with a state rebuilt from the output, and when the base URLs
	// the TimeMaps and patch links name changed.
	recheck bool
	// trusted says that the versions carried over from the last build,
	// and their TimeMaps and patches, are published as it left them, to
	// be trusted without a stat each, as placements trusts the resources:
	// not when recheck says so, nor when the output does not look like
	// the last build's (its Source Description, first resource or first
	// kept version is missing: a fresh or wiped output folder).
	trusted bool
	// watched are the version files that an earlier build listed among its
	// outputs (a state written before format 5) or in its publishing
	// record (a failed build): those this build does not publish are
	// removed.
	watched []string
	// eventSeen holds, for the path of each event this build's documents
	// list, the times its records were first seen: the versions the
	// Change Lists link to, when they are kept. It is nil when on is
	// false: a build of 100,000 changes would hold 5 MB of it for nothing.
	eventSeen map[string][]int64
}

// keepsVersions reports whether there are versions to keep or to drop: a
// set of site s keeps them, or the previous state prev has some.
func keepsVersions(s *site, prev *loaded) bool {
	return prev.state.NumVersions() > 0 || slices.ContainsFunc(s.sets, func(st *set) bool { return st.KeepVersions })
}

// planVersions decides what becomes of the kept versions as a whole:
// journals are the segments, open and closed by this build, whose events
// this build's documents list.
func planVersions(s *site, prev *loaded, journals ...[]snapshot.Segment) versionPlan {
	var vp versionPlan
	for _, names := range [][]string{prev.state.Outputs, prev.intent.Added} {
		for _, rel := range names {
			if sink.KindOf(rel) == sink.Version {
				vp.watched = append(vp.watched, rel)
			}
		}
	}
	vp.on = keepsVersions(s, prev)
	vp.recheck = s.opts.Verify || len(vp.watched) > 0 || prev.recovered != nil ||
		prev.state.BaseURL != s.base || prev.state.ResourceBaseURL != s.resBase
	vp.trusted = !vp.recheck && prev.intact && prev.kept.versionsPresent
	if !vp.on {
		return vp
	}
	vp.eventSeen = map[string][]int64{}
	for _, segs := range journals {
		for i := range segs {
			for _, ev := range segs[i].Events {
				if ev.Change != snapshot.Deleted {
					vp.eventSeen[ev.Record.Path] = append(vp.eventSeen[ev.Record.Path], ev.Record.Seen)
				}
			}
		}
	}
	return vp
}

// resourceVersions is what becomes of the versions of one resource.
type resourceVersions struct {
	// kept are the versions kept, oldest first; added is the index among
	// them of the current one when it is new: its memento is written.
	kept  []snapshot.Record
	added int
	// obsolete are the output files that go: of the versions dropped, the
	// TimeMap of a resource whose versions all go, and patches that no
	// longer apply; pruned the files of the state archive that go.
	obsolete, pruned []string
	timeMapStep      fileStep
	patches          []fileStep // per version kept
	linked           []bool     // per version kept: an event of this build's documents names it
}

// fileStep says what becomes of a file derived from the versions.
type fileStep uint8

const (
	stepNone       fileStep = iota // none: a version without a patch
	stepWrite                      // written (again)
	stepKeep                       // the last build's, trusted
	stepKeepIfSame                 // the last build's, if the output holds it (of the same length, for a TimeMap)
)

// resource decides what becomes of the versions of the resource at p:
// old are those of the previous build, oldest first, whole says which of
// them are whole in the output or the state archive (the others are lost),
// and cur is its record in this build, or nil. keep and patches say
// whether its sets keep versions and publish patches. The versions kept
// are appended to reuse.
func (vp *versionPlan) resource(p string, keep, patches bool, old []snapshot.Record, whole []bool, cur *snapshot.Record, reuse []snapshot.Record) resourceVersions {
	rv := resourceVersions{kept: reuse, added: -1}
	if keep {
		for i, v := range old {
			if whole[i] {
				rv.kept = append(rv.kept, v)
			}
		}
	}
	changed := len(rv.kept) < len(old) // the versions of p are not those of the last build
	if cur != nil {
		k, found := slices.BinarySearchFunc(rv.kept, cur.Seen, func(v snapshot.Record, seen int64) int { return cmp.Compare(v.Seen, seen) })
		if !found {
			rv.kept = slices.Insert(rv.kept, k, *cur)
			rv.added, changed = k, true
		}
	}
	rv.drop(old)
	if len(rv.kept) == 0 {
		if len(old) > 0 {
			rv.obsolete = append(rv.obsolete, layout.TimeMap(p))
		}
		return rv
	}
	switch {
	case changed || vp.recheck:
		rv.timeMapStep = stepWrite
	case vp.trusted:
		rv.timeMapStep = stepKeep
	default:
		rv.timeMapStep = stepKeepIfSame
	}
	rv.planPatches(vp, patches)
	return rv
}

// drop makes obsolete the files of the versions of old that rv does not
// keep (both oldest first): their mementos, in the output and in the state
// archive, and their patches.
func (rv *resourceVersions) drop(old []snapshot.Record) {
	vs := rv.kept
	for _, v := range old {
		for len(vs) > 0 && vs[0].Seen < v.Seen {
			vs = vs[1:]
		}
		if len(vs) > 0 && vs[0].Seen == v.Seen {
			continue
		}
		rel := layout.Memento(unixTime(v.Seen), v.Path)
		rv.obsolete = append(rv.obsolete, rel)
		rv.pruned = append(rv.pruned, rel)
		if v.Patched {
			rv.obsolete = append(rv.obsolete, layout.Patch(unixTime(v.Seen), v.Path))
		}
	}
}

// planPatches decides the patches of the versions kept, where patches
// applies: from each JSON version to the next. A patch published by an
// earlier build is kept without being made again, unless recheck says
// otherwise or a Change List of this build links to it (its link carries
// its digests); those that no longer apply become obsolete.
func (rv *resourceVersions) planPatches(vp *versionPlan, patches bool) {
	rv.patches, rv.linked = make([]fileStep, len(rv.kept)), make([]bool, len(rv.kept))
	for k := range rv.kept {
		v := &rv.kept[k]
		rv.linked[k] = slices.Contains(vp.eventSeen[v.Path], v.Seen)
		switch {
		case k == 0 || !patches || !isJSON(v) || !isJSON(&rv.kept[k-1]):
			if v.Patched {
				rv.obsolete = append(rv.obsolete, layout.Patch(unixTime(v.Seen), v.Path))
				v.Patched = false
			}
		case v.Patched && !vp.recheck && !rv.linked[k] && vp.trusted:
			rv.patches[k] = stepKeep
		case v.Patched && !vp.recheck && !rv.linked[k]:
			rv.patches[k] = stepKeepIfSame
		default:
			rv.patches[k] = stepWrite
		}
	}
}

// isJSON reports whether r is a JSON resource, which patches cover.
func isJSON(r *snapshot.Record) bool {
	return r.Type() == "application/json" || strings.HasSuffix(r.Type(), "+json")
}

// versionUse returns the folder of layout.VersionDirs that the version
// file rel is in.
func versionUse(rel string) string {
	sub := strings.TrimPrefix(rel, layout.DocumentsDir+"/")
	top, _, _ := strings.Cut(sub, "/")
	return top
}
