package generator_test

// Shared helpers of the black-box tests: a site in a temporary folder, a
// reader of ResourceSync documents written with encoding/xml and namespace
// URIs (independent of package rs), and xmllint over a whole output tree.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
	"github.com/rsgen/rsgen/internal/sitemaptest"
	"github.com/rsgen/rsgen/internal/sysfile"
)

// Namespaces, spelled out here rather than taken from package rs.
const (
	sitemapNS = "http://www.sitemaps.org/schemas/sitemap/0.9"
	rsNS      = "http://www.openarchives.org/rs/terms/"
)

// testBaseURL is the base URL of the sites that are not served. It has a
// path, so that every test covers one; the warning that a base URL with a
// path brings is left out of the tests' warnings (see isTestWarning), and
// tested on its own.
const testBaseURL = "https://data.example.org/pub/"

// isTestWarning reports whether a note is a warning a test should see: any
// but the one about testBaseURL's path.
func isTestWarning(n generator.Note) bool {
	return n.Kind == generator.NoteWarning && n.Code != generator.WarnBaseURL
}

// t0 is the time of the first build of every scenario.
var t0 = time.Date(2024, 3, 1, 8, 0, 0, 0, time.UTC)

// site is a source tree, an output folder and a state folder under one
// temporary folder, with the configuration that builds one from the other.
type site struct {
	t      testing.TB
	Source string
	Out    string
	State  string
	Cfg    *config.Config
	mu     sync.Mutex
	Notes  []generator.Note // warnings of the last build
}

// newSite makes an empty site in a fresh temporary folder. tweak, when not
// nil, adjusts the configuration before it is validated.
func newSite(t testing.TB, baseURL string, tweak func(*config.Config)) *site {
	t.Helper()
	return newSiteIn(t, t.TempDir(), baseURL, tweak)
}

func newSiteIn(t testing.TB, root, baseURL string, tweak func(*config.Config)) *site {
	t.Helper()
	cfg := config.Default()
	cfg.Dir = root
	cfg.Source = filepath.Join(root, "src")
	cfg.Out = filepath.Join(root, "out")
	cfg.State = filepath.Join(root, "state")
	cfg.BaseURL = baseURL
	if tweak != nil {
		tweak(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	if err := os.MkdirAll(cfg.Source, 0o755); err != nil {
		t.Fatal(err)
	}
	return &site{t: t, Source: cfg.Source, Out: cfg.Out, State: cfg.State, Cfg: &cfg}
}

// build runs one build at time now and fails the test on error.
func (s *site) build(now time.Time) *generator.Summary {
	s.t.Helper()
	return s.buildWith(generator.Options{Now: now})
}

// buildWith runs one build with opts (Notify is set here) and fails the
// test on error or warning.
func (s *site) buildWith(opts generator.Options) *generator.Summary {
	s.t.Helper()
	now := opts.Now
	s.Notes = nil
	opts.Notify = func(n generator.Note) {
		if isTestWarning(n) {
			s.mu.Lock()
			s.Notes = append(s.Notes, n)
			s.mu.Unlock()
		}
	}
	sum, err := generator.Build(context.Background(), s.Cfg, opts)
	if err != nil {
		s.t.Fatalf("build at %s: %v", now.Format(time.RFC3339), err)
	}
	for _, n := range s.Notes {
		if isTestWarning(n) {
			s.t.Errorf("build at %s warned: %s: %s", now.Format(time.RFC3339), n.Path, n.Msg)
		}
	}
	generator.CheckPublished(s.t, s.Cfg)
	return sum
}

// buildExpecting runs one build at time now, like build, except that it
// expects exactly the given warnings, each named by a prefix of
// "path: message".
func (s *site) buildExpecting(now time.Time, warnings ...string) *generator.Summary {
	s.t.Helper()
	var notes []string
	var mu sync.Mutex
	sum, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: now, Notify: func(n generator.Note) {
		if isTestWarning(n) {
			mu.Lock()
			notes = append(notes, n.Path+": "+n.Msg)
			mu.Unlock()
		}
	}})
	if err != nil {
		s.t.Fatalf("build at %s: %v", now.Format(time.RFC3339), err)
	}
	slices.Sort(notes)
	slices.Sort(warnings)
	ok := len(notes) == len(warnings)
	for i := 0; ok && i < len(notes); i++ {
		ok = strings.HasPrefix(notes[i], warnings[i])
	}
	if !ok {
		s.t.Errorf("build at %s warned\n  %s\nwant\n  %s", now.Format(time.RFC3339), strings.Join(notes, "\n  "), strings.Join(warnings, "\n  "))
	}
	generator.CheckPublished(s.t, s.Cfg)
	return sum
}

