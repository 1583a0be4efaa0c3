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

// saveIntent writes the record of this build: the documents staged in w
// that no earlier build published, the resources it deletes (events are
// the scan's), and what the record of a failed earlier build still names.
func saveIntent(s *site, prev *loaded, w *sink.Sink, events []snapshot.Event) error {
	published := make(map[string]bool, len(prev.state.Outputs))
	for _, p := range prev.state.Outputs {
		published[p] = true
	}
	return snapshot.SaveIntent(s.cfg.State, func(iw *snapshot.IntentWriter) error {
		for _, p := range prev.intent.Added {
			iw.Add(p)
		}
		for _, p := range prev.intent.Deleted {
			iw.Delete(p)
		}
		err := w.Staged(func(rel string) error {
			if !published[rel] && strings.HasPrefix(rel, layout.DocumentsDir+"/") {
				iw.Add(rel)
			}
			return nil
		})
		if err != nil || !s.cfg.CopyResources {
			return err
		}
		for _, ev := range events {
			if ev.Change == snapshot.Deleted {
				iw.Delete(ev.Record.Path)
			}
		}
		return nil
	})
}
