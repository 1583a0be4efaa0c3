package checker

import "io"

// ReadDocument reads one document from r, which is named url in findings,
// and applies every rule that needs only this document, as a lone document:
// rules about its place in a Source, such as up-missing, are warnings. It
// never panics and reads at most lim.MaxBytes bytes.
func ReadDocument(r io.Reader, url string, lim Limits) (*Document, []Finding) {
	rep := &reporter{url: url}
	doc := readDocument(r, url, lim, rep)
	if doc.readErr != nil {
		rep.add(0, "http-fetch", "read: %v", doc.readErr)
	}
	if !doc.Fatal {
		checkDocument(doc, rep, true)
	}
	return doc, rep.findings
}
