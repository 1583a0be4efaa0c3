package deploy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/snapshot"
)

// A deploy publishes exactly the last build: every file it sends must be
// one the build wrote, with the bytes the build wrote, and every file the
// build wrote must be there. The documents describe those bytes (length
// and digests, in the lists and the TimeMaps), so a file edited in the
// output by hand, added or removed, or a source file rewritten in place
// since the build (resources are hard links to their sources), would
// publish bytes the documents do not describe. The state says what the
// build wrote: the records of the resources and of the kept versions,
// with the length and SHA-256 of their bytes; the files the state folder
// keeps and the dump packages, with theirs; and the output paths of the
// other documents, whose bytes it does not record. The deploy compares
// the output's file list, whose SHA-256s it computes anyway, with that,
// before it writes anything.

// builtFile is a file the last build wrote into the output, as the state
// records it: its output path and, where the state knows them, its length
// and SHA-256.
type builtFile struct {
	rel    string
	size   int64 // -1: unknown
	sum    [32]byte
	hasSum bool
}

// encode returns f as a string that sorts as f.rel does among the
// encoded files (no output path holds a NUL).
func (f *builtFile) encode() string {
	b := append([]byte(f.rel), 0)
	b = binary.AppendVarint(b, f.size)
	if f.hasSum {
		b = append(b, f.sum[:]...)
	}
	return string(b)
}

func decodeBuiltFile(s string) (builtFile, error) {
	rel, rest, ok := strings.Cut(s, "\x00")
	f := builtFile{rel: rel}
	size, n := binary.Varint([]byte(rest))
	if !ok || n <= 0 || len(rest)-n != 0 && len(rest)-n != len(f.sum) {
		return f, errors.New("a file of the build's list is cut short")
	}
	f.size = size
	f.hasSum = copy(f.sum[:], rest[n:]) == len(f.sum)
	return f, nil
}

// merge adds to f what g, another record of the same file, knows.
func (f *builtFile) merge(g builtFile) {
	if f.size < 0 {
		f.size = g.size
	}
	if !f.hasSum {
		f.sum, f.hasSum = g.sum, g.hasSum
	}
}

// built is what the last build recorded of its output: its files, sorted
// as the deploy's file list is (in a sorter), and the media types of those
// whose names say nothing, which the header policy needs.
type built struct {
	files *sorter
	// types holds the types of a state's records, which hold each
	// type's name once (a unique.Handle): so does the map.
	types map[string]string
}

// readBuilt reads what the build that saved st wrote into the output:
// with copyResources, the resources are there too. dir is where the
// sorter's runs go.
func readBuilt(st *snapshot.State, copyResources bool, dir string) (*built, error) {
	b := &built{files: newSorter(dir), types: map[string]string{}}
	if copyResources {
		for r, err := range st.Records() {
			if err != nil {
				b.close()
				return nil, fmt.Errorf("read the state: %w", err)
			}
			b.add(r.Path, &r)
		}
	}
	if err := b.addVersions(st); err != nil {
		b.close()
		return nil, err
	}
	for _, rel := range st.Outputs {
		b.files.add((&builtFile{rel: rel, size: -1}).encode())
	}
	for _, kept := range keptFiles(st) {
		b.files.add((&builtFile{rel: kept.Path, size: kept.Size, sum: kept.SHA256, hasSum: kept.SHA256 != [32]byte{}}).encode())
	}
	return b, nil
}

// addVersions adds the files of the kept versions: each memento, the
// patch of one a JSON Patch leads to, and the TimeMap of each resource
// that has versions.
func (b *built) addVersions(st *snapshot.State) error {
	last := ""
	for v, err := range st.Versions() {
		if err != nil {
			return fmt.Errorf("read the state: %w", err)
		}
		seen := time.Unix(v.Seen, 0)
		b.add(layout.Memento(seen, v.Path), &v)
		if v.Patched {
			b.files.add((&builtFile{rel: layout.Patch(seen, v.Path), size: -1}).encode())
		}
		if v.Path != last {
			b.files.add((&builtFile{rel: layout.TimeMap(v.Path), size: -1}).encode())
			last = v.Path
		}
	}
	return nil
}

// add adds the file at output path rel, which holds the bytes r records,
// and notes its media type when its name says nothing.
func (b *built) add(rel string, r *snapshot.Record) {
	f := builtFile{rel: rel, size: r.Size}
	f.sum, f.hasSum = r.PublishedSHA256()
	b.files.add(f.encode())
	if t := r.Type(); t != "" && layout.ContentType(rel) == "" {
		b.types[rel] = t
	}
}

