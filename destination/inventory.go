package destination

import (
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"sync"
)

// The inventory is the state's account of DIR: inventoryFile, a sorted
// file of one record per mirrored file, and journalFile, the operations
// of the sync in progress, appended as each file lands or goes. A write
// reaches the journal only once the file is renamed into place, and each
// operation is one write(2) of one line, which a kill cannot tear but at
// its end; so after a kill at any point the journal over the inventory
// is exactly what DIR holds, but for the file or two whose rename the
// kill came between (found again by adopting, see plan.go). compact
// merges the journal into the inventory: at the end of every sync, and at
// the start of the next when a kill left a journal behind.
const (
	inventoryFile = "inventory"
	journalFile   = "journal"
)

// inventory holds the journal open for appending.
type inventory struct {
	dir string // the state folder

	mu      sync.Mutex
	journal *os.File
	seq     int64
	line    []byte
}

// openInventory opens the inventory of the state folder dir, first
// merging into it the journal a killed sync left; work is a folder for
// the sort.
func openInventory(dir, work string) (*inventory, error) {
	inv := &inventory{dir: dir}
	if err := inv.compact(work); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, journalFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open the journal: %w", err)
	}
	inv.journal = f
	return inv, nil
}

// readInventory yields the records of the inventory of the state folder
// dir, in path order; the journal of a sync in progress is not among
// them until compact.
func readInventory(dir string) iter.Seq2[storedRecord, error] {
	return readLines(filepath.Join(dir, inventoryFile), storedCodec)
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

// compact merges the journal into the inventory: the journal's last
// operation on a path wins. The new inventory replaces the old by rename;
// the journal is removed after, so that a kill between the two leaves a
// journal whose operations the next compact applies again, to the same
// effect.
func (inv *inventory) compact(work string) error {
	jpath := filepath.Join(inv.dir, journalFile)
	if info, err := os.Stat(jpath); os.IsNotExist(err) || err == nil && info.Size() == 0 {
		return nil
	}
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
	tmp := filepath.Join(inv.dir, inventoryFile+".new")
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("compact the inventory: %w", err)
	}
	w := newLineWriter(f)
	err = join(readInventory(inv.dir), lastOfEach(ops.All(), opPath), storedPath, opPath, func(r *storedRecord, o *op) error {
		switch {
		case o == nil:
			return w.write(appendStored(w.line[:0], r))
		case !o.del:
			return w.write(appendRecord(w.line[:0], &o.rec))
		}
		return nil
	})
	if err == nil {
		err = w.finish(true)
	} else {
		f.Close()
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(inv.dir, inventoryFile))
	}
	if err == nil {
		err = os.Remove(jpath)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("compact the inventory: %w", err)
	}
	return nil
}
