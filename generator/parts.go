package generator

import (
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// The parts of a build
//
// A build is a pipeline: scan the source and diff it against the state
// (build.go), place the resources (output.go), advance the journals of
// Change Lists, keep versions, write the documents of every set, leaves
// first, then the hosting files, then commit: rename everything into place
// (package sink) and save the state. Each family of documents is a part
// with the state it owns; the builder runs the pipeline and owns nothing
// but its order. Every part reads the build's shared context, run.
//
//	lister     Resource Lists, Capability Lists, the Source Description,
//	           and the entries of Change Lists (lists.go, documents.go)
//	journals   the Change List and Change Dump segments, their rotation
//	           and documents (journal.go, changelists.go)
//	dumper     Resource and Change Dump packages and documents (dumps.go)
//	archiver   the archives of §13 of the Archives extension (archives.go)
//	keeper     the state folder's copies of what cannot be made again
//	           (kept.go)
//	linker     rs:ln links between resources, and html_link (links.go,
//	           htmllink.go)
//	versioner  kept versions (versions.go), TimeMaps and patches (timemaps.go)
//	recoverer  the state rebuilt from a published output (recover*.go)

// run is one build's shared context: the configuration, the source, the
// previous and the next state, the clock, the URLs, the sink, and the
// parts, which call one another through it.
type run struct {
	*site
	src       *snapshot.Tree // the source folder, read only through it
	prev      *snapshot.State
	next      *snapshot.State
	now       int64
	sum       *Summary
	sink      *sink.Sink      // every file this build writes to the output goes through it
	intent    snapshot.Intent // what a failed build was publishing (intent.go)
	intact    bool            // the output looks like the last build's (outputIntact), judged before the scan
	loaded    *previous
	scanned   *scanned
	recovered *recovery

	lister    *lister
	journals  *journals
	dumper    *dumper
	archiver  *archiver
	keeper    *keeper
	linker    *linker
	versioner *versioner
}

// builder runs the pipeline of one build (build.go).
type builder struct{ *run }

// newParts returns the builder of r with every part.
func newParts(r *run) *builder {
	r.lister = &lister{run: r}
	r.journals = &journals{run: r}
	r.dumper = &dumper{run: r, carried: map[string][]carriedPackage{}}
	r.archiver = &archiver{run: r}
	r.keeper = &keeper{run: r, toKeep: pathList(r.cfg.State)}
	r.linker = &linker{run: r}
	r.versioner = &versioner{run: r}
	return &builder{run: r}
}
