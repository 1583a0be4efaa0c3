package checker

import (
	"archive/zip"
	"fmt"
	"math"
	"sort"
)

// deflateMaxRatio is the most deflate compresses: 1032 to 1 (a stored
// entry is 1 to 1).
const deflateMaxRatio = 1032

// unzipFloor is what any package may decompress to whatever its ratio:
// small packages of very compressible files are common and harmless.
const unzipFloor = 16 << 20

// admitZip checks a package before anything in it is decompressed and
// returns the rule and the reason to refuse it, if any.
//
// A ZIP file whose entries overlap is invalid: it is how a zip bomb of a
// megabyte expands one compressed stream thousands of times. The sizes
// the entries declare bound what they decompress to, since archive/zip
// fails a read past them; together they must stay within MaxUnzipRatio
// times the package's size (or unzipFloor) and, with the packages before
// it, within MaxUnzipBytes. An admitted package is charged to the check.
func (w *packageChecker) admitZip(zr *zip.Reader, size int64) (rule, msg string) {
	if msg := overlap(zr, size); msg != "" {
		return "zip-invalid", msg
	}
	var total uint64
	for _, f := range zr.File {
		if total+f.UncompressedSize64 < total {
			total = math.MaxUint64
			break
		}
		total += f.UncompressedSize64
	}
	ratio := uint64(w.opts.MaxUnzipRatio)
	if limit := max(ratio*uint64(size), unzipFloor); total > limit {
		return "zip-limit", fmt.Sprintf("its files decompress to %d bytes, more than %d times its %d bytes (a zip bomb?)", total, ratio, size)
	}
	budget := uint64(w.opts.MaxUnzipBytes)
	if spent := uint64(w.unzipped.Load()); total > budget-min(spent, budget) {
		return "zip-limit", fmt.Sprintf("its files decompress to %d bytes; with the %d bytes of the packages before it, that passes --max-unzip %d", total, spent, budget)
	}
	w.unzipped.Add(int64(total))
	return "", ""
}

// overlap returns how two entries of a ZIP file of size bytes overlap or
// leave the file, or "" when none does. An entry spans its local header,
// then its compressed data, which DataOffset finds by reading the header.
// The header may end with extra fields of unknown length: the span starts
// as if it had none, never before the entry's true start, so that the
// test raises no false alarm and still catches entries that share data.
func overlap(zr *zip.Reader, size int64) string {
	type span struct {
		start, end uint64
		name       string
	}
	spans := make([]span, 0, len(zr.File))
	for _, f := range zr.File {
		off, err := f.DataOffset()
		if err != nil {
			return fmt.Sprintf("entry %s: %v", f.Name, err)
		}
		end := uint64(off) + f.CompressedSize64
		if end < uint64(off) || end > uint64(size) {
			return fmt.Sprintf("entry %s ends past the end of the file", f.Name)
		}
		start := uint64(max(off-30-int64(len(f.Name)), 0))
		spans = append(spans, span{start: start, end: end, name: f.Name})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	for i := 1; i < len(spans); i++ {
		if spans[i].start < spans[i-1].end {
			return fmt.Sprintf("entries %s and %s overlap", spans[i-1].name, spans[i].name)
		}
	}
	return ""
}
