package generator

import (
	"strings"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// The publishing record (snapshot.Intent): before its first rename a build
// records the documents it adds and the resources it deletes, with what an
// earlier build's record still names; the record goes once the state is
// saved. A build that finds a record removes what it names and does not
// publish itself, however it got its state (the old one, or one rebuilt
// from the output that no longer lists a deleted resource).

// saveIntent writes the record of this build: the staged documents no
// earlier build published, the resources it deletes, and what the record
// of a failed earlier build (b.intent) still names.
func (b *builder) saveIntent() error {
	prev := make(map[string]bool, len(b.prev.Outputs))
	for _, p := range b.prev.Outputs {
		prev[p] = true
	}
	return snapshot.SaveIntent(b.cfg.State, func(w *snapshot.IntentWriter) error {
		for _, p := range b.intent.Added {
			w.Add(p)
		}
		for _, p := range b.intent.Deleted {
			w.Delete(p)
		}
		err := b.sink.Staged(func(rel string) error {
			if !prev[rel] && strings.HasPrefix(rel, layout.DocumentsDir+"/") {
				w.Add(rel)
			}
			return nil
		})
		if err != nil || !b.cfg.CopyResources {
			return err
		}
		for _, ev := range b.sum.Events {
			if ev.Change == snapshot.Deleted {
				w.Delete(ev.Record.Path)
			}
		}
		return nil
	})
}

// writes reports whether this build publishes the output file p. written
// holds its output paths but those of versions, which keepVersions knows.
func (b *builder) writes(p string, written map[string]bool) bool {
	if sink.KindOf(p) == sink.Version {
		return !b.versioner.obsoleteVersionFile(p)
	}
	return written[p]
}

// removeIntended removes what an earlier build's record names and this
// build does not publish: documents it added that this build does not
// write, and resources it deleted that have not come back. written holds
// this build's output paths.
func (b *builder) removeIntended(written map[string]bool) error {
	for _, p := range b.intent.Added {
		if b.writes(p, written) {
			continue
		}
		if err := b.sink.RemoveFile(p); err != nil {
			return err
		}
		if sink.KindOf(p) == sink.Version {
			// A memento the failed build may have kept in the state archive.
			b.archiver.arch.prune = append(b.archiver.arch.prune, p)
		}
	}
	for _, p := range b.intent.Deleted {
		r, err := b.next.Files.Find(p)
		if err != nil {
			return err
		}
		if r == nil { // not published by this build
			if err := b.sink.RemoveFile(p); err != nil {
				return err
			}
		}
	}
	return nil
}
