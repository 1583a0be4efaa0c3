package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
)

// listWrite is the outcome of writing a Resource List in process.
type listWrite struct {
	elapsed time.Duration
	cpu     cpuTimes
	entries int
	parts   int
	mallocs uint64 // heap allocations while writing
}

// writeResourceLists writes a Resource List of every file of the state in
// stateDir into parts under dir, the way rsgen's generator does it
// (generator/lists.go: resourceEntries): for each record, its URI, lastmod,
// sha-256 hash, length and type, through rs.Writer, a new part whenever one
// is full. The files stay in the page cache (no fsync). Loading the state
// is not timed.
func writeResourceLists(stateDir, dir string) (listWrite, error) {
	st, err := snapshot.Load(stateDir)
	if err != nil {
		return listWrite{}, err
	}
	defer st.Close()
	if err := os.RemoveAll(dir); err != nil {
		return listWrite{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return listWrite{}, err
	}
	algs := []rs.HashAlgorithm{rs.SHA256}
	md := rs.MD{Capability: rs.CapResourceList, At: time.Unix(st.LastBuild, 0).UTC()}
	up := rs.Link{Rel: rs.RelUp, Href: layout.URL(benchBaseURL, layout.CapabilityList("default"))}
	files := make([]snapshot.Record, 0, st.NumFiles())
	for r, err := range st.Records() {
		if err != nil {
			return listWrite{}, err
		}
		files = append(files, r)
	}
	var res listWrite
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start, startCPU := time.Now(), processCPU()
	for len(files) > 0 {
		res.parts++
		written, err := writePart(filepath.Join(dir, fmt.Sprintf("part-%05d.xml", res.parts)), md, up, files, algs)
		if err != nil {
			return listWrite{}, err
		}
		if written == 0 {
			return listWrite{}, errors.New("resource list: an entry does not fit in an empty part")
		}
		res.entries += written
		files = files[written:]
	}
	res.elapsed, res.cpu = time.Since(start), processCPU().sub(startCPU)
	runtime.ReadMemStats(&after)
	res.mallocs = after.Mallocs - before.Mallocs
	return res, nil
}

// writePart writes entries for files into one part until done or full, and
// returns how many it wrote.
func writePart(path string, md rs.MD, up rs.Link, files []snapshot.Record, algs []rs.HashAlgorithm) (int, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := rs.NewWriter(f, rs.URLSet)
	if err := w.Start(md, up); err != nil {
		return 0, err
	}
	var e rs.Entry
	var loc, hash []byte // reused from entry to entry, as generator/lists.go does
	for i := range files {
		r := &files[i]
		loc = layout.AppendURL(loc[:0], benchBaseURL, r.Path)
		hash = r.Digests.AppendHash(hash[:0], algs)
		e = rs.Entry{LocBytes: loc, Lastmod: r.Lastmod(false)}
		e.MD.HashBytes = hash
		e.MD.Length, e.MD.HasLength = r.Size, true
		e.MD.Type = r.Type()
		if err := w.Entry(&e); errors.Is(err, rs.ErrDocumentFull) {
			break
		} else if err != nil {
			return 0, err
		}
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return w.Entries(), f.Close()
}
