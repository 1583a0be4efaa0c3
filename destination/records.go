package destination

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
)

// The records the state keeps on disk, one per line, fields separated by
// spaces: strings percent-encoded (layout.AppendEscapedPath, so that no
// byte of a name can end a field or a line), times as Unix nanoseconds,
// digests in hex, "-" for what is not known. Lines sort by path in walk
// order (layout.ComparePaths), the order of a walk of DIR.

// record is what the state knows of one mirrored file of DIR.
type record struct {
	path    string
	length  int64
	sums    sums
	lastmod time.Time // as the Source listed it when the file was verified
	changed time.Time // the datetime of the last change event applied; zero from a Resource List or dump
	stamp   stamp     // the file as it was written, to tell when something else changed it
}

// stamp is what stat says of a file: a file whose stamp is unchanged is
// trusted to hold the bytes that were verified.
type stamp struct {
	size, mtime, ctime int64
	ino                uint64
}

// matches reports whether the record's file holds bytes that f
// describes, as far as both tell: every digest both know agrees, the
// lengths agree, and, when f gives no digest, the lastmods agree. A
// fixity that gives nothing to compare never matches.
func (r *record) matches(f *fixity) bool {
	if f.length >= 0 && f.length != r.length {
		return false
	}
	compared := false
	for alg, want := range f.sums {
		if want != nil && r.sums[alg] != nil {
			if !bytes.Equal(want, r.sums[alg]) {
				return false
			}
			compared = true
		}
	}
	if compared {
		return true
	}
	if f.hasHash() {
		return false // digests of algorithms the record lacks: verify the file again
	}
	return !f.lastmod.IsZero() && f.lastmod.Equal(r.lastmod) && f.length >= 0
}

// knowsAlgorithmOf reports whether the record has a digest of an
// algorithm f gives.
func (r *record) knowsAlgorithmOf(f *fixity) bool {
	for alg, want := range f.sums {
		if want != nil && r.sums[alg] != nil {
			return true
		}
	}
	return false
}

// storedRecord is a line of the inventory with its path read and the
// rest left until needed: a sync that applies a few changes to a large
// mirror reads every line, and parses and writes anew only those few.
type storedRecord struct {
	path string
	line []byte // without its newline
}

// record parses the whole line.
func (s *storedRecord) record() (record, error) { return parseRecord(s.line) }

func parseStored(line []byte) (storedRecord, error) {
	field, _, _ := bytes.Cut(line, []byte{' '})
	p, err := url.PathUnescape(string(field))
	if err != nil {
		return storedRecord{}, fmt.Errorf("a record line: %w", err)
	}
	return storedRecord{path: p, line: bytes.Clone(line)}, nil
}

func appendStored(b []byte, s *storedRecord) []byte { return append(append(b, s.line...), '\n') }

// want is what a document asks of one path: a Resource List entry, or a
// change event (change and at set) from a Change List or Change Dump.
type want struct {
	path   string
	loc    string
	fix    fixity
	change string    // "" from a Resource List; rs.ChangeCreated, ChangeUpdated or ChangeDeleted
	at     time.Time // the event's datetime, else its lastmod
	seq    int64     // the order in which it was read, to break ties
}

// op is a line of the journal: a file written (its record) or removed.
type op struct {
	del bool
	rec record
	seq int64
}

func comparePaths(a, b string) int { return layout.ComparePaths(a, b) }

func compareWants(a, b *want) int {
	if c := comparePaths(a.path, b.path); c != 0 {
		return c
	}
	if c := a.at.Compare(b.at); c != 0 {
		return c
	}
	return cmpInt(a.seq, b.seq)
}

func compareOps(a, b *op) int {
	if c := comparePaths(a.rec.path, b.rec.path); c != 0 {
		return c
	}
	return cmpInt(a.seq, b.seq)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fields reads space-separated fields from a line.
type fields struct {
	line []byte
	err  error
}

func (f *fields) next() []byte {
	if f.err != nil {
		return nil
	}
	if len(f.line) == 0 {
		f.err = errors.New("too few fields")
		return nil
	}
	field, rest, _ := bytes.Cut(f.line, []byte{' '})
	f.line = rest
	return field
}

func (f *fields) str() string {
	s, err := url.PathUnescape(string(f.next()))
	if err != nil && f.err == nil {
		f.err = err
	}
	return s
}

func (f *fields) int() int64 {
	b := f.next()
	if f.err != nil {
		return 0
	}
	if string(b) == "-" {
		return -1
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		f.err = err
	}
	return n
}

func (f *fields) time() time.Time {
	n := f.int()
	if n == -1 || f.err != nil {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func (f *fields) sums() sums {
	var s sums
	for alg := range rs.NumHashAlgorithms {
		b := f.next()
		if f.err != nil || string(b) == "-" {
			continue
		}
		sum, err := hex.AppendDecode(nil, b)
		if err != nil {
			f.err = err
		}
		s[alg] = sum
	}
	return s
}

func (f *fields) done(what string) error {
	if f.err == nil && len(f.line) > 0 {
		f.err = errors.New("too many fields")
	}
	if f.err != nil {
		return fmt.Errorf("a %s line: %w", what, f.err)
	}
	return nil
}

func appendStr(b []byte, s string) []byte {
	return append(layout.AppendEscapedPath(b, s), ' ')
}

func appendInt(b []byte, n int64) []byte {
	if n < 0 {
		return append(b, "- "...)
	}
	return append(strconv.AppendInt(b, n, 10), ' ')
}

func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, "- "...)
	}
	return append(strconv.AppendInt(b, t.UnixNano(), 10), ' ')
}

