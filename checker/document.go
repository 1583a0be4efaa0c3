package checker

import (
	"fmt"

	"github.com/rsgen/rsgen/rs"
)

// Document is what the reader keeps of one ResourceSync document: the root's
// rs:md and rs:ln, and the entries with their loc, lastmod, rs:md and rs:ln.
// Text values are kept as written, with surrounding white space removed.
type Document struct {
	URL   string
	File  string // the local file that holds the document, if any
	Line  int    // the line of the root element
	Index bool   // the root is <sitemapindex>
	MD    *MD    // the root rs:md, nil when there is none
	Links []Link
	// Entries holds at most the reader's MaxEntries entries; EntryCount
	// counts them all.
	Entries    []Entry
	EntryCount int
	// Fatal is set when reading stopped early (malformed XML, a limit, a
	// failed read): the document is incomplete and only the finding that
	// stopped it counts.
	Fatal bool
	// readErr is the error of the source that stopped reading (a timeout,
	// a limit of the check, an interrupt), which is no fault of the XML:
	// the caller reports it.
	readErr error
}

// MD is an rs:md element: its unprefixed attributes by name.
type MD struct {
	Line  int
	Attrs map[string]string
}

// Attr returns the attribute's value and whether it is present.
func (m *MD) Attr(name string) (string, bool) {
	if m == nil {
		return "", false
	}
	v, ok := m.Attrs[name]
	return v, ok
}

// Link is an rs:ln element.
type Link struct {
	Line  int
	Attrs map[string]string
}

// Rel returns the link's relation type.
func (l *Link) Rel() string { return l.Attrs["rel"] }

// Href returns the link's target as written.
func (l *Link) Href() string { return l.Attrs["href"] }

// Entry is a <url> or <sitemap> element.
type Entry struct {
	Line       int
	Loc        string
	LocLine    int
	Lastmod    string
	LastmodLn  int
	Changefreq string
	Priority   string
	MD         *MD
	Links      []Link
}

// Capability returns the capability of the root rs:md, or "".
func (d *Document) Capability() string {
	v, _ := d.MD.Attr("capability")
	return v
}

// link returns the first root link with relation rel.
func (d *Document) link(rel string) *Link {
	for i := range d.Links {
		if d.Links[i].Rel() == rel {
			return &d.Links[i]
		}
	}
	return nil
}

// timeFamily says which time attributes a capability uses (Appendix A).
type timeFamily int

const (
	familyNone    timeFamily = iota // description, capabilitylist, unknown
	familyAt                        // at, completed
	familyFrom                      // from, until
	familyAtArch                    // archives of resource documents: at optional
	familyFromArc                   // archives of change documents: from optional
)

// kind describes how one capability is checked.
type kind struct {
	family timeFamily
	// rootTime says whether the root rs:md must carry the family's time.
	rootTime bool
	// childTime says what entries may carry: "" nothing, "optional",
	// "recommended".
	childTime     string
	indexChildren string // childTime when the document is an index
	change        bool   // entries are change events with rs:md change
	manifest      bool   // entries have path
	dump          bool   // entries are packages
	// notification: a payload of a notification channel, served at its
	// topic (notification.go).
	notification bool
	section      string
	name         string
}

var kinds = map[string]kind{
	rs.CapDescription:          {family: familyNone, section: "§8", name: "Source Description"},
	rs.CapCapabilityList:       {family: familyNone, section: "§9", name: "Capability List"},
	rs.CapResourceList:         {family: familyAt, rootTime: true, indexChildren: "optional", section: "§10.1", name: "Resource List"},
	rs.CapResourceDump:         {family: familyAt, rootTime: true, childTime: "optional", indexChildren: "optional", dump: true, section: "§11.1", name: "Resource Dump"},
	rs.CapResourceDumpManifest: {family: familyAt, rootTime: true, manifest: true, section: "§11.2", name: "Resource Dump Manifest"},
	rs.CapChangeList:           {family: familyFrom, rootTime: true, change: true, indexChildren: "recommended", section: "§12.1", name: "Change List"},
	rs.CapChangeDump:           {family: familyFrom, rootTime: true, childTime: "recommended", indexChildren: "recommended", dump: true, section: "§13.1", name: "Change Dump"},
	rs.CapChangeDumpManifest:   {family: familyFrom, rootTime: true, change: true, manifest: true, section: "§13.2", name: "Change Dump Manifest"},
	rs.CapResourceListArchive:  {family: familyAtArch, childTime: "optional", indexChildren: "optional", section: "§10.1", name: "Resource List Archive"},
	rs.CapResourceDumpArchive:  {family: familyAtArch, childTime: "optional", indexChildren: "optional", section: "§11.1", name: "Resource Dump Archive"},
	rs.CapChangeListArchive:    {family: familyFromArc, childTime: "optional", indexChildren: "optional", section: "§12.1", name: "Change List Archive"},
	rs.CapChangeDumpArchive:    {family: familyFromArc, childTime: "optional", indexChildren: "optional", section: "§13.1", name: "Change Dump Archive"},
	rs.CapChangeNotification: {family: familyFrom, rootTime: true, change: true, notification: true,
		section: changeNotificationSpec, name: "Change Notification"},
	rs.CapFrameworkNotification: {family: familyFrom, rootTime: true, change: true, notification: true,
		section: frameworkNotificationSpec, name: "Framework Notification"},
}

// usesAt reports whether the family's times are at/completed.
func (f timeFamily) usesAt() bool { return f == familyAt || f == familyAtArch }

// usesFrom reports whether the family's times are from/until.
func (f timeFamily) usesFrom() bool { return f == familyFrom || f == familyFromArc }

// kindOf returns how the document is checked and whether its capability is
// known.
func kindOf(capability string) (kind, bool) {
	k, ok := kinds[capability]
	return k, ok
}

// describe names a document for messages, such as "Change List Index".
func describe(capability string, index bool) string {
	k, ok := kinds[capability]
	if !ok {
		return fmt.Sprintf("document with capability %q", capability)
	}
	if index {
		return k.name + " Index"
	}
	return k.name
}
