package checker

import (
	"fmt"
)

// locIndex remembers the locs of one snapshot spread over several
// documents: the parts of a Resource List Index, the manifests of the
// packages of a Resource Dump. A resource has one state in a snapshot, so
// it is listed once in all of them (§10.1, §10.2, §11.1); the reference
// client rejects the whole Resource List when a loc repeats.
//
// Such a snapshot may hold 50,000 entries per document and many
// documents, so the index keeps, per loc, a 128-bit digest of it and where
// it was first seen (24 bytes and the map's overhead), never the loc
// itself, which may be 2,048 bytes or more. Repeats within one document
// are the document rules' (loc-duplicate); the index reports only those
// across documents.
type locIndex struct {
	what  string // "Resource List", for messages
	docs  []string
	first map[locKey]locPos
}

type locKey [16]byte

type locPos struct {
	doc  int32 // index into docs
	line int32
}

func newLocIndex(what string) *locIndex {
	return &locIndex{what: what, first: map[locKey]locPos{}}
}

// add records the entries of d and reports those listed by an earlier
// document of the snapshot. A nil index, or a nil document (a package that
// could not be read), adds nothing.
func (x *locIndex) add(w *walker, d *Document) {
	if x == nil || d == nil {
		return
	}
	doc := int32(len(x.docs))
	x.docs = append(x.docs, d.URL)
	for i := range d.Entries {
		e := &d.Entries[i]
		if e.Loc == "" {
			continue
		}
		key := keyOf(e.Loc)
		first, seen := x.first[key]
		switch {
		case !seen:
			x.first[key] = locPos{doc: doc, line: int32(e.LocLine)}
		case first.doc != doc:
			w.report(at(d, e.LocLine), "loc-duplicate", "%s is listed twice in the %s: here and in %s", e.Loc, x.what, x.where(first))
		}
	}
}

func (x *locIndex) where(p locPos) string {
	return fmt.Sprintf("%s line %d", x.docs[p.doc], p.line)
}
