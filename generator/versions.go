package generator

// Prior versions (§14.6) and patches (§14.4). In a set with keep_versions
// every version of every resource is copied, when the build that first
// sees it runs, to a time-specific URI (layout.Memento); the copy is
// checked against the scan's fingerprint, so it holds exactly the bytes
// whose hash was published. Hard links would not do: an editor that writes
// in place would change the old version too. A static TimeMap per
// resource (RFC 7089, application/link-format) lists its versions.
//
// With patches, each update of a JSON resource also gets an RFC 6902 JSON
// Patch from the previous version, made from the two kept copies. Versions
// and patches are never removed: closed Change Lists link to them forever.

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
)

// versioner keeps the versions of resources.
type versioner struct{ *run }

// isJSON reports whether r is a JSON resource, which patches cover.
func isJSON(r *snapshot.Record) bool {
	return r.Type() == "application/json" || strings.HasSuffix(r.Type(), "+json")
}

// versioned reports whether the resource at source path p is in a set
// that keeps versions, and whether in one that publishes patches.
func (b *versioner) versioned(p string) (keep, patches bool) {
	for _, s := range b.sets {
		if s.KeepVersions && s.Contains(p) {
			keep, patches = true, patches || s.Patches
		}
	}
	return keep, patches
}

// keepVersions keeps the versions of this build's resources, carries over
// those of earlier builds, and writes the TimeMaps and patches. It runs
// before the documents that link to them are written.
func (b *versioner) keepVersions(ctx context.Context) error {
	if !slices.ContainsFunc(b.sets, func(s *set) bool { return s.KeepVersions }) {
		return nil
	}
	var vs []snapshot.Record
	for _, v := range b.prev.Versions {
		if keep, _ := b.versioned(v.Path); !keep {
			continue // no longer published: removed with the obsolete outputs
		}
		rel := layout.Memento(unixTime(v.Seen), v.Path)
		_, ok, changed, err := b.keeper.publishKept(rel, versionSums(&v))
		if err != nil {
			return err
		}
		if !ok {
			b.warn(WarnLost, v.Path, "kept version lost or damaged in both the state folder and the output folder; it cannot be made again and is no longer listed")
			continue
		}
		b.sink.Record(rel, changed)
		vs = append(vs, v)
	}
	slices.SortStableFunc(vs, versionOrder) // as the state keeps them, unless an older rsgen wrote it
	carried := vs[:len(vs):len(vs)]
	for _, r := range b.next.Files.All() {
		if keep, _ := b.versioned(r.Path); !keep {
			continue
		}
		if _, ok := findVersion(carried, r.Path, r.Seen); ok {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := b.writeMemento(r); err != nil {
			return err
		}
		vs = append(vs, *r)
	}
	slices.SortStableFunc(vs, versionOrder)
	b.next.Versions = vs
	for i := 0; i < len(vs); {
		j := i + 1
		for j < len(vs) && vs[j].Path == vs[i].Path {
			j++
		}
		if err := b.writeVersions(vs[i:j]); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// versionOrder orders versions by path, in walk order, then by the time
// they were first seen: the order of State.Versions, which findVersion
// searches.
func versionOrder(x, y snapshot.Record) int {
	return cmp.Or(layout.ComparePaths(x.Path, y.Path), cmp.Compare(x.Seen, y.Seen))
}

// writeMemento copies the current version of r to its time-specific URI,
// staged (see stage), checking the bytes against what the documents say
// of the version: the published form of a rewritten resource (html_link),
// else the source's bytes, which the scan fingerprinted.
func (b *versioner) writeMemento(r *snapshot.Record) error {
	rel := layout.Memento(unixTime(r.Seen), r.Path)
	var in io.ReadCloser
	var err error
	if r.Rewritten {
		in, err = os.Open(b.sink.Current(b.sink.Path(r.Path)))
	} else {
		in, err = b.src.Open(r.Path)
	}
	if err == nil {
		defer in.Close()
		err = b.sink.WriteNew(rel, func(w io.Writer) error {
			got, err := copyMeasured(w, in)
			if err == nil && !versionSums(r).match(got) {
				err = fmt.Errorf("%s changed since it was scanned; build again", r.Path)
			}
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("keep version %s: %w", b.sink.Path(rel), err)
	}
	b.keeper.keepPublished(rel) // it cannot be made again
	return nil
}

// versionSums returns what identifies the bytes of a kept version: its
// length and the SHA-256 of its published bytes, which is its fingerprint
// unless html_link rewrote it (zero when unknown: a rewritten resource
// without a published SHA-256, or a record migrated without one).
func versionSums(v *snapshot.Record) sums {
	s := sums{size: v.Size}
	if !v.Rewritten {
		s.sha256 = v.Fingerprint()
	} else if v.Digests.HasAll([]rs.HashAlgorithm{rs.SHA256}) {
		s.sha256 = v.Digests.SHA256
	}
	return s
}

// writeVersions writes the TimeMap of the kept versions of one resource,
// oldest first, and, where they apply, its patches.
func (b *versioner) writeVersions(vs []snapshot.Record) error {
	p := vs[0].Path
	if err := b.writeTimeMap(vs); err != nil {
		return err
	}
	if _, patches := b.versioned(p); !patches {
		return nil
	}
	for k := 1; k < len(vs); k++ {
		if isJSON(&vs[k]) && isJSON(&vs[k-1]) {
			if err := b.writePatch(&vs[k-1], &vs[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeTimeMap writes the TimeMap of a resource's versions (RFC 7089
// §5.1.1): the original, the TimeMap itself, and every memento with its
// datetime.
func (b *versioner) writeTimeMap(vs []snapshot.Record) error {
	p := vs[0].Path
	rel := layout.TimeMap(p)
	var sb strings.Builder
	httpTime := func(v *snapshot.Record) string { return unixTime(v.Seen).Format(http.TimeFormat) }
	fmt.Fprintf(&sb, "<%s>;rel=\"original\",\n", b.resURL(p))
	fmt.Fprintf(&sb, "<%s>;rel=\"self\";type=\"%s\";from=\"%s\";until=\"%s\"", b.docURL(rel), layout.TypeTimeMap, httpTime(&vs[0]), httpTime(&vs[len(vs)-1]))
	for i := range vs {
		relation := "memento"
		switch {
		case len(vs) == 1:
			relation = "first last memento"
		case i == 0:
			relation = "first memento"
		case i == len(vs)-1:
			relation = "last memento"
		}
		fmt.Fprintf(&sb, ",\n<%s>;rel=\"%s\";datetime=\"%s\"", b.docURL(layout.Memento(unixTime(vs[i].Seen), p)), relation, httpTime(&vs[i]))
	}
	sb.WriteString("\n")
	return b.sink.WriteBytes(rel, []byte(sb.String()))
}

// writePatch writes the JSON Patch from version prev to version cur and
// keeps its link for the Change Lists. A version that is not valid JSON
// gets no patch, with a warning.
func (b *versioner) writePatch(prev, cur *snapshot.Record) error {
	rel := layout.Patch(unixTime(cur.Seen), cur.Path)
	read := func(v *snapshot.Record) ([]byte, error) {
		return os.ReadFile(b.sink.Current(b.sink.Path(layout.Memento(unixTime(v.Seen), v.Path))))
	}
	old, err := read(prev)
	if err != nil {
		return fmt.Errorf("patch %s: %w", rel, err)
	}
	now, err := read(cur)
	if err != nil {
		return fmt.Errorf("patch %s: %w", rel, err)
	}
	patch, err := jsonPatch(old, now)
	if err != nil {
		b.warn(WarnJSONPatch, cur.Path, fmt.Sprintf("no JSON Patch for this update: %v", err))
		return nil
	}
	if err := b.sink.WriteBytes(rel, patch); err != nil {
		return err
	}
	r := snapshot.Record{Size: int64(len(patch)), Digests: snapshot.DigestsOf(patch)}
	r.SetType(layout.TypePatch)
	l := b.linker.describedLink(rs.RelPatch, b.docURL(rel), &r)
	l.Modified = unixTime(0) // a patch has no modification time of its own
	if b.linker.patches == nil {
		b.linker.patches = map[string]*rs.Link{}
	}
	b.linker.patches[rel] = &l
	return nil
}
