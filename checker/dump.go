package checker

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/rsgen/rsgen/rs"
)

// manifestName is the manifest's name at the top level of a package.
const manifestName = "manifest.xml"

// pkg is a dump package ready to be opened as a ZIP file.
type pkg struct {
	path string // a local file: the Source's own or a temporary copy
	temp bool
	size int64
	sums map[string][]byte
}

func (p *pkg) close() {
	if p.temp {
		os.Remove(p.path)
	}
}

// packageChecker checks the dump packages a walk finds (§11, §13): each is
// read into a temporary file, bounded (unzip.go), and its manifest and
// bitstreams checked.
type packageChecker struct{ *walker }

// checkPackage checks one package of the dump d: the package itself, its
// manifest, its bitstreams and the contents link. It returns the manifest,
// or nil when the package could not be read whole.
func (w *packageChecker) checkPackage(ctx context.Context, d *Document, e *Entry, capList string) *Document {
	p := w.loadPackage(ctx, e.Loc, e.MD, at(d, e.LocLine))
	if p == nil {
		return nil
	}
	defer p.close()
	if e.MD != nil {
		w.checkFixity(at(d, e.MD.Line), fixityOf(e.MD.Attrs), p.size, p.sums, "package-length", "package-hash", "the package")
	}
	zr, err := zip.OpenReader(p.path)
	if err != nil {
		w.report(at(d, e.LocLine), "zip-invalid", "package %s is not a valid ZIP file: %v", e.Loc, err)
		return nil
	}
	defer zr.Close()
	if rule, msg := w.admitZip(&zr.Reader, p.size); rule != "" {
		w.report(at(d, e.LocLine), rule, "package %s: %s; not read", e.Loc, msg)
		return nil
	}
	file := ""
	if !p.temp {
		file = p.path + "!/" + manifestName
	}
	manifest, sum, size := w.readManifest(ctx, zr, d, e, file, capList)
	if manifest == nil {
		return nil
	}
	w.checkManifestRange(d, e, manifest)
	w.checkBitstreams(ctx, zr, manifest)
	for i := range e.Links {
		if e.Links[i].Rel() == rs.RelContents {
			w.checkContents(ctx, d, &e.Links[i], sum, size)
		}
	}
	return manifest
}

// checkManifestRange checks the period of a Change Dump Manifest against
// its dump's (§13.1). A time the dump's entry gives alike is checked with
// the entry, by the document rules.
func (w *packageChecker) checkManifestRange(d *Document, e *Entry, m *Document) {
	if d.Capability() != rs.CapChangeDump || m.MD == nil {
		return
	}
	inner := period{}
	if v := m.MD.Attrs["from"]; !sameTime(v, mdAttr(e.MD, "from")) {
		inner.from = mdTime(m.MD, "from")
	}
	if v := m.MD.Attrs["until"]; !sameTime(v, mdAttr(e.MD, "until")) {
		inner.until = mdTime(m.MD, "until")
	}
	dump := period{from: mdTime(d.MD, "from"), until: mdTime(d.MD, "until")}
	if msg := dump.excess(inner, "Change Dump"); msg != "" {
		w.report(at(m, m.MD.Line), "package-range", "the manifest's %s (%s)", msg, d.URL)
	}
}

// loadPackage makes the package at u available as a local file and
// computes its length and digests.
func (w *packageChecker) loadPackage(ctx context.Context, u string, md *MD, from where) *pkg {
	res := w.get(ctx, u, from)
	if res == nil {
		return nil
	}
	defer res.Body.Close()
	hv, _ := md.Attr("hash")
	ds, _ := parseHash(hv)
	p := &pkg{path: res.File}
	var dst io.Writer = io.Discard
	if p.path == "" {
		tmp, err := os.CreateTemp("", "rsgen-check-*.zip")
		if err != nil {
			w.report(from, "http-fetch", "store package %s: %v", u, err)
			return nil
		}
		defer tmp.Close()
		p.path, p.temp, dst = tmp.Name(), true, tmp
	}
	var body io.Reader = res.Body
	if p.temp { // a copy takes disk: bounded
		body = io.LimitReader(res.Body, w.opts.MaxPackageBytes+1)
	}
	n, sums, err := digestsOf(io.TeeReader(body, dst), ds)
	if err != nil {
		p.close()
		w.fetchFailed(u, from, fmt.Errorf("read package %s: %w", u, err))
		return nil
	}
	if p.temp && n > w.opts.MaxPackageBytes {
		p.close()
		w.report(from, "http-limit", "package %s is larger than %d bytes (--max-package); not checked", u, w.opts.MaxPackageBytes)
		return nil
	}
	p.size, p.sums = n, sums
	return p
}

// fixity is what an rs:md says of a file's bytes: its length and hash
// attributes ("" when absent), and its type. A Resource List's entries
// keep it for the content check instead of their whole rs:md.
type fixity struct {
	length, hash string
	typ          string
	hasType      bool
}

// fixityOf returns the fixity of an rs:md's attributes.
func fixityOf(attrs map[string]string) *fixity {
	f := &fixity{length: attrs["length"], hash: attrs["hash"]}
	f.typ, f.hasType = attrs["type"]
	return f
}

// checkFixity compares the length and hash want gives with what was read.
func (w *tally) checkFixity(pos where, want *fixity, n int64, sums map[string][]byte, lengthRule, hashRule, what string) {
	if size, err := strconv.ParseInt(want.length, 10, 64); err == nil && size != n {
		w.report(pos, lengthRule, "%s has %d bytes; length says %d", what, n, size)
	}
	ds, _ := parseHash(want.hash)
	for _, d := range ds {
		if got, ok := sums[d.alg]; ok && d.sum != nil && !bytes.Equal(got, d.sum) {
			w.report(pos, hashRule, "%s has %s %x; hash says %s", what, d.alg, got, d.value)
		}
	}
}

