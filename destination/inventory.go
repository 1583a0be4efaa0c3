package destination

import (
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"sync"
)

// The inventory is the state's account of DIR, in three files:
//
//   - inventoryFile, the base: one record per mirrored file, sorted by path;
//   - deltaFile: what changed since the base was written, sorted by path:
//     records, and tombstones (a path and " D") for files gone;
//   - journalFile: the operations of the sync in progress, appended as
//     each file lands or goes.
//
// A write reaches the journal only once the file is renamed into place,
// and each operation is one write(2) of one line, which a kill cannot
// tear but at its end; so after a kill at any point the journal over the
// delta over the base is exactly what DIR holds, but for the file or two
// whose rename the kill came between (found again by adopting, see
// plan.go). compact merges the journal into the delta at the end of every
// sync, and at the start of the next when a kill left a journal behind;
// once the delta grows past an eighth of the base, into a new base. So a
// sync that changes a few files of a million writes a few lines, not a
// million, and finds their records by bisecting the two sorted files
// (lookup.go) rather than reading them.
const (
	inventoryFile = "inventory"
	deltaFile     = "inventory.delta"
	journalFile   = "journal"
)

// tombstone marks, in the delta, a path whose file is gone.
const tombstone = " D"

// deleted reports whether a line of the delta is a tombstone.
func (s *storedRecord) deleted() bool {
	return len(s.line) >= len(tombstone) && string(s.line[len(s.line)-len(tombstone):]) == tombstone && countSpaces(s.line) == 1
}

func countSpaces(b []byte) int {
	n := 0
	for _, c := range b {
		if c == ' ' {
			n++
		}
	}
	return n
}

// inventory holds the journal open for appending.
type inventory struct {
	dir string // the state folder

	mu      sync.Mutex
	journal *os.File
	seq     int64
	line    []byte
}

