package zippkg

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rsgen/rsgen/rs"
)

// Kind tells which of the two manifest capabilities a package carries.
type Kind int

// The two kinds of package.
const (
	ResourceDump Kind = iota // resourcedump-manifest: the state at At
	ChangeDump               // changedump-manifest: the changes in [From, Until]
)

// Manifest describes one package: the root of its manifest.xml and one Entry
// per <url>, in package order. The same value drives NewWriter and
// WriteManifest, which is what makes a published copy of the manifest
// byte-equal to the packaged one.
type Manifest struct {
	Kind Kind
	// Up is the URI of the Capability List (rs:ln rel="up"). Required.
	Up string
	// At (required) and Completed (optional) time a Resource Dump package.
	At, Completed time.Time
	// From (required) and Until (optional) bound a Change Dump package.
	From, Until time.Time
	// Entries, at most rs.MaxEntries of them. A Resource Dump lists them in
	// any fixed order (rsgen: by path); a Change Dump in forward
	// chronological order.
	Entries []Entry
}

// Entry is one <url> of a manifest: one bitstream in the package, or, in a
// Change Dump, a deletion, which has no bitstream.
type Entry struct {
	Loc     string    // URI of the resource. Required.
	Lastmod time.Time // optional; also the bitstream's ZIP timestamp
	// Change and Datetime: Change Dump only. Change is required there.
	Change   string
	Datetime time.Time
	// Path is the bitstream's place in the package, with a leading slash;
	// its ZIP entry name is Path without that slash. Empty for deletions.
	Path string
	// Length is the bitstream's size in bytes; it is always published and
	// always checked while packaging.
	Length int64
	// Hash is the published digest list, "alg:hex" separated by spaces
	// (md5, sha-1, sha-256); every listed digest is recomputed and checked
	// while packaging. Optional.
	Hash string
	Type string // media type; recommended; selects the ZIP method
}

// ManifestName is the ZIP entry name of the manifest, always the first
// entry of a package.
const ManifestName = "manifest.xml"

// hasBitstream reports whether e has bytes in the package.
func (e *Entry) hasBitstream() bool { return e.Change != rs.ChangeDeleted }

// capability returns the manifest's capability value.
func (m *Manifest) capability() string {
	if m.Kind == ChangeDump {
		return rs.CapChangeDumpManifest
	}
	return rs.CapResourceDumpManifest
}

// time returns the manifest's own time: the ZIP timestamp of manifest.xml
// and of entries without Lastmod.
func (m *Manifest) time() time.Time {
	switch {
	case m.Kind == ResourceDump:
		return m.At
	case !m.Until.IsZero():
		return m.Until
	}
	return m.From
}

// WriteManifest writes the manifest document of m to w. NewWriter stores
// exactly these bytes as manifest.xml, so this is how to publish the copy a
// Resource Dump or Change Dump links to with rel="contents".
func WriteManifest(w io.Writer, m *Manifest) error {
	if err := m.validate(); err != nil {
		return err
	}
	return m.write(w)
}

func (m *Manifest) write(w io.Writer) error {
	xw := rs.NewWriter(w, rs.URLSet)
	md := rs.MD{Capability: m.capability(), At: m.At, Completed: m.Completed, From: m.From, Until: m.Until}
	if err := xw.Start(md, rs.Link{Rel: rs.RelUp, Href: m.Up}); err != nil {
		return fmt.Errorf("zippkg: write manifest: %w", err)
	}
	for i := range m.Entries {
		e := &m.Entries[i]
		re := rs.Entry{Loc: e.Loc, Lastmod: e.Lastmod, MD: rs.MD{
			Change: e.Change, Datetime: e.Datetime, Hash: e.Hash, Type: e.Type, Path: e.Path,
			Length: e.Length, HasLength: e.hasBitstream(),
		}}
		if err := xw.Entry(&re); err != nil {
			return fmt.Errorf("zippkg: write manifest entry %s: %w", e.Loc, err)
		}
	}
	if err := xw.Close(); err != nil {
		return fmt.Errorf("zippkg: write manifest: %w", err)
	}
	return nil
}

// ErrInvalidManifest is returned by NewWriter, Write and WriteManifest,
// wrapped with the offending entry, when a Manifest breaks the rules of
// spec §11.2 and §13.2 or of this package; nothing has been written then.
var ErrInvalidManifest = errors.New("invalid manifest")

func (m *Manifest) validate() error {
	if err := m.validateRoot(); err != nil {
		return fmt.Errorf("zippkg: %w: %v", ErrInvalidManifest, err)
	}
	seen := map[string]struct{}{"/" + ManifestName: {}}
	var last time.Time
	for i := range m.Entries {
		e := &m.Entries[i]
		if err := m.validateEntry(e, last, seen); err != nil {
			return fmt.Errorf("zippkg: %w: entry %d (%s): %v", ErrInvalidManifest, i, e.Loc, err)
		}
		if !e.Datetime.IsZero() {
			last = e.Datetime
		}
	}
	return nil
}

func (m *Manifest) validateRoot() error {
	switch {
	case m.Up == "":
		return errors.New("no up link")
	case len(m.Entries) > rs.MaxEntries:
		return fmt.Errorf("%d entries, more than %d", len(m.Entries), rs.MaxEntries)
	case m.Kind == ResourceDump && m.At.IsZero():
		return errors.New("resource dump without at")
	case m.Kind == ResourceDump && !(m.From.IsZero() && m.Until.IsZero()):
		return errors.New("resource dump with from or until")
	case m.Kind == ChangeDump && m.From.IsZero():
		return errors.New("change dump without from")
	case m.Kind == ChangeDump && !(m.At.IsZero() && m.Completed.IsZero()):
		return errors.New("change dump with at or completed")
	case m.Kind == ChangeDump && !m.Until.IsZero() && m.Until.Before(m.From):
		return errors.New("until before from")
	case m.Kind != ResourceDump && m.Kind != ChangeDump:
		return fmt.Errorf("unknown kind %d", m.Kind)
	}
	return nil
}

func (m *Manifest) validateEntry(e *Entry, last time.Time, seen map[string]struct{}) error {
	if e.Loc == "" {
		return errors.New("no loc")
	}
	if err := m.validateChange(e, last); err != nil {
		return err
	}
	if !e.hasBitstream() {
		if e.Path != "" || e.Hash != "" || e.Length != 0 {
			return errors.New("deletion with path, hash or length")
		}
		return nil
	}
	if err := validatePath(e.Path); err != nil {
		return err
	}
	if _, dup := seen[e.Path]; dup {
		return fmt.Errorf("path %s used twice", e.Path)
	}
	seen[e.Path] = struct{}{}
	if e.Length < 0 {
		return fmt.Errorf("negative length %d", e.Length)
	}
	_, err := parseHash(e.Hash)
	return err
}

func (m *Manifest) validateChange(e *Entry, last time.Time) error {
	if m.Kind == ResourceDump {
		if e.Change != "" || !e.Datetime.IsZero() {
			return errors.New("change or datetime in a resource dump")
		}
		return nil
	}
	switch e.Change {
	case rs.ChangeCreated, rs.ChangeUpdated, rs.ChangeDeleted:
	default:
		return fmt.Errorf("change %q is not created, updated or deleted", e.Change)
	}
	if e.Datetime.IsZero() {
		return nil
	}
	switch {
	case e.Datetime.Before(last):
		return errors.New("datetime out of forward chronological order")
	case e.Datetime.Before(m.From), !m.Until.IsZero() && e.Datetime.After(m.Until):
		return errors.New("datetime outside [from, until]")
	}
	return nil
}