// keptFiles returns the files of st whose length and SHA-256 the state
// records: the closed and archived documents, and the dump packages.
func keptFiles(st *snapshot.State) []snapshot.Kept {
	var files []snapshot.Kept
	pkg := func(p snapshot.Package) snapshot.Kept {
		return snapshot.Kept{Path: p.Path, Size: p.Length, SHA256: p.SHA256}
	}
	for _, journal := range st.Journals {
		for _, seg := range journal {
			files = append(files, seg.Kept...)
		}
	}
	for _, p := range st.Packages {
		files = append(files, pkg(p))
	}
	for _, a := range st.Archived {
		files = append(files, a.Docs...)
		for _, p := range a.Packages {
			files = append(files, pkg(p))
		}
	}
	return files
}

// sortedFiles yields the files of the build in the byte order of their paths,
// each once; it stops at the first error, which it returns through errp.
func (b *built) sortedFiles(errp *error) iter.Seq[builtFile] {
	return func(yield func(builtFile) bool) {
		var cur builtFile
		have := false
		for s := range b.files.sorted(errp) {
			f, err := decodeBuiltFile(s)
			if err != nil {
				*errp = err
				return
			}
			if have && f.rel == cur.rel {
				cur.merge(f)
				continue
			}
			if have && !yield(cur) {
				return
			}
			cur, have = f, true
		}
		if have && *errp == nil {
			yield(cur)
		}
	}
}

func (b *built) close() { b.files.close() }

// What can be wrong with a file of the output.
const (
	fileChanged = "changed since the build"
	fileMissing = "missing"
	fileStray   = "not written by the build"
)

// OutputDiffersError is returned when the output folder is not what the
// last build wrote: nothing was written.
type OutputDiffersError struct {
	// Files are the first ten files that differ, each with what is wrong;
	// Count counts them all.
	Files []string
	Count int
	// Damaged says that files the build wrote changed or are missing,
	// Stray that the output holds files the build did not write.
	Damaged, Stray bool
}

func (e *OutputDiffersError) add(rel, what string) {
	if e.Count++; len(e.Files) < 10 {
		e.Files = append(e.Files, rel+" ("+what+")")
	}
	e.Damaged = e.Damaged || what != fileStray
	e.Stray = e.Stray || what == fileStray
}

func (e *OutputDiffersError) Error() string {
	more := ""
	if e.Count > len(e.Files) {
		more = fmt.Sprintf(", and %d more", e.Count-len(e.Files))
	}
	var todo []string
	if e.Damaged {
		// A plain build trusts the output's unchanged stats: --verify
		// reads the output again and puts back what it wrote. A source
		// rewritten in place (the output's hard link to it changed too)
		// is a new version, which any build publishes.
		todo = append(todo, "run rsgen build --verify, which publishes the sources as they are now and puts back what was edited in the output")
	}
	if e.Stray {
		todo = append(todo, "remove the files the build did not write from the output (put them in the source to publish them)")
	}
	files := "files"
	if e.Count == 1 {
		files = "file"
	}
	return fmt.Sprintf("the output folder is not what the last build wrote, in %d %s: %s%s: %s, then deploy (nothing was written)",
		e.Count, files, strings.Join(e.Files, ", "), more, strings.Join(todo, "; "))
}

// checkBuilt compares the output's file list (d.files) with what the last
// build wrote, and fails with an *OutputDiffersError when they differ: a
// file whose length or SHA-256 is not the one the state records, a file
// the build did not write, a file the build wrote that is not there (and
// that the store publishes).
func (d *deployer) checkBuilt(b *built) error {
	files, f, err := openFileList(d.files)
	if err != nil {
		return err
	}
	defer f.Close()
	diff := &OutputDiffersError{}
	var sortErr error
	next, stop := iter.Pull(b.sortedFiles(&sortErr))
	defer stop()
	lf, ferr := files.next()
	bf, more := next()
	for ferr == nil && (lf != nil || more) {
		switch {
		case !more || lf != nil && lf.rel < bf.rel:
			diff.add(lf.rel, fileStray)
			lf, ferr = files.next()
		case lf == nil || bf.rel < lf.rel:
			if ok, err := d.store.Publishes(bf.rel); ok || err != nil {
				diff.add(bf.rel, fileMissing)
			}
			bf, more = next()
		default:
			if bf.size >= 0 && bf.size != lf.size || bf.hasSum && bf.sum != lf.sum {
				diff.add(lf.rel, fileChanged)
			}
			lf, ferr = files.next()
			bf, more = next()
		}
	}
	if ferr != nil {
		return fmt.Errorf("read %s: %w", d.files, ferr)
	}
	if sortErr != nil {
		return fmt.Errorf("state folder: %w", sortErr)
	}
	if diff.Count > 0 {
		return diff
	}
	return nil
}