// openInventory opens the inventory of the state folder dir, first
// merging into it the journal a killed sync left, and saying whether
// there was one; work is a folder for the sort.
func openInventory(dir, work string) (_ *inventory, killed bool, _ error) {
	inv := &inventory{dir: dir}
	_, err := os.Stat(filepath.Join(dir, journalFile))
	killed = err == nil
	if err := inv.compact(work); err != nil {
		return nil, false, err
	}
	f, err := os.OpenFile(filepath.Join(dir, journalFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("open the journal: %w", err)
	}
	inv.journal = f
	return inv, killed, nil
}

// readInventory yields the records of the inventory of the state folder
// dir, the delta over the base, in path order; the journal of a sync in
// progress is not among them until compact.
func readInventory(dir string) iter.Seq2[storedRecord, error] {
	base := readLines(filepath.Join(dir, inventoryFile), storedCodec)
	delta := readLines(filepath.Join(dir, deltaFile), storedCodec)
	return func(yield func(storedRecord, error) bool) {
		err := join(base, delta, storedPath, storedPath, func(b, d *storedRecord) error {
			r := b
			if d != nil {
				if d.deleted() {
					return nil
				}
				r = d
			}
			if !yield(*r, nil) {
				return errStop
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStop) {
			yield(storedRecord{}, err)
		}
	}
}

// inventorySize returns the bytes of the base and the delta: about 150
// a record.
func inventorySize(dir string) int64 {
	var n int64
	for _, f := range []string{inventoryFile, deltaFile} {
		if info, err := os.Stat(filepath.Join(dir, f)); err == nil {
			n += info.Size()
		}
	}
	return n
}

// finder finds records of the inventory of a state folder by path.
type finder struct{ base, delta *sortedFile }

func openFinder(dir string) (*finder, error) {
	base, err := openSorted(filepath.Join(dir, inventoryFile))
	if err != nil {
		return nil, fmt.Errorf("read the inventory: %w", err)
	}
	delta, err := openSorted(filepath.Join(dir, deltaFile))
	if err != nil {
		base.Close()
		return nil, fmt.Errorf("read the inventory: %w", err)
	}
	return &finder{base: base, delta: delta}, nil
}

func (f *finder) Close() error { return errors.Join(f.base.Close(), f.delta.Close()) }

// find returns the stored record of path, nil when there is none.
func (f *finder) find(path string) (*storedRecord, error) {
	line, err := f.delta.find(path)
	if err == nil && line == nil {
		line, err = f.base.find(path)
	}
	if err != nil || line == nil {
		return nil, err
	}
	r := &storedRecord{path: path, line: append([]byte(nil), line...)}
	if r.deleted() {
		return nil, nil
	}
	return r, nil
}

// put journals that the file r describes is in place.
func (inv *inventory) put(r *record) error { return inv.append(&op{rec: *r}) }

// del journals that the file at path is gone.
func (inv *inventory) del(path string) error {
	return inv.append(&op{del: true, rec: record{path: path}})
}

func (inv *inventory) append(o *op) error {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	inv.seq++
	o.seq = inv.seq
	inv.line = appendOp(inv.line[:0], o)
	if _, err := inv.journal.Write(inv.line); err != nil {
		return fmt.Errorf("write the journal: %w", err)
	}
	return nil
}

// close closes the journal and merges it into the inventory.
func (inv *inventory) close(work string) error {
	if inv.journal != nil {
		if err := inv.journal.Close(); err != nil {
			return fmt.Errorf("close the journal: %w", err)
		}
		inv.journal = nil
	}
	return inv.compact(work)
}

// compact merges the journal into the delta, the journal's last
// operation on a path winning, then the delta into the base once it
// holds more than an eighth of the base's bytes. Each file is replaced by
// rename, and what it was merged from is removed after, so that a kill
// between the two leaves operations that the next compact applies again,
// to the same effect.
func (inv *inventory) compact(work string) error {
	jpath := filepath.Join(inv.dir, journalFile)
	if info, err := os.Stat(jpath); err == nil && info.Size() > 0 {
		if err := inv.mergeJournal(jpath, work); err != nil {
			return fmt.Errorf("compact the inventory: %w", err)
		}
	}
	if err := os.Remove(jpath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("compact the inventory: %w", err)
	}
	base, _ := os.Stat(filepath.Join(inv.dir, inventoryFile))
	delta, err := os.Stat(filepath.Join(inv.dir, deltaFile))
	if err != nil || base != nil && delta.Size() <= base.Size()/8 {
		return nil
	}
	if err := inv.rewrite(inventoryFile, readInventory(inv.dir), storedCodec); err != nil {
		return fmt.Errorf("compact the inventory: %w", err)
	}
	if err := os.Remove(filepath.Join(inv.dir, deltaFile)); err != nil {
		return fmt.Errorf("compact the inventory: %w", err)
	}
	return nil
}

// mergeJournal merges the journal at jpath into the delta.
func (inv *inventory) mergeJournal(jpath, work string) error {
	ops := newSorter(work, opCodec)
	defer ops.Close()
	for o, err := range readLines(jpath, opCodec) {
		if err != nil {
			return fmt.Errorf("read the journal: %w", err)
		}
		if err := ops.Add(o); err != nil {
			return fmt.Errorf("sort the journal: %w", err)
		}
	}
	delta := readLines(filepath.Join(inv.dir, deltaFile), storedCodec)
	merged := func(yield func(storedRecord, error) bool) {
		err := join(delta, lastOfEach(ops.All(), opPath), storedPath, opPath, func(d *storedRecord, o *op) error {
			r := d
			if o != nil {
				r = &storedRecord{path: o.rec.path}
				if o.del {
					r.line = append(appendStr(nil, o.rec.path), tombstone[1:]...)
				} else {
					line := appendRecord(nil, &o.rec)
					r.line = line[:len(line)-1]
				}
			}
			if !yield(*r, nil) {
				return errStop
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStop) {
			yield(storedRecord{}, err)
		}
	}
	return inv.rewrite(deltaFile, merged, storedCodec)
}

// rewrite writes the lines of seq into a new file and renames it to name
// in the state folder.
func (inv *inventory) rewrite(name string, seq iter.Seq2[storedRecord, error], c codec[storedRecord]) error {
	path := filepath.Join(inv.dir, name)
	tmp := path + ".new"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := newLineWriter(f)
	for r, err := range seq {
		if err == nil {
			err = w.write(c.append(w.line[:0], &r))
		}
		if err != nil {
			f.Close()
			os.Remove(tmp)
			return err
		}
	}
	if err := w.finish(false); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
