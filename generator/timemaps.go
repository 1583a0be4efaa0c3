package generator

// The files derived from a resource's kept versions (versions.go): its
// TimeMap (RFC 7089, application/link-format), which lists them, and the
// JSON Patches (RFC 6902) from each JSON version to the next; the versions
// writer publishes them.

import (
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// timeMap returns the TimeMap of a resource's versions vs, oldest first.
func timeMap(s *site, vs []snapshot.Record) []byte {
	p := vs[0].Path
	var sb strings.Builder
	httpTime := func(v *snapshot.Record) string { return unixTime(v.Seen).Format(http.TimeFormat) }
	fmt.Fprintf(&sb, "<%s>;rel=\"original\",\n", s.resURL(p))
	fmt.Fprintf(&sb, "<%s>;rel=\"self\";type=\"%s\";from=\"%s\";until=\"%s\"", s.docURL(layout.TimeMap(p)), layout.TypeTimeMap, httpTime(&vs[0]), httpTime(&vs[len(vs)-1]))
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
		fmt.Fprintf(&sb, ",\n<%s>;rel=\"%s\";datetime=\"%s\"", s.docURL(layout.Memento(unixTime(vs[i].Seen), p)), relation, httpTime(&vs[i]))
	}
	sb.WriteString("\n")
	return []byte(sb.String())
}

// readPatch returns the JSON Patch from version prev to version cur of a
// resource, made from their mementos as the sink w has them (a memento
// this build writes is staged); an error of jsonPatch when a version is
// not valid JSON is invalid.
func readPatch(w *sink.Sink, prev, cur *snapshot.Record) (patch []byte, invalid, err error) {
	read := func(v *snapshot.Record) ([]byte, error) {
		return os.ReadFile(w.Current(w.Path(layout.Memento(unixTime(v.Seen), v.Path))))
	}
	var now []byte
	old, err := read(prev)
	if err == nil {
		now, err = read(cur)
	}
	if err != nil {
		return nil, nil, err
	}
	patch, invalid = jsonPatch(old, now)
	return patch, invalid, nil
}

// patchLink returns the link of a Change List entry to the patch at rel:
// its digests, length and type, and no modification time, which a patch
// has not of its own.
func patchLink(s *site, rel string, patch []byte) rs.Link {
	r := snapshot.Record{Size: int64(len(patch)), Digests: snapshot.DigestsOf(patch)}
	r.SetType(layout.TypePatch)
	l := describedLink(s, rs.RelPatch, s.docURL(rel), &r)
	l.Modified = unixTime(0)
	return l
}