// otherDeviceDir returns a new temporary folder on another file system
// than t.TempDir's, so that a build must copy resources instead of
// hard-linking them; "" when there is none. RSGEN_OTHER_FS names one,
// otherwise /dev/shm is tried.
func otherDeviceDir(t testing.TB) string {
	t.Helper()
	ref := t.TempDir()
	for _, cand := range []string{os.Getenv("RSGEN_OTHER_FS"), "/dev/shm"} {
		if cand == "" {
			continue
		}
		info, err := os.Stat(cand)
		if err != nil || !info.IsDir() || sysfile.SameDevice(cand, ref) {
			continue
		}
		dir, err := os.MkdirTemp(cand, "rsgen-test-")
		if err != nil {
			continue
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	return ""
}

// src returns the source file of slash path rel.
func (s *site) src(rel string) string { return filepath.Join(s.Source, filepath.FromSlash(rel)) }

// write writes a source file in place (same inode when it exists).
func (s *site) write(rel, content string) {
	s.t.Helper()
	p := s.src(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// replace writes a source file as a new file renamed over the old one, as
// editors and checkouts do (a new inode).
func (s *site) replace(rel, content string) {
	s.t.Helper()
	p := s.src(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.t.Fatal(err)
	}
	tmp := filepath.Join(filepath.Dir(p), ".tmp-"+filepath.Base(p))
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		s.t.Fatal(err)
	}
}

func (s *site) remove(rel string) {
	s.t.Helper()
	if err := os.Remove(s.src(rel)); err != nil {
		s.t.Fatal(err)
	}
}

func (s *site) rename(from, to string) {
	s.t.Helper()
	if err := os.MkdirAll(filepath.Dir(s.src(to)), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.Rename(s.src(from), s.src(to)); err != nil {
		s.t.Fatal(err)
	}
}

// touch sets a source file's mtime without changing its bytes.
func (s *site) touch(rel string, mtime time.Time) {
	s.t.Helper()
	if err := os.Chtimes(s.src(rel), mtime, mtime); err != nil {
		s.t.Fatal(err)
	}
}

// outFile reads an output file.
func (s *site) outFile(rel string) []byte {
	s.t.Helper()
	data, err := os.ReadFile(filepath.Join(s.Out, filepath.FromSlash(rel)))
	if err != nil {
		s.t.Fatal(err)
	}
	return data
}

// doc reads and parses the document at output path rel.
func (s *site) doc(rel string) *doc {
	s.t.Helper()
	return parseDoc(s.t, rel, s.outFile(rel))
}

// docAt reads the document at URI loc, which must lie under the base URL.
func (s *site) docAt(loc string) (string, *doc) {
	s.t.Helper()
	rel := locPath(s.t, s.Cfg.BaseURL, loc)
	return rel, s.doc(rel)
}

// readTree returns the regular files under dir by slash path, with their
// bytes.
func readTree(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			t.Errorf("%s: not a regular file", p)
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// fileState is what "unchanged" means for an output file.
type fileState struct {
	Data  []byte
	Mtime time.Time
	Inode uint64
}

// statTree returns the bytes, mtime and inode of every file under dir.
func statTree(t testing.TB, dir string) map[string]fileState {
	t.Helper()
	data := readTree(t, dir)
	states := make(map[string]fileState, len(data))
	for rel, b := range data {
		info, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		states[rel] = fileState{Data: b, Mtime: info.ModTime(), Inode: sysfile.Inode(info)}
	}
	return states
}

// diffTrees reports, one line each, the files that differ between two
// trees: missing, added, or with other bytes (and, when withMtime is set,
// other mtimes or another inode: a file renamed over the old one).
func diffTrees(want, got map[string]fileState, withMtime bool) lines {
	var diffs lines
	for _, rel := range sortedKeys(want) {
		g, ok := got[rel]
		switch {
		case !ok:
			diffs = append(diffs, "removed "+rel)
		case !bytes.Equal(want[rel].Data, g.Data):
			diffs = append(diffs, "rewritten with other bytes "+rel)
		case withMtime && !want[rel].Mtime.Equal(g.Mtime):
			diffs = append(diffs, "rewritten (mtime "+want[rel].Mtime.Format(time.RFC3339Nano)+" → "+g.Mtime.Format(time.RFC3339Nano)+") "+rel)
		case withMtime && want[rel].Inode != g.Inode:
			diffs = append(diffs, "replaced by a new file with the same bytes and mtime "+rel)
		}
	}
	for _, rel := range sortedKeys(got) {
		if _, ok := want[rel]; !ok {
			diffs = append(diffs, "added "+rel)
		}
	}
	return diffs
}

// lines prints one item a line.
type lines []string

func (l lines) String() string { return "  " + strings.Join(l, "\n  ") }

// diffBytes compares two trees by bytes only.
func diffBytes(want, got map[string][]byte) lines {
	w := map[string]fileState{}
	for k, v := range want {
		w[k] = fileState{Data: v}
	}
	g := map[string]fileState{}
	for k, v := range got {
		g[k] = fileState{Data: v}
	}
	return diffTrees(w, g, false)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ---- an independent reader of ResourceSync documents ----

// doc is a parsed ResourceSync document.
type doc struct {
	Name    string // where it came from, for messages
	Root    string // "urlset" or "sitemapindex"
	MD      md
	Links   []link
	Entries []entry
}

// The documents' elements, as the shared test reader reads them.
type (
	md    = sitemaptest.MD
	link  = sitemaptest.Link
	entry = sitemaptest.Entry
)

var xmlDecl = []byte(`<?xml version="1.0" encoding="UTF-8"?>`)

// parseDoc parses a document and checks the rules of every document: the
// XML declaration, the root in the sitemap namespace, exactly one root
// rs:md with a capability, unprefixed attributes on rs: elements, rs:ln
// with rel and href, at most one rs:md per entry, absolute <loc>s and
// whole-second UTC times.
func parseDoc(t testing.TB, name string, data []byte) *doc {
	t.Helper()
	if !bytes.HasPrefix(data, xmlDecl) {
		t.Errorf("%s: does not start with %s", name, xmlDecl)
	}
	checkAttributeNamespaces(t, name, data)
	raw, err := sitemaptest.Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	d := &doc{Name: name, Root: raw.XMLName.Local, Links: raw.Links}
	if raw.XMLName.Space != sitemapNS || (d.Root != "urlset" && d.Root != "sitemapindex") {
		t.Fatalf("%s: root is {%s}%s, want urlset or sitemapindex in %s", name, raw.XMLName.Space, d.Root, sitemapNS)
	}
	d.Entries = raw.URLs
	if d.Root == "sitemapindex" {
		if len(raw.URLs) > 0 {
			t.Errorf("%s: <url> in a <sitemapindex>", name)
		}
		d.Entries = raw.Sitemaps
	} else if len(raw.Sitemaps) > 0 {
		t.Errorf("%s: <sitemap> in a <urlset>", name)
	}
	if len(raw.MDs) != 1 || raw.MDs[0].Capability == "" {
		t.Fatalf("%s: want exactly one root rs:md with a capability, got %+v", name, raw.MDs)
	}
	d.MD = raw.MDs[0]
	for _, l := range d.Links {
		if l.Rel == "" || l.Href == "" {
			t.Errorf("%s: rs:ln without rel or href: %+v", name, l)
		}
	}
	for _, tm := range []string{d.MD.At, d.MD.Completed, d.MD.From, d.MD.Until} {
		checkTime(t, name, tm)
	}
	for i := range d.Entries {
		e := &d.Entries[i]
		if len(e.MDs) > 1 {
			t.Errorf("%s: entry %s has %d rs:md", name, e.Loc, len(e.MDs))
		}
		if u, err := url.Parse(e.Loc); err != nil || !u.IsAbs() || u.Host == "" {
			t.Errorf("%s: <loc> %q is not an absolute URI", name, e.Loc)
		}
		checkTime(t, name, e.Lastmod)
		m := e.MD()
		for _, tm := range []string{m.At, m.Completed, m.From, m.Until, m.Datetime} {
			checkTime(t, name, tm)
		}
	}
	if len(d.Entries) > 50000 {
		t.Errorf("%s: %d entries, more than 50,000", name, len(d.Entries))
	}
	if len(data) > 50*1000*1000 {
		t.Errorf("%s: %d bytes, more than 50 MB", name, len(data))
	}
	return d
}

// checkAttributeNamespaces checks that the attributes of rs:md and rs:ln
// carry no namespace prefix, and that no element is outside the two
// namespaces.
func checkAttributeNamespaces(t testing.TB, name string, data []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if se.Name.Space != sitemapNS && se.Name.Space != rsNS {
			t.Errorf("%s: element {%s}%s outside the sitemap and rs namespaces", name, se.Name.Space, se.Name.Local)
		}
		if se.Name.Space != rsNS {
			continue
		}
		for _, a := range se.Attr {
			if a.Name.Space != "" {
				t.Errorf("%s: attribute %s:%s on rs:%s must not be prefixed", name, a.Name.Space, a.Name.Local, se.Name.Local)
			}
		}
	}
}

var w3cSeconds = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)

func checkTime(t testing.TB, name, s string) {
	t.Helper()
	if s != "" && !w3cSeconds.MatchString(s) {
		t.Errorf("%s: time %q is not a whole-second UTC W3C datetime", name, s)
	}
}

// parseTime reads a time attribute; the zero Time for "".
func parseTime(t testing.TB, s string) time.Time {
	t.Helper()
	if s == "" {
		return time.Time{}
	}
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return tm
}

// link returns the href of the document's root rs:ln with relation rel.
func (d *doc) link(rel string) string {
	for _, l := range d.Links {
		if l.Rel == rel {
			return l.Href
		}
	}
	return ""
}

// sha256Of returns the sha-256 digest in an rs:md hash attribute, or "".
func sha256Of(m md) string {
	for _, h := range strings.Fields(m.Hash) {
		if v, ok := strings.CutPrefix(h, "sha-256:"); ok {
			return v
		}
	}
	return ""
}

// lengthOf returns the length attribute, or -1 when absent or bad.
func lengthOf(m md) int64 {
	n, err := strconv.ParseInt(m.Length, 10, 64)
	if err != nil || m.Length == "" {
		return -1
	}
	return n
}

// locPath returns the source path that loc names under base, checking that
// loc is correctly percent-encoded: printable ASCII only, no query or
// fragment, every '%' followed by two hex digits.
func locPath(t testing.TB, base, loc string) string {
	t.Helper()
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	rest, ok := strings.CutPrefix(loc, base)
	if !ok {
		t.Fatalf("<loc> %q is not under the base URL %q", loc, base)
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch {
		case c <= ' ' || c >= 0x7f || strings.IndexByte(`"<>\^`+"`{|}#?[]", c) >= 0:
			t.Errorf("<loc> %q: byte %q must be percent-encoded", loc, c)
		case c == '%' && (i+2 >= len(rest) || !isHex(rest[i+1]) || !isHex(rest[i+2])):
			t.Errorf("<loc> %q: bad percent-encoding", loc)
		}
	}
	p, err := url.PathUnescape(rest)
	if err != nil {
		t.Fatalf("<loc> %q: %v", loc, err)
	}
	return p
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// ---- xmllint ----

// The ResourceSync 1.1 schema (the official 0.9.1 one plus datetime), and
// the official 0.9.1 schema that destinations of spec_version 1.0 use.
const (
	schemaPath   = "../testdata/schemas/rs11/rs-all.xsd"
	schema10Path = "../testdata/schemas/rs-all.xsd"
)

// documentFiles lists the ResourceSync documents of an output tree: the
// Source Description and the .xml files under resourcesync/ but the kept
// versions of resources, as .ci/validate-xml finds them.
func documentFiles(t testing.TB, out string) []string {
	t.Helper()
	docs := []string{filepath.Join(out, ".well-known", "resourcesync")}
	mementos := filepath.Join(out, "resourcesync", "mementos")
	err := filepath.WalkDir(filepath.Join(out, "resourcesync"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p == mementos {
			return fs.SkipDir
		}
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".xml") {
			docs = append(docs, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// xmllintPath returns the xmllint binary, or "" after logging when it is
// absent and RSGEN_REQUIRE_XMLLINT is not 1 (then the test fails).
func xmllintPath(t testing.TB, schemaPath string) string {
	t.Helper()
	p, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("RSGEN_REQUIRE_XMLLINT") == "1" {
			t.Fatalf("xmllint not found and RSGEN_REQUIRE_XMLLINT=1: %v", err)
		}
		t.Log("xmllint not found: schema validation skipped (set RSGEN_REQUIRE_XMLLINT=1 to require it)")
		return ""
	}
	schema, err := filepath.Abs(schemaPath)
	if err == nil {
		_, err = os.Stat(schema)
	}
	if err != nil {
		if os.Getenv("RSGEN_REQUIRE_XMLLINT") == "1" {
			t.Fatalf("schema: %v", err)
		}
		t.Logf("schema %s not found: schema validation skipped", schemaPath)
		return ""
	}
	return p
}

// validateTree runs xmllint with the ResourceSync 1.1 schema over every
// document of an output tree. The one complaint accepted is the 2008
// Sitemap schema's demand for a <url> in a <urlset> that has no entries
// (spec §7 allows none).
func validateTree(t testing.TB, out string) {
	t.Helper()
	validateFiles(t, schemaPath, documentFiles(t, out))
}

// validateFiles runs xmllint with the schema at schemaPath over files.
func validateFiles(t testing.TB, schemaPath string, files []string) {
	t.Helper()
	bin := xmllintPath(t, schemaPath)
	if bin == "" {
		return
	}
	schema, _ := filepath.Abs(schemaPath)
	args := append([]string{"--noout", "--nonet", "--schema", schema}, files...)
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("xmllint: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	failed := false
	for _, f := range files {
		var status string
		var complaints []string
		for _, l := range lines {
			switch {
			case l == f+" validates" || l == f+" fails to validate":
				status = l
			case strings.HasPrefix(l, f+":"):
				complaints = append(complaints, l)
			}
		}
		switch {
		case status == f+" validates" && len(complaints) == 0:
		case status == f+" fails to validate" && emptyURLSetComplaint(t, f, complaints):
		default:
			t.Errorf("xmllint: %s does not validate:\n%s", f, strings.Join(append(complaints, status), "\n"))
			failed = true
		}
	}
	if failed {
		t.Logf("xmllint output:\n%s", out.String())
	}
}

func emptyURLSetComplaint(t testing.TB, f string, complaints []string) bool {
	if len(complaints) != 1 || !strings.Contains(complaints[0], "Element '{"+sitemapNS+"}urlset': Missing child element(s)") {
		return false
	}
	data, err := os.ReadFile(f)
	if err != nil {
		return false
	}
	d := parseDoc(t, f, data)
	return d.Root == "urlset" && len(d.Entries) == 0
}
