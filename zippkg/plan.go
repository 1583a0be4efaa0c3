package zippkg

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"iter"
	"math/bits"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
)

// DefaultMaxBytes is the default package size limit, 1 GiB.
const DefaultMaxBytes = 1 << 30

// Limits bound one package. Zero fields take their defaults.
type Limits struct {
	MaxBytes   int64 // estimated package size; 0: DefaultMaxBytes
	MaxEntries int   // bitstreams; 0: rs.MaxEntries (50,000)
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxEntries <= 0 || l.MaxEntries > rs.MaxEntries {
		l.MaxEntries = rs.MaxEntries
	}
	return l
}

// Item is a bitstream to plan: its manifest path and its size.
type Item struct {
	Path string
	Size int64
}

// Range is one planned package: items[Start:End] of the planned slice, and
// Bytes, an upper bound of its size in bytes, as long as its <loc> values
// are not much longer than its paths: the bitstream sizes, plus deflate's
// worst-case growth of incompressible data (a few bytes per 64 KiB block,
// bounded here by 1/8192), plus per-bitstream and per-package overheads.
type Range struct {
	Start, End int
	Bytes      int64
}

// The overheads behind Range.Bytes: per bitstream, its ZIP headers, data
// descriptor, Zip64 and timestamp extras and its share of the deflated
// manifest, plus three times the path for the two ZIP names and the <loc>
// and path attribute; per package, the manifest root and the end records.
const (
	entryOverhead   = 1024
	packageOverhead = 4096
)

func itemCost(it Item) int64 {
	return it.Size + it.Size/8192 + entryOverhead + 3*int64(len(it.Path))
}

// Plan partitions items, sorted by strictly increasing Path in rsgen's one
// path order (layout.ComparePaths, the order of a walk), into packages
// of contiguous ranges within lim; a bitstream too big for any package
// gets one of its own. The ranges depend on the paths and on the sizes of
// the items of each range and its enclosing range only, which keeps them
// stable from build to build; doc.go tells how. Plan holds 9 bytes per
// item, not the items: a Resource Dump of millions of files is planned
// from its records as they are read.
func Plan(items iter.Seq[Item], lim Limits) ([]Range, error) {
	p := planner{lim: lim.withDefaults(), cost: []int64{0}}
	last, first := "", true
	for it := range items {
		if !first && layout.ComparePaths(last, it.Path) >= 0 {
			return nil, fmt.Errorf("zippkg: plan: %s after %s: paths not in strictly increasing order", it.Path, last)
		}
		if it.Size < 0 {
			return nil, fmt.Errorf("zippkg: plan: %s: negative size %d", it.Path, it.Size)
		}
		p.level = append(p.level, pathLevel(it.Path))
		p.cost = append(p.cost, p.cost[len(p.cost)-1]+itemCost(it))
		last, first = it.Path, false
	}
	if n := len(p.level); n > 0 {
		p.split(0, n)
	}
	return p.out, nil
}

// pathLevel is the number of leading zero bits of the SHA-256 of the path:
// level k or more has probability 2^-k, whatever the names look like.
func pathLevel(path string) uint8 {
	sum := sha256.Sum256([]byte(path))
	return uint8(bits.LeadingZeros64(binary.BigEndian.Uint64(sum[:8])))
}

type planner struct {
	lim   Limits
	level []uint8
	cost  []int64 // cost[i] is the summed itemCost of items[:i]
	out   []Range
}

// split emits [lo, hi) if it fits. Else it cuts the range before each of
// its items, other than the first, that has the highest level among them;
// runs of adjacent pieces that fit together become one package, and each
// piece too big on its own is split in turn.
func (p *planner) split(lo, hi int) {
	if hi-lo == 1 || p.fits(lo, hi) {
		p.emit(lo, hi)
		return
	}
	top := p.topLevel(lo, hi)
	run := -1 // start of the pending run of pieces, which ends at start
	start := lo
	for end := lo + 1; end <= hi; end++ {
		if end < hi && p.level[end] != top {
			continue
		}
		switch { // the piece [start, end)
		case run >= 0 && p.fits(run, end):
		case p.fits(start, end):
			p.emitRun(run, start)
			run = start
		default:
			p.emitRun(run, start)
			run = -1
			p.split(start, end)
		}
		start = end
	}
	p.emitRun(run, hi)
}

// topLevel returns the highest level of items[lo+1:hi].
func (p *planner) topLevel(lo, hi int) uint8 {
	top := p.level[lo+1]
	for _, l := range p.level[lo+2 : hi] {
		top = max(top, l)
	}
	return top
}

func (p *planner) emitRun(start, end int) {
	if start >= 0 {
		p.emit(start, end)
	}
}

func (p *planner) emit(start, end int) {
	p.out = append(p.out, Range{Start: start, End: end, Bytes: p.bytes(start, end)})
}

func (p *planner) fits(lo, hi int) bool {
	return hi-lo <= p.lim.MaxEntries && p.bytes(lo, hi) <= p.lim.MaxBytes
}

func (p *planner) bytes(lo, hi int) int64 {
	return packageOverhead + p.cost[hi] - p.cost[lo]
}
