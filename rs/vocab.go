package rs

import "time"

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
)

// Limits of one document (spec §7, after the Sitemap protocol): at most
// MaxEntries <url> or <sitemap> entries and MaxBytes uncompressed bytes.
// MaxBytes is the decimal reading of "50 MB", the smaller of the two
// readings, so that a document is within the limit under either.
const (
	MaxEntries = 50000
	MaxBytes   = 50 * 1000 * 1000
)

// TimeLayout is the W3C Datetime form rsgen writes: complete UTC date and
// time in whole seconds.
const TimeLayout = "2006-01-02T15:04:05Z"

// FormatTime returns t in TimeLayout, in UTC, truncated to whole seconds.
func FormatTime(t time.Time) string {
	return t.UTC().Format(TimeLayout)
}
