package generator

import (
	"io"
	"io/fs"
	"sync"

	"github.com/rsgen/rsgen/snapshot"
)

// HTML resources with a <link rel="resourcesync"> ([publish] html_link)
//
// A browser or crawler that lands on a page of a set finds the set's
// Capability List through a <link rel="resourcesync" href="..."> in the
// page's <head>. rsgen inserts it into the published copy, so the
// published bytes differ from the source file's, and everything that
// describes the resource must describe the published bytes: its length
// and hashes in the Resource List, the Change Lists and dump manifests,
// and the bytes a dump packages. The design:
//
//   - The inserted tag depends on the configuration, which the file's stat
//     cannot reveal: the state records what the tags depend on
//     (tagsConfig), and when that changed, or the output does not look
//     like the last build's, the scan reads every such file
//     (snapshot.ScanOptions Reread). Otherwise one whose source did not
//     change is trusted as any file is, by the stat of its source, which
//     its record keeps beside the published length.
//   - The scan's single read feeds, through the tee, a writer that inserts
//     the tag and streams the result into the output (compared with the
//     copy already there, replaced only when it differs) and into the
//     published digests. The file is never hard-linked.
//   - Before the diff, the file's record takes the published length and
//     digests (the tee's rewrite gives them to it); its fingerprint stays
//     the source's. So change detection is
//     about the source content, while every document, and a state
//     recovered from the published documents, carries the published values.
//   - Dumps read the bitstreams of these files from the output, not the
//     source.
//
// A configuration change that alters the tag (base_url, the sets) changes
// the published bytes without a change event, like any base_url change.

// rewriter writes the published form of the HTML pages html_link
// rewrites, for the scan's tee, and remembers those without a <head>.
type rewriter struct {
	s        *site
	headless sync.Map // source paths of the pages read without a <head> start tag
}

// rewrite returns a writer that writes the published form of r's bytes
// into dst, and a function that completes it after the last byte and
// gives r the published length and digests (Record.SetPublished), with
// which the scan then compares it; nil when r is published as it is.
func (rw *rewriter) rewrite(r *snapshot.Record, dst io.Writer) (io.Writer, func() error) {
	tags := rw.s.linkTags(r.Path)
	if tags == nil {
		return nil, nil
	}
	digests := snapshot.NewDigester(rw.s.algs)
	size := &countingWriter{}
	inj := &headInjector{dst: io.MultiWriter(dst, digests, size), tags: tags}
	finish := func() error {
		if err := inj.Close(); err != nil {
			return err
		}
		if !inj.inserted {
			rw.headless.Store(r.Path, true)
		}
		r.SetPublished(size.n, digests.Digests())
		return nil
	}
	return inj, finish
}

// headlessRead reports whether the page at source path p was read by
// this scan and has no <head> start tag.
func (rw *rewriter) headlessRead(p string) bool {
	_, ok := rw.headless.Load(p)
	return ok
}

// measuringTee is the scan's tee of a build that writes nothing (status):
// it gives the resources html_link rewrites the length and digests of
// their published bytes, as a build does, so that they are compared with
// their records as a build compares them.
func (rw *rewriter) measuringTee() snapshot.Tees {
	tee := func(r *snapshot.Record, _ bool, _ fs.File) (io.Writer, func(bool) error, error) {
		w, finish := rw.rewrite(r, io.Discard)
		if w == nil {
			return nil, func(bool) error { return nil }, nil
		}
		return w, func(ok bool) error {
			if !ok {
				return nil
			}
			return finish()
		}, nil
	}
	return func() (snapshot.Tee, func()) { return tee, func() {} }
}
