package generator

import (
	"context"
	"io"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
	"github.com/rsgen/rsgen/snapshot"
)

// writeDocuments writes every document of every set, leaves first, then
// the Source Description. closed holds, per set, the segments this build
// closed.
func (b *builder) writeDocuments(ctx context.Context, closed map[string][]snapshot.Segment) error {
	for _, s := range b.sets {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := b.journals.writeJournalDocs(ctx, s, closed[s.Name]); err != nil {
			return err
		}
		if err := b.lister.writeResourceList(s); err != nil {
			return err
		}
		if s.resourceDump {
			if err := b.dumper.writeResourceDump(ctx, s); err != nil {
				return err
			}
		}
		if err := b.archiver.writeArchives(s); err != nil {
			return err
		}
		if err := b.lister.writeCapabilityList(s); err != nil {
			return err
		}
	}
	return b.lister.writeSourceDescription()
}

func unixTime(sec int64) time.Time {
	if sec == 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0).UTC()
}

// writeXML streams one document into path, atomically and only if its
// bytes change; fill writes the entries. It reports whether the file
// changed.
func (b *run) writeXML(path string, root rs.Root, md rs.MD, links []rs.Link, fill func(*rs.Writer) error) (bool, error) {
	return b.sink.WriteFile(path, func(f io.Writer) error {
		w := rs.NewWriter(f, root)
		w.SetLimits(b.opts.limits.entries, b.opts.limits.bytes)
		w.SetStylesheet(b.stylesheetHref(path))
		if err := w.Start(md, links...); err != nil {
			return err
		}
		if fill != nil {
			if err := fill(w); err != nil {
				return err
			}
		}
		return w.Close()
	})
}

// writeDoc writes a document at output path rel and records it as written
// by this build.
func (b *run) writeDoc(rel string, root rs.Root, md rs.MD, links []rs.Link, fill func(*rs.Writer) error) error {
	changed, err := b.writeXML(b.sink.Path(rel), root, md, links, fill)
	if err != nil {
		return err
	}
	b.sink.Record(rel, changed)
	return nil
}

// writeChangeList writes the Change List of set s for segment seg at path.
func (b *lister) writeChangeList(path string, s *set, seg *snapshot.Segment) (bool, error) {
	md := rs.MD{Capability: rs.CapChangeList, From: unixTime(seg.From), Until: unixTime(seg.Until)}
	links := []rs.Link{b.upLink(s), {Rel: rs.RelIndex, Href: b.docURL(layout.ChangeListIndex(s.Name))}}
	return b.writeXML(path, rs.URLSet, md, links, func(w *rs.Writer) error {
		for i := range seg.Events {
			ev := &seg.Events[i]
			e := b.changeEntry(ev)
			var err error
			if e.Links, err = b.linker.links(s, ev.Record, ev); err != nil {
				return err
			}
			if err := w.Entry(e); err != nil {
				return err
			}
		}
		return nil
	})
}

// changeEntry returns the Change List entry of one event. Its lastmod is
// the lastmod the Resource List publishes for the same version, so that a
// Destination comparing the two finds them equal; a deletion has the
// deletion's time. In ResourceSync 1.0 mode the change time goes into
// lastmod only, since 1.0 schemas reject the datetime attribute (and
// config refuses 1.0 with lastmod from mtime, where the two would differ).
func (b *lister) changeEntry(ev *snapshot.Event) *rs.Entry {
	t := unixTime(ev.Time)
	e := &rs.Entry{Loc: b.resURL(ev.Record.Path), Lastmod: b.eventLastmod(ev), MD: rs.MD{Change: ev.Change.String()}}
	if b.cfg.SpecVersion != config.Spec10 {
		e.MD.Datetime = t
	}
	if ev.Change != snapshot.Deleted {
		b.describe(&e.MD, ev.Record)
	}
	return e
}

// eventLastmod returns the lastmod of an event's entry: the version's own,
// as the Resource List has it, or the time of a deletion.
func (b *lister) eventLastmod(ev *snapshot.Event) time.Time {
	if ev.Change == snapshot.Deleted {
		return unixTime(ev.Time)
	}
	return ev.Record.Lastmod(b.cfg.Lastmod == config.LastmodMtime)
}

// describe fills in the hash, length and type of a resource.
func (b *lister) describe(md *rs.MD, r *snapshot.Record) {
	md.Hash = r.Digests.Hash(b.algs)
	b.describeContent(md, r)
}

// describeContent fills in the length and type of a resource.
func (b *lister) describeContent(md *rs.MD, r *snapshot.Record) {
	md.Length, md.HasLength = r.Size, true
	if schemaSafeType(r.Type()) {
		md.Type = r.Type()
	}
}

// schemaSafeType reports whether t passes the ResourceSync schema's pattern
// for media types, [\w-]+/[\w-]+, in which \w excludes punctuation such as
// "." and "_".
func schemaSafeType(t string) bool {
	slash := 0
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c == '/':
			if i == 0 || i == len(t)-1 {
				return false
			}
			slash++
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '+':
		default:
			return false
		}
	}
	return slash == 1
}
