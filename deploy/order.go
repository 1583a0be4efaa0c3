package deploy

import (
	"fmt"
	"os"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
)

// Within a step of publication (layout.PublishStep) the files are written
// in parallel, but a document may still reference a file of its own step:
// the open Change Dump lists the package its build added, a Resource List
// links to its archive. So each step is written in waves: a document whose
// bytes change waits for the files of its step that it references and
// that this deploy writes. The references are read from the documents
// themselves (every <loc> and every rs:ln but up and index, which point
// back at a parent), so no order is restated here.

// waves splits the tasks of one step into waves, to be written one after
// the other; the tasks of a wave are independent. Documents that
// reference each other in a cycle, which rsgen never writes, share the
// last wave, reported by cyclic.
func waves(root *os.Root, base string, tasks []*task) (ws [][]*task, cyclic []string, err error) {
	if len(tasks) < 2 {
		return [][]*task{tasks}, nil, nil
	}
	writes := map[string]*task{}
	for _, t := range tasks {
		if !t.reheader {
			writes[t.obj.Key] = t
		}
	}
	deps := map[*task][]*task{}
	for _, t := range tasks {
		if t.reheader || !isDocument(t.obj.Key) {
			continue
		}
		err := references(root, t.obj.Key, func(u string) {
			if rel, ok := layout.PathFromURL(base, u); ok && rel != t.obj.Key && writes[rel] != nil {
				deps[t] = append(deps[t], writes[rel])
			}
		})
		if err != nil {
			return nil, nil, err
		}
	}
	done := map[*task]bool{}
	for rest := tasks; len(rest) > 0; {
		var wave, later []*task
		for _, t := range rest {
			if allDone(deps[t], done) {
				wave = append(wave, t)
			} else {
				later = append(later, t)
			}
		}
		if len(wave) == 0 {
			for _, t := range later {
				cyclic = append(cyclic, t.obj.Key)
			}
			wave, later = later, nil
		}
		for _, t := range wave {
			done[t] = true
		}
		ws = append(ws, wave)
		rest = later
	}
	return ws, cyclic, nil
}

// isDocument reports whether the output file at rel is a ResourceSync
// document rsgen wrote, rather than a resource, or a version of one, that
// happens to be XML. A notification topic is not: it serves a
// notification, or nothing yet, whose entries name resources of an
// earlier step.
func isDocument(rel string) bool {
	return layout.PublishStep(rel) > layout.StepVersions && layout.ContentType(rel) == layout.TypeXML && !layout.IsTopic(rel)
}

func allDone(deps []*task, done map[*task]bool) bool {
	for _, d := range deps {
		if !done[d] {
			return false
		}
	}
	return true
}

// downward reports whether a link relation points at something a
// Destination reaches through the document, rather than back at the
// document's parent.
func downward(rel string) bool { return rel != rs.RelUp && rel != rs.RelIndex }

// references calls fn with every URI the document at rel points at
// downward: its entries' locs and its links but up and index.
func references(root *os.Root, rel string, fn func(string)) error {
	f, err := openRegular(root, rel)
	if err != nil {
		return err
	}
	defer f.Close()
	r := rs.NewReader(f)
	head, err := r.Head()
	if err != nil {
		return fmt.Errorf("read %s: %w", rel, err)
	}
	links := func(lns []rs.Link) {
		for _, ln := range lns {
			if downward(ln.Rel) {
				fn(ln.Href)
			}
		}
	}
	links(head.Links)
	err = r.Entries(func(e *rs.Entry) error {
		fn(e.Loc)
		links(e.Links)
		return nil
	})
	if err != nil {
		return fmt.Errorf("read %s: %w", rel, err)
	}
	return nil
}

// keyOrder checks that keys come in strictly increasing byte order, the
// order of the deploy's own files (the manifest, the file list), which
// are read and written in step.
type keyOrder struct {
	last string
	seen bool // a key came
}

// next takes key, which must come after the last one.
func (o *keyOrder) next(key string) error {
	if o.seen && key <= o.last {
		return fmt.Errorf("%q after %q: out of order", key, o.last)
	}
	o.last, o.seen = key, true
	return nil
}