// readManifest reads and checks the package's manifest.xml. It returns the
// manifest with the SHA-256 and length of its bytes, or nil.
func (w *packageChecker) readManifest(ctx context.Context, zr *zip.ReadCloser, d *Document, e *Entry, file, capList string) (*Document, []byte, int64) {
	var mf *zip.File
	for _, f := range zr.File {
		if f.Name == manifestName {
			mf = f
		}
	}
	if mf == nil {
		w.report(at(d, e.LocLine), "zip-manifest-missing", "package %s has no %s at its top level", e.Loc, manifestName)
		return nil, nil, 0
	}
	rc, err := mf.Open()
	if err != nil {
		w.report(at(d, e.LocLine), "zip-invalid", "package %s: open %s: %v", e.Loc, manifestName, err)
		return nil, nil, 0
	}
	defer rc.Close()
	u := e.Loc + "!/" + manifestName
	h := sha256.New()
	counter := &countWriter{w: h}
	body := io.TeeReader(entryReader{ctx: ctx, r: rc, name: manifestName}, counter)
	res := &Resource{Body: io.NopCloser(body), URL: u, File: file}
	want := rs.CapResourceDumpManifest
	if d.Capability() == rs.CapChangeDump {
		want = rs.CapChangeDumpManifest
	}
	m := w.read(res, u, want, true)
	// Hash the rest after a fatal finding; admitZip has bounded it.
	if _, err := io.Copy(io.Discard, res.Body); err != nil && m != nil {
		w.fetchFailed(u, at(m, 0), err)
		return nil, nil, 0
	}
	if m == nil {
		return nil, nil, 0
	}
	if capList != "" {
		w.checkUp(m, capList)
	}
	return m, h.Sum(nil), counter.n
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.w.Write(p)
}

// checkBitstreams compares the manifest with the files of the package.
func (w *packageChecker) checkBitstreams(ctx context.Context, zr *zip.ReadCloser, m *Document) {
	files := map[string]*zip.File{}
	for _, f := range zr.File {
		if !f.FileInfo().IsDir() && f.Name != manifestName {
			files[f.Name] = f
		}
	}
	listed := map[string]bool{}
	for _, e := range m.Entries {
		if e.MD != nil {
			w.checkBitstream(ctx, files, listed, at(m, e.MD.Line), e.MD.Attrs)
		}
		for _, l := range e.Links {
			w.checkBitstream(ctx, files, listed, at(m, l.Line), l.Attrs)
		}
	}
	for _, name := range sortedKeys(files) {
		if !listed[name] {
			w.report(at(m, 0), "zip-entry-unlisted", "package file %s is not listed in the manifest", name)
		}
	}
}

// checkBitstream checks the bitstream at an rs:md or rs:ln path.
func (w *packageChecker) checkBitstream(ctx context.Context, files map[string]*zip.File, listed map[string]bool, pos where, attrs map[string]string) {
	path, ok := attrs["path"]
	if !ok || !validPath(path) {
		return
	}
	name := path[1:]
	f, ok := files[name]
	if !ok {
		w.report(pos, "zip-path-missing", "path %s is not a file in the package", path)
		return
	}
	listed[name] = true
	if attrs["length"] == "" && attrs["hash"] == "" {
		return
	}
	rc, err := f.Open()
	if err != nil {
		w.report(pos, "zip-invalid", "open %s in the package: %v", name, err)
		return
	}
	defer rc.Close()
	ds, _ := parseHash(attrs["hash"])
	n, sums, err := digestsOf(entryReader{ctx: ctx, r: rc, name: name}, ds)
	if err != nil {
		w.fetchFailed(name, pos, err)
		return
	}
	w.checkFixity(pos, fixityOf(attrs), n, sums, "zip-length", "zip-hash", fmt.Sprintf("bitstream %s", path))
}

// checkContents compares the manifest copy a contents link leads to with
// the packaged manifest.
func (w *packageChecker) checkContents(ctx context.Context, d *Document, l *Link, sum []byte, size int64) {
	u := resolve(d.URL, l.Href())
	res := w.get(ctx, u, at(d, l.Line))
	if res == nil {
		return
	}
	defer res.Body.Close()
	n, sums, err := digestsOf(io.LimitReader(res.Body, w.opts.Limits.MaxBytes+1), []digest{{alg: "sha-256"}})
	if err != nil {
		w.fetchFailed(u, at(d, l.Line), fmt.Errorf("read %s: %w", u, err))
		return
	}
	w.count(&w.docs, u) // a manifest copy is a document of the Source
	if n != size || !bytes.Equal(sums["sha-256"], sum) {
		w.report(at(d, l.Line), "contents-mismatch", "%s (%d bytes) differs from the package's %s (%d bytes)", u, n, manifestName, size)
	}
}

func mdAttr(m *MD, name string) string {
	v, _ := m.Attr(name)
	return v
}

// entryReader reads a member of a package. It stops with the check and
// marks its errors as the package's.
type entryReader struct {
	ctx  context.Context
	r    io.Reader
	name string
}

func (e entryReader) Read(p []byte) (int, error) {
	if e.ctx.Err() != nil {
		return 0, context.Cause(e.ctx)
	}
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		err = &zipError{name: e.name, err: err}
	}
	return n, err
}

// zipError is an error reading a member of a package: the package is
// broken.
type zipError struct {
	name string
	err  error
}

func (e *zipError) Error() string { return "read " + e.name + " in the package: " + e.err.Error() }
func (e *zipError) Unwrap() error { return e.err }
