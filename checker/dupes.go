package checker

// A resource has one state in a snapshot, so it is listed once in all the
// documents that spread the snapshot: the parts of a Resource List Index,
// the manifests of the packages of a Resource Dump (§10.1, §10.2, §11.1);
// the reference client rejects the whole Resource List when a loc
// repeats. Repeats within one document are the document rules'
// (loc-duplicate); addSnapshot reports those across documents.

// addSnapshot adds the entries of d, a document of the snapshot whose
// resources t holds (what names it: "Resource List"), with the fixity fix
// gives each, and reports those an earlier document of the snapshot lists.
func (w *walker) addSnapshot(t *locTable, what string, d *Document, fix func(*Entry) *fixity) {
	doc := t.addDocument(d)
	for i := range d.Entries {
		e := &d.Entries[i]
		earlier, repeated := t.add(e.Loc, e.LocLine, fix(e))
		if repeated && e.Loc != "" && earlier.doc != doc {
			w.report(at(d, e.LocLine), "loc-duplicate", "%s is listed twice in the %s: here and in %s line %d", e.Loc, what, t.docs[earlier.doc].url, earlier.line)
		}
	}
}

// noFixity keeps no entry's fixity.
func noFixity(*Entry) *fixity { return nil }
