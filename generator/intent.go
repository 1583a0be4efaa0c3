package generator

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/snapshot"
)

// intentFile, in the state folder, records what a build is about to
// publish while it renames its staged files into place (commitStaged) and
// removes what it no longer publishes: the output files it adds and the
// resources it deletes. Until the state is saved, the state does not know
// them; a build that fails or is killed in between leaves the record
// behind, and the next build removes the files it names that it does not
// publish itself, however it got its state (the old one, or one rebuilt
// from the output that no longer lists a deleted resource).
const intentFile = snapshot.PublishingFile

// intent is what a record names: output paths added and resources deleted.
type intent struct {
	added, deleted []string
}

// loadIntent reads the record a failed or killed build left, if any.
func (b *builder) loadIntent() error {
	p := filepath.Join(b.cfg.State, intentFile)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("state %s: %w", p, err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if len(line) < 2 {
			continue
		}
		path, err := strconv.Unquote(line[2:])
		if err != nil {
			continue // torn by a crash while it was written: it was never renamed into place
		}
		switch line[:2] {
		case "+ ":
			b.intent.added = append(b.intent.added, path)
		case "- ":
			b.intent.deleted = append(b.intent.deleted, path)
		}
	}
	return nil
}

// writeIntent records, before the first rename, the output files this
// build adds and the resources it deletes, with what an earlier record
// still names: one quoted path per line, so that any name fits.
func (b *builder) writeIntent() error {
	rec := intent{added: slices.Clone(b.intent.added), deleted: slices.Clone(b.intent.deleted)}
	prev := make(map[string]bool, len(b.prev.Outputs))
	for _, p := range b.prev.Outputs {
		prev[p] = true
	}
	for _, rel := range b.sink.Staged() {
		if !prev[rel] && strings.HasPrefix(rel, layout.DocumentsDir+"/") {
			rec.added = append(rec.added, rel)
		}
	}
	if b.cfg.CopyResources {
		for _, ev := range b.sum.Events {
			if ev.Change == snapshot.Deleted {
				rec.deleted = append(rec.deleted, ev.Record.Path)
			}
		}
	}
	if len(rec.added) == 0 && len(rec.deleted) == 0 {
		return nil
	}
	_, err := b.sink.WriteFile(filepath.Join(b.cfg.State, intentFile), func(f io.Writer) error {
		w := bufio.NewWriter(f)
		for _, p := range rec.added {
			fmt.Fprintf(w, "+ %q\n", p)
		}
		for _, p := range rec.deleted {
			fmt.Fprintf(w, "- %q\n", p)
		}
		return w.Flush()
	})
	return err
}

// clearIntent removes the record once the state knows what it named.
func (b *builder) clearIntent() error {
	p := filepath.Join(b.cfg.State, intentFile)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("state %s: %w", p, err)
	}
	return nil
}

// removeIntended removes what an earlier build's record names and this
// build does not publish: documents it added that this build does not
// write, and resources it deleted that have not come back. written holds
// this build's output paths.
func (b *builder) removeIntended(out *output, written map[string]bool) error {
	for _, p := range b.intent.added {
		if !written[p] {
			if err := b.sink.RemoveFile(p); err != nil {
				return err
			}
		}
	}
	for _, p := range b.intent.deleted {
		if !b.publishes(p) {
			if err := b.sink.RemoveFile(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// publishes reports whether this build publishes the resource at source
// path p.
func (b *builder) publishes(p string) bool {
	_, found := slices.BinarySearchFunc(b.next.Files, p, func(r snapshot.Record, p string) int {
		return layout.ComparePaths(r.Path, p)
	})
	return found
}