func appendSums(b []byte, s *sums) []byte {
	for _, sum := range s {
		if sum == nil {
			b = append(b, "- "...)
		} else {
			b = append(hex.AppendEncode(b, sum), ' ')
		}
	}
	return b
}

// endLine replaces the trailing space of a line with its newline.
func endLine(b []byte) []byte { b[len(b)-1] = '\n'; return b }

func appendRecord(b []byte, r *record) []byte {
	b = appendStr(b, r.path)
	b = appendInt(b, r.length)
	b = appendTime(b, r.lastmod)
	b = appendTime(b, r.changed)
	b = appendInt(b, r.stamp.size)
	b = appendInt(b, r.stamp.mtime)
	b = appendInt(b, r.stamp.ctime)
	b = appendInt(b, int64(r.stamp.ino))
	b = appendSums(b, &r.sums)
	return endLine(b)
}

func readRecord(f *fields) record {
	r := record{path: f.str(), length: f.int(), lastmod: f.time(), changed: f.time()}
	r.stamp = stamp{size: f.int(), mtime: f.int(), ctime: f.int(), ino: uint64(f.int())}
	r.sums = f.sums()
	return r
}

func parseRecord(line []byte) (record, error) {
	f := fields{line: line}
	r := readRecord(&f)
	return r, f.done("record")
}

func appendWant(b []byte, w *want) []byte {
	b = appendStr(b, w.path)
	b = appendStr(b, w.loc)
	b = append(b, changeCode(w.change), ' ')
	b = appendTime(b, w.at)
	b = appendInt(b, w.seq)
	b = appendInt(b, w.fix.length)
	b = appendTime(b, w.fix.lastmod)
	b = appendSums(b, &w.fix.sums)
	return endLine(b)
}

func parseWant(line []byte) (want, error) {
	f := fields{line: line}
	w := want{path: f.str(), loc: f.str(), change: changeOf(f.next())}
	w.at, w.seq = f.time(), f.int()
	w.fix = fixity{length: f.int(), lastmod: f.time(), sums: f.sums()}
	return w, f.done("wanted")
}

func changeCode(change string) byte {
	switch change {
	case rs.ChangeCreated:
		return 'c'
	case rs.ChangeUpdated:
		return 'u'
	case rs.ChangeDeleted:
		return 'd'
	}
	return 'l' // listed in a Resource List
}

func changeOf(code []byte) string {
	switch string(code) {
	case "c":
		return rs.ChangeCreated
	case "u":
		return rs.ChangeUpdated
	case "d":
		return rs.ChangeDeleted
	}
	return ""
}

func appendOp(b []byte, o *op) []byte {
	if o.del {
		b = append(b, "D "...)
		b = appendInt(b, o.seq)
		b = appendStr(b, o.rec.path)
		return endLine(b)
	}
	b = append(b, "P "...)
	b = appendInt(b, o.seq)
	return appendRecord(b, &o.rec)
}

func parseOp(line []byte) (op, error) {
	f := fields{line: line}
	kind := string(f.next())
	o := op{del: kind == "D", seq: f.int()}
	switch kind {
	case "D":
		o.rec.path = f.str()
	case "P":
		o.rec = readRecord(&f)
	default:
		return o, fmt.Errorf("a journal line starts with %q", kind)
	}
	return o, f.done("journal")
}

// The codecs of the sorted files.
var (
	storedCodec = codec[storedRecord]{appendStored, parseStored, func(a, b *storedRecord) int { return comparePaths(a.path, b.path) }}
	wantCodec   = codec[want]{appendWant, parseWant, compareWants}
	opCodec     = codec[op]{appendOp, parseOp, compareOps}
)

// pathOf is the path of w, or of r when there is no want.
func pathOf(w *want, r *record) string {
	if w != nil {
		return w.path
	}
	return r.path
}
