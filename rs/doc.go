// Package rs owns the ResourceSync XML vocabulary (namespaces, capability
// names, change types, link relations, the datetime form and the document
// limits) and Writer, a streaming writer of ResourceSync documents.
//
// # The canonical form
//
// Every document Writer produces has the shape of the examples in the
// ResourceSync 1.1 specification (ANSI/NISO Z39.99-2017): an XML declaration,
// a <urlset> or <sitemapindex> root in the Sitemap namespace with the rs
// prefix declared, the root <rs:ln> links and then the root <rs:md>, and one
// <url> or <sitemap> per entry whose <loc> and <lastmod> come before its
// <rs:md> and <rs:ln> children. Attributes are always written in one fixed
// order, so that equal input gives equal bytes.
//
// The XML is written by hand rather than with encoding/xml: encoding/xml
// cannot emit the rs: prefix as the specification shows it, and writing by
// hand lets an entry be rendered into a reused buffer with no allocation.
//
// # Caveats
//
// Writer rejects strings that XML 1.0 cannot carry (most control
// characters, invalid UTF-8) with ErrInvalidXMLChar instead of replacing
// them: a document that silently differs from its input would publish wrong
// URIs.
package rs
