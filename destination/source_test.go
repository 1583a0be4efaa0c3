package destination_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rsgen/rsgen/destination"
	"github.com/rsgen/rsgen/rs"
)

// fakeBase is the base URL of the Sources the tests write by hand; a
// --map leads it to the test's server.
const fakeBase = "https://source.example/"

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fakeSource is a Source written by hand into a folder, document by
// document, to be as odd or as hostile as a test needs.
type fakeSource struct {
	t   *testing.T
	dir string
	srv *folders
}

func newFakeSource(t *testing.T) *fakeSource {
	t.Helper()
	dir := t.TempDir()
	return &fakeSource{t: t, dir: dir, srv: serveFolders(t, map[string]string{"/": dir})}
}

// options returns the options of a sync of the fake Source into dir.
func (f *fakeSource) options(dir string) destination.Options {
	return destination.Options{Source: fakeBase, Dir: dir, Maps: []destination.Map{{From: fakeBase, To: f.srv.URL()}}}
}

// file writes a resource at path p.
func (f *fakeSource) file(p, content string) {
	f.t.Helper()
	full := filepath.Join(f.dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// doc writes a document at path p.
func (f *fakeSource) doc(p string, root rs.Root, md rs.MD, entries ...rs.Entry) {
	f.t.Helper()
	full := filepath.Join(f.dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		f.t.Fatal(err)
	}
	out, err := os.Create(full)
	if err != nil {
		f.t.Fatal(err)
	}
	defer out.Close()
	w := rs.NewWriter(out, root)
	w.SetLimits(1<<30, 1<<40)
	if err := w.Start(md); err != nil {
		f.t.Fatal(err)
	}
	for i := range entries {
		if err := w.Entry(&entries[i]); err != nil {
			f.t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		f.t.Fatal(err)
	}
}

// skeleton writes the Source Description and a Capability List naming
// the capabilities given (capability → path).
func (f *fakeSource) skeleton(caps map[string]string) {
	f.doc(".well-known/resourcesync", rs.URLSet, rs.MD{Capability: rs.CapDescription},
		rs.Entry{Loc: fakeBase + "capabilitylist.xml", MD: rs.MD{Capability: rs.CapCapabilityList}})
	var entries []rs.Entry
	for _, c := range []string{rs.CapResourceList, rs.CapResourceDump, rs.CapChangeList, rs.CapChangeDump, rs.CapChangeListArchive} {
		if p, ok := caps[c]; ok {
			entries = append(entries, rs.Entry{Loc: fakeBase + p, MD: rs.MD{Capability: c}})
		}
	}
	f.doc("capabilitylist.xml", rs.URLSet, rs.MD{Capability: rs.CapCapabilityList}, entries...)
}

// res is an entry for the resource at path p holding content, with its
// length and SHA-256.
func res(p, content string) rs.Entry {
	sum := sha256.Sum256([]byte(content))
	return rs.Entry{Loc: fakeBase + p, Lastmod: t0, MD: rs.MD{Hash: "sha-256:" + hex.EncodeToString(sum[:]), Length: int64(len(content)), HasLength: true}}
}

// change is a change event for the resource at p, holding content unless
// it is a deletion.
func change(kind, p, content string, at time.Time) rs.Entry {
	e := res(p, content)
	if kind == rs.ChangeDeleted {
		e.MD = rs.MD{}
	}
	e.Lastmod, e.MD.Change, e.MD.Datetime = at, kind, at
	return e
}

// resources writes the files and a Resource List of them, at at.
func (f *fakeSource) resources(at time.Time, files map[string]string) {
	var entries []rs.Entry
	for p, c := range files {
		f.file(p, c)
		entries = append(entries, res(p, c))
	}
	f.doc("resourcelist.xml", rs.URLSet, rs.MD{Capability: rs.CapResourceList, At: at}, entries...)
}
