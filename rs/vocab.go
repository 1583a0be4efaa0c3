package rs

import (
	"fmt"
	"time"
)

// Namespaces of ResourceSync documents.
const (
	SitemapNS = "http://www.sitemaps.org/schemas/sitemap/0.9"
	RSNS      = "http://www.openarchives.org/rs/terms/"
)

// Capability values of the root <rs:md capability="..."> attribute.
const (
	CapDescription          = "description"
	CapCapabilityList       = "capabilitylist"
	CapResourceList         = "resourcelist"
	CapChangeList           = "changelist"
	CapResourceDump         = "resourcedump"
	CapChangeDump           = "changedump"
	CapResourceDumpManifest = "resourcedump-manifest"
	CapChangeDumpManifest   = "changedump-manifest"
	CapResourceListArchive  = "resourcelist-archive"
	CapResourceDumpArchive  = "resourcedump-archive"
	CapChangeListArchive    = "changelist-archive"
	CapChangeDumpArchive    = "changedump-archive"
)

// Change values of the entry <rs:md change="..."> attribute.
const (
	ChangeCreated = "created"
	ChangeUpdated = "updated"
	ChangeDeleted = "deleted"
)

// Link relations used by rsgen (spec §14 and §6.2).
const (
	RelUp          = "up"
	RelIndex       = "index"
	RelDescribedBy = "describedby"
	RelContents    = "contents"
	RelArchives    = "archives"     // ResourceSync Archives: a document's archive
	RelDuplicate   = "duplicate"    // §14.2 a mirror
	RelAlternate   = "alternate"    // §14.3 another representation
	RelCanonical   = "canonical"    // §14.3 the generic URI
	RelPatch       = RSNS + "patch" // §14.4 changes from the previous version
	RelDescribes   = "describes"    // §14.5 from metadata to the resource
	RelProfile     = "profile"      // §14.5 the kind of metadata (RFC 6906)
	RelMemento     = "memento"      // §14.6 a time-specific version
	RelTimeMap     = "timemap"      // §14.6 the list of versions
	RelCollection  = "collection"   // §14.7 collection membership
	RelVia         = "via"          // §14.8 the origin of a republished resource
)

// Limits of one document (spec §7, after the Sitemap protocol): at most
// MaxEntries <url> or <sitemap> entries and MaxBytes uncompressed bytes.
// MaxBytes is the decimal reading of "50 MB", the smaller of the two
// readings, so that a document is within the limit under either.
const (
	MaxEntries = 50000
	MaxBytes   = 50 * 1000 * 1000
)

// MaxLocLength is the longest <loc> the Sitemap schemas accept, in
// characters (bytes, for the ASCII of a percent-encoded URI).
const MaxLocLength = 2048

// TimeLayout is the W3C Datetime form rsgen writes: complete UTC date and
// time in whole seconds.
const TimeLayout = "2006-01-02T15:04:05Z"

// MinTime and MaxTime bound the times a document can carry: after the Unix
// epoch (rsgen reads time zero as "no time") and within the four-digit
// years of W3C Datetime.
var (
	MinTime = time.Unix(1, 0).UTC()
	MaxTime = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
)

// CheckTime reports whether t can be a time in a document.
func CheckTime(t time.Time) error {
	if t.Before(MinTime) || t.After(MaxTime) {
		return fmt.Errorf("%s is outside the times a ResourceSync document can carry (%s to %s)",
			t.UTC().Format(time.RFC3339), MinTime.Format(time.RFC3339), MaxTime.Format(time.RFC3339))
	}
	return nil
}
