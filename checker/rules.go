package checker

// Rule describes one check: its id, its default severity, the section of
// ResourceSync 1.1 it comes from and what it requires.
type Rule struct {
	ID       string
	Severity Severity
	Section  string
	Summary  string
}

// ruleTable lists every rule the checker reports. A finding's severity is the
// rule's, except where the rule's summary says otherwise.
var ruleTable = []Rule{
	// The XML itself.
	{"xml-syntax", Error, "§7", "the document is well-formed XML"},
	{"xml-limit", Error, "§7", "the document stays within the reader's depth and token limits"},
	{"xml-declaration", Warning, "§7", "the document starts with an XML declaration"},
	{"xml-encoding", Error, "§7", "the document is encoded in UTF-8"},
	{"limit-bytes", Error, "§7", "a document is at most 50 MB"},
	{"limit-entries", Error, "§7", "a document has at most 50,000 <url> or <sitemap> entries"},

	// Structure, at least as strict as rs-all.xsd.
	{"root-element", Error, "§7", "the root is <urlset> or <sitemapindex> in the Sitemap namespace"},
	{"rs-namespace", Error, "§4", "md and ln elements are in the ResourceSync namespace"},
	{"element-unknown", Error, "§7", "only the elements of the Sitemap formats and rs:md, rs:ln appear"},
	{"element-order", Error, "§7", "root rs: elements come before the entries; loc, lastmod, changefreq, priority, then rs: elements"},
	{"content-not-allowed", Error, "§7", "rs:md and rs:ln are empty; containers hold no text; value elements hold no elements"},
	{"attr-unknown", Error, "§7", "only the attributes ResourceSync defines appear unprefixed"},
	{"attr-prefixed", Error, "§7", "ResourceSync attributes carry no namespace prefix"},
	{"md-missing", Error, "§7", "the root has an rs:md child"},
	{"md-duplicate", Error, "§7", "the root has only one rs:md child"},
	{"md-repeated", Error, "§7", "an entry has at most one rs:md"},
	{"capability-missing", Error, "§7", "the root rs:md has a capability attribute"},
	{"capability-unknown", Error, "§7", "the root capability is one the specification defines"},
	{"loc-missing", Error, "§7", "every entry has a non-empty <loc>"},

	// Values.
	{"loc-absolute", Error, "§7", "<loc> is an absolute URI"},
	{"loc-length", Error, "§7", "<loc> has 12 to 2048 characters (sitemap.xsd)"},
	{"uri-encoding", Error, "§7", "URIs are correctly percent-encoded (no spaces, non-ASCII or bad escapes)"},
	{"href-relative", Warning, "§7", "rs:ln href is an absolute URI"},
	{"datetime-syntax", Error, "§7", "datetimes are W3C Datetimes that xsd:dateTime accepts (xsd:date also for lastmod)"},
	{"datetime-timezone", Error, "§7", "a datetime with a time has a time zone designator"},
	{"datetime-utc", Warning, "§7", "datetimes are given in UTC with Z"},
	{"changefreq-value", Error, "§7", "changefreq is one of always, hourly, daily, weekly, monthly, yearly, never"},
	{"priority-value", Error, "§7", "priority is a decimal from 0.0 to 1.0 (sitemap.xsd)"},
	{"length-value", Error, "§7", "length is a non-negative integer"},
	{"type-syntax", Error, "§7", "type matches the schema's media type pattern [\\w-]+/[\\w-]+"},
	{"hash-syntax", Error, "§7", "hash is a whitespace-separated list of alg:digest"},
	{"hash-alg", Warning, "§7", "hash algorithms are md5, sha-1 or sha-256"},
	{"hash-digest", Error, "§7", "a hex digest has the length of its algorithm"},
	{"hash-encoding", Warning, "§7", "digests are hex-encoded"},
	{"hash-alg-case", Error, "§7", "hash algorithm names are lower case (md5:, sha-256:), as clients match them exactly"},
	{"hash-hex-case", Error, "§7", "hex digests are lower case, as clients compare them"},
	{"hash-alg-repeated", Error, "§7", "a hash attribute gives each algorithm once"},
	{"ln-attrs", Error, "§7", "rs:ln has rel and href"},
	{"ln-rel-syntax", Error, "§7", "a relation type is a registered-style name or an absolute URI"},
	{"ln-pri", Error, "§7", "pri is an integer from 1 to 999999"},
	{"ln-patch-type", Error, "§14.4", "a patch link has a type"},
	{"change-missing", Error, "§12.1", "every Change List and Change Dump Manifest entry has rs:md change"},
	{"change-value", Error, "§7", "change is created, updated or deleted"},
	{"change-unexpected", Warning, "§7", "change appears only in Change Lists and Change Dump Manifests"},
	{"deleted-content", Warning, "§12.1", "a deletion carries no hash, length or type"},

	// Time attributes (Appendix A).
	{"time-required", Error, "Appendix A", "the root rs:md has at (resource documents) or from (change documents)"},
	{"time-forbidden", Error, "§7", "at and completed never appear on change documents, from and until never on resource documents"},
	{"time-unexpected", Warning, "Appendix A", "entries carry time attributes only where Table 4 allows them"},
	{"child-from-missing", Warning, "Appendix A", "entries of Change List Indexes, Change Dumps and Change Dump Indexes have from"},
	{"time-interval", Error, "§7", "until is not before from, completed is not before at"},
	{"datetime-range", Error, "§7", "an entry's datetime lies within the document's [from, until]"},
	{"order", Error, "§12.1", "change entries, Change List Index entries and archive entries are in forward chronological order"},
	{"dump-order", Warning, "§13.1", "Change Dump entries are in forward chronological order"},
	{"interval-gap", Error, "§12.1", "consecutive Change Lists (Change Dumps) of an index or archive meet: each from is the previous until, and only the last is open"},
	{"package-range", Error, "§13.1", "a Change Dump package's from and until, in its entry and in its manifest, lie within the dump's from and until"},

	// Document kinds.
	{"up-missing", Error, "§6.2", "every document but the Source Description links up (a warning for a lone document)"},
	{"describedby-missing", Warning, "§8", "Source Descriptions and Capability Lists link to a describedby document"},
	{"description-entry", Error, "§8", "a Source Description entry's rs:md has capability=capabilitylist"},
	{"capability-entry-missing", Error, "§9", "every Capability List entry has rs:md capability"},
	{"capability-entry", Error, "§9", "a Capability List lists capability documents, not descriptions, Capability Lists or manifests"},
	{"capability-entry-unknown", Warning, "§9", "a Capability List's capabilities are ones a specification defines"},
	{"capability-duplicate", Error, "§9", "a Capability List has at most one entry per capability"},
	{"capabilitylist-index", Warning, "§9", "a Capability List is never a <sitemapindex>"},
	{"empty-closed", Error, "§12.1", "a closed document (one with until) has at least one entry; only an open document may be empty"},
	{"empty-document", Warning, "§7", "a document has at least one entry, as sitemap.xsd requires, except an open Change List with no change yet"},
	{"loc-duplicate", Error, "§10.1", "a resource is listed once in a Resource List or Resource Dump Manifest, also across the parts of an index and the packages of a dump"},
	{"path-missing", Error, "§11.2", "manifest entries have path (except deletions)"},
	{"path-syntax", Error, "§11.2", "path starts with a slash and does not end with one"},
	{"path-duplicate", Error, "§13.2", "paths in one manifest are distinct"},
	{"path-unexpected", Warning, "§7", "path appears only in manifests"},
	{"type-missing", Warning, "§11.2", "manifest entries have type"},
	{"package-md", Warning, "§11.1", "dump entries have rs:md with type and length"},

	// The graph of documents.
	{"description-missing", Error, "§8", "the Source has a Source Description"},
	{"well-known-missing", Warning, "§6.3.2", "the Source Description is at /.well-known/resourcesync"},
	{"document-missing", Error, "§6.1", "every linked document exists"},
	{"capability-mismatch", Error, "§6.1", "a document has the capability its parent gives it"},
	{"capability-conflict", Error, "§6.1", "no document is reached with two capabilities"},
	{"up-mismatch", Error, "§6.2", "up leads to the parent Capability List or Source Description"},
	{"index-link-missing", Warning, "§10.1", "a document under an index links to it with rel=index"},
	{"index-link-mismatch", Error, "§6.2", "rel=index leads to the index that lists the document"},
	{"index-nested", Error, "§6.1", "an index lists <urlset> documents, not other indexes"},
	{"index-child-time", Error, "§12.2", "an index entry's at, from and until match the listed document"},
	{"index-part-time", Error, "§10.2", "a part's at is not before its index's at; a part's from and until lie within its index's"},
	{"up-unlisted", Error, "§6.2", "the documents a document's up link leads to list it, so that a walk from the Source Description reaches it"},
	{"set-dump-missing", Warning, "§9", "a resource in the Resource List is in the Resource Dump"},
	{"set-dump-extra", Warning, "§9", "a resource in the Resource Dump is in the Resource List"},
	{"set-change-unknown", Warning, "§9", "a changed resource that still exists is in the Resource List"},
	{"set-deleted-listed", Warning, "§9", "a resource deleted before the Resource List's at is not in it"},

	// Packages.
	{"zip-invalid", Error, "§11.1", "a package is a valid ZIP file"},
	{"zip-manifest-missing", Error, "§11.2", "a package has manifest.xml at its top level"},
	{"zip-path-missing", Error, "§11.2", "every manifest path is a file in the package"},
	{"zip-entry-unlisted", Error, "§11.2", "every file in the package is listed in the manifest"},
	{"zip-length", Error, "§11.2", "a bitstream has the manifest's length"},
	{"zip-hash", Error, "§11.2", "a bitstream has the manifest's hash"},
	{"contents-mismatch", Error, "§11.1", "a contents link's manifest copy equals the packaged manifest"},
	{"package-length", Error, "§7", "a package has the dump's length"},
	{"package-hash", Error, "§7", "a package has the dump's hash"},
	{"zip-limit", Error, "", "a package decompresses within the check's limits: at most 1032 times its size, the most deflate compresses (or 16 MiB), and --max-unzip for all packages"},

	// Resources (--verify-content).
	{"content-missing", Error, "§7", "a listed resource can be read"},
	{"content-length", Error, "§7", "a resource has the listed length"},
	{"content-hash", Error, "§7", "a resource has the listed hash"},
	{"content-type", Warning, "§7", "a resource is served with the listed type"},

	// Notifications (ResourceSync Change Notification and Framework
	// Notification 1.0.1, over WebSub).
	{"channel-hub", Error, changeNotificationSpec, "a Capability List entry of a notification channel names its hub with rs:ln rel=\"hub\""},
	{"notification-urlset", Error, changeNotificationSpec, "a notification is a <urlset>, never a <sitemapindex>: many changes are split into several notifications"},
	{"notification-interval", Error, changeNotificationSpec, "a notification's root rs:md has from and until"},
	{"notification-entry", Error, frameworkNotificationSpec, "a Framework Notification entry gives the capability of the capability document that changed, and is never about an index"},
	{"notification-sequence", Error, changeNotificationSpec, "consecutive notifications of a channel cover consecutive, non-overlapping intervals (a gap, which Destinations close from the Change Lists, is a warning)"},
	{"topic-link", Warning, changeNotificationSpec, "a topic is served with Link headers naming itself (rel=\"self\") and the hub its Capability List advertises (rel=\"hub\")"},

	// Serving.
	{"http-status", Error, "", "documents are served with status 200"},
	{"http-fetch", Error, "", "documents and resources can be fetched and read to the end"},
	{"http-timeout", Error, "", "every request finishes within --timeout"},
	{"http-content-type", Warning, "", "documents are served as XML"},
	{"http-redirect", Warning, "", "documents are served at their own URL, without redirects"},
	{"http-limit", Error, "", "the check stays within --max-requests requests and --max-bytes bytes over HTTP, and copies no package larger than --max-package"},
	{"max-time", Error, "", "the check finishes within --max-time"},
	{"external-skipped", Warning, "", "documents on other hosts are checked only with --follow-external"},
	{"redirect-external", Warning, "", "redirects to other hosts are followed only with --follow-external (an error for a document or package, which then goes unchecked with everything it lists)"},
}

var rulesByID = func() map[string]Rule {
	m := make(map[string]Rule, len(ruleTable))
	for _, r := range ruleTable {
		m[r.ID] = r
	}
	return m
}()

// ruleFor returns the rule with the given id. It panics on an unknown id:
// that is a bug in the checker, caught by its tests.
func ruleFor(id string) Rule {
	r, ok := rulesByID[id]
	if !ok {
		panic("checker: unknown rule " + id)
	}
	return r
}
