package generator

// The files derived from a resource's kept versions (versions.go): its
// TimeMap (RFC 7089, application/link-format), which lists them, and the
// JSON Patches (RFC 6902) from each JSON version to the next.

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"strings"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
)

// writeTimeMap writes the TimeMap of a resource's versions vs (RFC 7089
// §5.1.1): the original, the TimeMap itself, and every memento with its
// datetime. Unless rewrite says the versions changed since the last
// build, or the output may not hold its TimeMap (see recheck), the last
// build's is trusted without being read: as it is when the output is
// trusted, else when one of the right length is there.
func (b *versioner) writeTimeMap(vs []snapshot.Record, rewrite bool) error {
	rel := layout.TimeMap(vs[0].Path)
	if !rewrite && b.trusted {
		b.publish(rel, false)
		return nil
	}
	data := b.timeMap(vs)
	if !rewrite && b.present(rel, int64(len(data))) {
		b.publish(rel, false)
		return nil
	}
	if err := b.sink.WriteBytes(rel, data); err != nil {
		return err
	}
	b.noteVersionFile(rel)
	return nil
}

// present reports whether the output holds a regular file at rel, of size
// bytes unless size is negative.
func (b *versioner) present(rel string, size int64) bool {
	info, err := os.Lstat(b.sink.Path(rel))
	return err == nil && info.Mode().IsRegular() && (size < 0 || info.Size() == size)
}

// timeMap returns the TimeMap of a resource's versions vs, oldest first.
func (b *versioner) timeMap(vs []snapshot.Record) []byte {
	p := vs[0].Path
	var sb strings.Builder
	httpTime := func(v *snapshot.Record) string { return unixTime(v.Seen).Format(http.TimeFormat) }
	fmt.Fprintf(&sb, "<%s>;rel=\"original\",\n", b.resURL(p))
	fmt.Fprintf(&sb, "<%s>;rel=\"self\";type=\"%s\";from=\"%s\";until=\"%s\"", b.docURL(layout.TimeMap(p)), layout.TypeTimeMap, httpTime(&vs[0]), httpTime(&vs[len(vs)-1]))
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
	return []byte(sb.String())
}

// keepPatches publishes the patches of a resource's versions vs, oldest
// first, where patches applies: from each JSON version to the next, and
// marks the versions patched. A patch published by an earlier build is
// trusted without being made again, unless recheck says otherwise or a
// Change List of this build links to it (its link carries its digests);
// those that no longer apply become obsolete.
func (b *versioner) keepPatches(vs []snapshot.Record, patches bool) error {
	for k := range vs {
		v := &vs[k]
		rel := layout.Patch(unixTime(v.Seen), v.Path)
		if k == 0 || !patches || !isJSON(v) || !isJSON(&vs[k-1]) {
			if v.Patched {
				b.obsolete = append(b.obsolete, rel)
				v.Patched = false
			}
			continue
		}
		linked := b.linker.linksTo(v)
		if v.Patched && !b.recheck && !linked && (b.trusted || b.present(rel, -1)) {
			b.publish(rel, false)
			continue
		}
		ok, err := b.writePatch(&vs[k-1], v, linked)
		if err != nil {
			return err
		}
		if !ok && v.Patched {
			b.obsolete = append(b.obsolete, rel)
		}
		v.Patched = ok
	}
	return nil
}

// writePatch writes the JSON Patch from version prev to version cur and,
// when linked, keeps its link for the Change Lists. A version that is not
// valid JSON gets no patch, with a warning; ok says whether it got one.
func (b *versioner) writePatch(prev, cur *snapshot.Record, linked bool) (ok bool, err error) {
	rel := layout.Patch(unixTime(cur.Seen), cur.Path)
	read := func(v *snapshot.Record) ([]byte, error) {
		return os.ReadFile(b.sink.Current(b.sink.Path(layout.Memento(unixTime(v.Seen), v.Path))))
	}
	var now []byte
	old, err := read(prev)
	if err == nil {
		now, err = read(cur)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && b.trusted {
			err = fmt.Errorf("%w (the output lost a kept version since the last build; build with --verify to restore it)", err)
		}
		return false, fmt.Errorf("patch %s: %w", rel, err)
	}
	patch, err := jsonPatch(old, now)
	if err != nil {
		// Said once, by the build that found the update: every later
		// build meets the same two versions, and tries them again only
		// because the state does not record that they failed.
		if cur.Seen == b.now {
			b.warn(WarnJSONPatch, cur.Path, fmt.Sprintf("no JSON Patch for this update: %v", err))
		}
		return false, nil
	}
	if err := b.sink.WriteBytes(rel, patch); err != nil {
		return false, err
	}
	b.noteVersionFile(rel)
	if !linked {
		return true, nil
	}
	r := snapshot.Record{Size: int64(len(patch)), Digests: snapshot.DigestsOf(patch)}
	r.SetType(layout.TypePatch)
	l := b.linker.describedLink(rs.RelPatch, b.docURL(rel), &r)
	l.Modified = unixTime(0) // a patch has no modification time of its own
	if b.linker.patches == nil {
		b.linker.patches = map[string]*rs.Link{}
	}
	b.linker.patches[rel] = &l
	return true, nil
}
