package generator

import (
	"fmt"
	"path/filepath"

	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// staged is what the write stage did, for the commit stage: the next
// state, without its outputs, and what the versions writer found obsolete.
type staged struct {
	next     *snapshot.State
	versions *versionsWritten
	notes    *notifications // for the outbox, committed before the output
}

// commit is the last stage: it puts the build's notifications into the
// outbox (notifications.go), renames the files the write stage staged
// into place through the sink w (the Source Description last), keeps in
// the state archive what the build published that no later build could
// make again (k), removes what the build no longer publishes, and saves
// the state. The publishing record (intent.go) covers the build from the
// first rename until the state is saved. events are the scan's, prune the
// plan's files of the state archive to delete once the state is saved.
func commit(s *site, prev *loaded, events []snapshot.Event, w *sink.Sink, k *keeper, out *placer, wr *staged, prune []string, sum *Summary) error {
	defer wr.notes.abort() // those not committed
	if err := saveIntent(s, prev, w, events); err != nil {
		return err
	}
	if err := wr.notes.enqueue(); err != nil {
		return err
	}
	if err := w.Commit(); err != nil {
		return err
	}
	if err := k.keepCommitted(); err != nil {
		return err
	}
	out.keepAdded()
	o := remover{s: s, prev: prev, w: w, versions: wr.versions, files: &wr.next.Files}
	if err := o.remove(events, sum); err != nil {
		return err
	}
	next := wr.next
	next.Outputs = w.Outputs()
	next.OutputStats = outputStats(s, next.Outputs)
	prune = append(append(append(prune, wr.versions.pruned...), o.pruned...), unkeptPackages(prev.state, next)...)
	if err := snapshot.Save(s.cfg.State, next); err != nil {
		return err
	}
	if err := snapshot.ClearIntent(s.cfg.State); err != nil {
		return err
	}
	if err := pruneArchive(s.cfg.State, prune); err != nil {
		return err
	}
	sum.Outputs = w.Counts()
	return nil
}

// pruneArchive deletes from the state archive of the state folder state
// the files of prune, which left it, and the folders they leave empty (a
// set that stops keeping versions left one per version time and source
// folder). It runs after the state is saved: until then the previous
// state, which lists them, is the one in force.
func pruneArchive(state string, prune []string) error {
	root := filepath.Join(state, snapshot.ArchiveDir)
	for _, rel := range prune {
		if _, err := sink.RemoveInFolder(root, snapshot.ArchivePath(state, rel)); err != nil {
			return fmt.Errorf("prune archive: %w", err)
		}
	}
	return nil
}

// remover removes, once the build's files are in place, what the
// previous build published and this one does not: the documents the
// previous build wrote and this one did not, the files of versions no
// longer kept, the copies of resources deleted, and what the publishing
// record of a failed build names that this one does not publish.
type remover struct {
	s        *site
	prev     *loaded
	w        *sink.Sink
	versions *versionsWritten
	files    *snapshot.Records // this build's
	pruned   []string          // mementos a failed build may have kept in the state archive
}

// remove removes the obsolete files; events are the scan's, whose
// deletions it counts in sum.
func (o *remover) remove(events []snapshot.Event, sum *Summary) error {
	written := make(map[string]bool, len(o.w.Outputs()))
	for _, p := range o.w.Outputs() {
		written[p] = true
	}
	for _, p := range o.prev.state.Outputs {
		if !o.writes(p, written) {
			if err := o.w.Remove(p); err != nil {
				return err
			}
		}
	}
	for _, p := range o.versions.obsolete {
		if err := o.w.Remove(p); err != nil {
			return err
		}
	}
	if err := o.removeIntended(written); err != nil {
		return err
	}
	if !o.s.cfg.CopyResources {
		return nil
	}
	for _, ev := range events {
		if ev.Change == snapshot.Deleted {
			if err := o.w.RemoveFile(ev.Record.Path); err != nil {
				return err
			}
			sum.ResourcesRemoved++
		}
	}
	return nil
}

// writes reports whether this build publishes the output file p. written
// holds its output paths but those of versions, which the versions writer
// knows.
func (o *remover) writes(p string, written map[string]bool) bool {
	if sink.KindOf(p) == sink.Version {
		return !o.versions.obsoleteVersionFile(p)
	}
	return written[p]
}

// removeIntended removes what an earlier build's record names and this
// build does not publish: documents it added that this build does not
// write, and resources it deleted that have not come back. written holds
// this build's output paths.
func (o *remover) removeIntended(written map[string]bool) error {
	for _, p := range o.prev.intent.Added {
		if o.writes(p, written) {
			continue
		}
		if err := o.w.RemoveFile(p); err != nil {
			return err
		}
		if sink.KindOf(p) == sink.Version {
			// A memento the failed build may have kept in the state archive.
			o.pruned = append(o.pruned, p)
		}
	}
	for _, p := range o.prev.intent.Deleted {
		r, err := o.files.Find(p)
		if err != nil {
			return err
		}
		if r == nil { // not published by this build
			if err := o.w.RemoveFile(p); err != nil {
				return err
			}
		}
	}
	return nil
}
