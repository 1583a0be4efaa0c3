// Package checker checks ResourceSync documents and whole Sources against
// ResourceSync 1.1 (ANSI/NISO Z39.99-2017) and its archives extension. It is
// an independent reader: it shares nothing with the writer in package rs but
// the vocabulary constants, so that a mistake in the writer is not repeated
// here and goes unseen.
//
// # The model
//
// A check reads documents and reports findings. A Finding names the
// document (its URL, and its file when it is local), the line, the rule and
// the section of the specification the rule comes from. A rule that states a
// MUST gives errors; a SHOULD gives warnings. Rules lists every rule; the
// README and `rsgen help check` describe how the CLI shows them.
//
// Checking happens at three levels:
//
//   - One document. ReadDocument streams the XML through encoding/xml's
//     namespace-aware Decoder and keeps only what later rules need: the root
//     rs:md and rs:ln, and per entry its loc, lastmod, rs:md and rs:ln. While
//     reading it checks the structure at least as strictly as the schemas in
//     testdata/schemas/rs11 (element order, which elements and attributes may
//     appear where, empty rs:md and rs:ln); then it checks the values
//     (datetimes, URIs, hashes, media types, lengths) and the rules of the
//     document's capability (Appendix A's time attributes, chronological
//     order, manifest paths, Capability List entries).
//   - The graph. CheckDir and CheckURL start at the Source Description and
//     follow its links down: Capability Lists, capability documents, the
//     parts of indexes, the packages of dumps and their manifests. Every
//     link is checked both ways: a document must have the capability its
//     parent gives it, no document is reached with two capabilities, up
//     leads back to the parent and index to the index that lists the part.
//     The documents under one Capability List must describe one set of
//     resources: those rules are warnings, because the specification lets
//     snapshots be taken at different times. A snapshot spread over
//     several documents (the parts of a Resource List Index, the packages
//     of a Resource Dump) lists each resource once; archives are followed
//     to the documents they list, and with Options.VerifyContent to the
//     packages of archived dumps. A check that starts at a document climbs
//     its up links to the Source Description; a document the walk from
//     there does not reach is reported (up-unlisted) and checked anyway.
//   - The content. With Options.VerifyContent every listed resource is read
//     and its length and digests are compared with the newest listing: the
//     Resource List, or a later change of the Change Lists.
//
// Sources are read through a Fetcher, where they are or where they stand
// for their URLs (places.go): a staging host read as if it were the base
// URL (CheckURL with Options.BaseURL), and the resources of a Source built
// with copy_resources = false, which are not in its output folder, read
// under Options.ResourceBaseURL at their URLs or from Options.Resources. A
// local output directory maps URLs to files below a base URL, given or
// inferred from the Source Description's entries, and opens them through an os.Root: only regular files are read,
// never through a symbolic link that leads out of the directory, and a
// named pipe or a device is reported without being opened for reading. A
// live Source is fetched over HTTP with a bounded number of requests and
// bytes, a bounded concurrency (Options.Concurrency in all,
// Options.MaxPerHost to one host, so that a check stays polite) and a
// timeout per request, body included; the parts of an index are read a
// few at once, and handed on in the order listed;
// a timeout is reported as one (http-timeout), never as bad XML. The check
// never leaves the Source's host, by a link or by a redirect, unless
// Options.FollowExternal is set: a Source cannot make the checker request
// other addresses.
//
// # Limits
//
// A document is read with bounded memory whatever its size or shape: the
// reader stops after Limits.MaxBytes (the specification's 50 MB), at
// Limits.MaxDepth levels of nesting, and after Limits.MaxToken bytes
// without markup, and keeps at most Limits.MaxEntries entries. Packages are
// copied to a temporary file, never held in memory. Finding a resource
// listed twice across the documents of a snapshot costs about 56 bytes
// per entry, whatever the length of its URI: only a 128-bit digest of each
// loc is kept.
//
// The whole check stops after Options.MaxTime (10 minutes by default) and
// reports max-time: every read, local or remote, and every decompression
// honours the context, so an interrupt stops it too. A package is examined
// before anything in it is decompressed: overlapping entries (a zip bomb)
// make it invalid, and what its entries declare they decompress to (a
// bound archive/zip enforces) must stay within Options.MaxUnzipRatio times
// its size (by default the most deflate compresses, so that only a
// package that cannot hold what it declares is refused) and, for all
// packages, Options.MaxUnzipBytes. A package fetched over HTTP is copied
// to a temporary file of at most Options.MaxPackageBytes. A limit reached
// is an error: the check is incomplete.
//
// # Caveats
//
// A document checked on its own (CheckFile, ReadDocument) cannot be placed
// in a Source, so up-missing is a warning there; in a walk it is an error.
// The 30 examples of the specification pass on their own for that reason:
// the introductory ones have no up link.
//
// Several rules are softer than a literal reading of the specification,
// because its own examples break them: a digest that is not hex (Example 27
// of the specification, ../testdata/spec-examples/ex-26.xml, has base64url
// ones) is the warning hash-encoding, not an error, and an
// empty <urlset> is accepted although sitemap.xsd requires one <url>: an open
// Change List may well be empty. A closed one (with until) may not
// (empty-closed): it is never rewritten, so it would stay invalid for good.
// Others are stricter, because clients are: algorithm names and hex digits
// in lower case, each algorithm once in a hash attribute, a resource once
// in a Resource List (the reference client rejects the whole list), and
// consecutive Change Lists of an index that meet without gap or overlap
// (compared as the index's entries give from and until). The schema's
// media type pattern [\w-]+/[\w-]+ is enforced as the schema has it, so
// types with a dot or parameters, such as application/vnd.ms-excel, are
// errors.
//
// The resource set rules compare the last change of each resource with the
// Resource List's at; changes without a datetime are not compared.
//
// Packages of archived dumps are read only with Options.VerifyContent,
// which reads everything a Source holds; without it an archived dump is
// checked as a document only.
package checker
