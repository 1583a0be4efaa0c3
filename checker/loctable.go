package checker

import (
	"crypto/sha256"
	"iter"
	"strings"

	"github.com/rsgen/rsgen/internal/chunked"
)

// locTable holds the resources of one snapshot spread over documents (a
// Resource List and its parts, the manifests of a Resource Dump's
// packages): to find one listed twice (addSnapshot), and, for a set's
// current snapshots, to compare its capabilities and, with
// --verify-content, to read every resource once the walk is over. A
// million resources are common, so it keeps each loc once,
// prefix-compressed in the order the documents list them (a few bytes
// each in walk order), and finds a resource by a 128-bit digest of its
// loc rather than by the loc itself, which may be 2,048 bytes or more: a map keyed by the locs held each one's string, its header
// and a copy of where it was, and a check of a million resources peaked
// at 602 MB (220 MB with this table, which also finds a resource listed
// twice in a snapshot, where a second map of digests did).
type locTable struct {
	docs    []docName            // the documents the entries are in
	index   map[locKey]int32     // a loc's digest → its last entry
	locs    chunked.Strings      // every entry's loc, in the order added
	entries chunked.List[locPos] // where every entry is, in the order added
	// fixities holds every entry's fixity (encodeFixity), in the order
	// added, for the content check (keepFixities), end to end as the locs
	// are: a fixity each, behind a pointer, held its strings' headers and
	// allocations: --verify-content of a million resources peaked at 528 MB
	// that way, at 360-366 MB this way.
	fixities *chunked.Strings
}

// docName names a document, for findings.
type docName struct{ url, file string }

// keepFixities makes the table keep the fixity of the entries added from
// then on, which each gives back.
func (t *locTable) keepFixities() { t.fixities = &chunked.Strings{} }

// keepsFixities reports whether t keeps its entries' fixities.
func (t *locTable) keepsFixities() bool { return t.fixities != nil }

// keyOf returns the digest a locTable finds loc by.
func keyOf(loc string) locKey {
	sum := sha256.Sum256([]byte(loc))
	return locKey(sum[:16])
}

// locKey is a 128-bit digest of a loc.
type locKey [16]byte

// locPos is where an entry of a locTable is: a document of the table
// and a line.
type locPos struct {
	doc  int32 // index into docs
	line int32
}

// addDocument notes that the entries added next are d's, and returns
// the number their positions give it.
func (t *locTable) addDocument(d *Document) int32 {
	if t.index == nil {
		t.index = map[locKey]int32{}
	}
	t.docs = append(t.docs, docName{url: d.URL, file: d.File})
	return int32(len(t.docs) - 1)
}

// add adds an entry of the last document added, at line, with its
// fixity, and returns the entry at which the table had loc until then,
// if it had. A loc added again is found at its latest entry from then on.
func (t *locTable) add(loc string, line int, fix *fixity) (earlier locPos, repeated bool) {
	k := keyOf(loc)
	if seq, ok := t.index[k]; ok {
		earlier, repeated = *t.entries.At(int(seq)), true
	}
	seq := t.entries.Append(locPos{doc: int32(len(t.docs) - 1), line: int32(line)})
	t.locs.Append(loc)
	if t.fixities != nil {
		t.fixities.Append(encodeFixity(fix))
	}
	t.index[k] = int32(seq)
	return earlier, repeated
}

// find returns the latest entry of loc.
func (t *locTable) find(loc string) (locPos, bool) { return t.findKey(keyOf(loc)) }

func (t *locTable) findKey(k locKey) (locPos, bool) {
	seq, ok := t.index[k]
	if !ok {
		return locPos{}, false
	}
	return *t.entries.At(int(seq)), true
}

// where returns the place of an entry, for findings.
func (t *locTable) where(p locPos) where {
	d := t.docs[p.doc]
	return where{url: d.url, file: d.file, line: int(p.line)}
}

// each calls fn with every loc of the table at its latest entry, in the
// order added, with its digest, and with its fixity when the table keeps
// them and the entry has one.
func (t *locTable) each(fn func(loc string, k locKey, p locPos, fix *fixity)) {
	nextFixity := func() (string, bool) { return "", true }
	if t.fixities != nil {
		next, stop := iter.Pull(t.fixities.All())
		defer stop()
		nextFixity = next
	}
	seq := int32(0)
	for loc := range t.locs.All() {
		fix, _ := nextFixity()
		k := keyOf(loc)
		if t.index[k] == seq {
			fn(loc, k, *t.entries.At(int(seq)), decodeFixity(fix))
		}
		seq++
	}
}

// encodeFixity returns f as a string: "" for none, else a byte of flags
// (1, and 2 when it has a type), the length, a NUL, the hash, a NUL and the
// type, none of which holds a NUL (XML has none).
func encodeFixity(f *fixity) string {
	if f == nil {
		return ""
	}
	flags := "\x01"
	if f.hasType {
		flags = "\x03"
	}
	return flags + f.length + "\x00" + f.hash + "\x00" + f.typ
}

// decodeFixity returns the fixity encodeFixity gave s.
func decodeFixity(s string) *fixity {
	if s == "" {
		return nil
	}
	length, rest, _ := strings.Cut(s[1:], "\x00")
	hash, typ, _ := strings.Cut(rest, "\x00")
	return &fixity{length: length, hash: hash, typ: typ, hasType: s[0] == 3}
}
