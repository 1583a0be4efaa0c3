package snapshot

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Intent is what a build records, in the state folder (PublishingFile),
// before it renames its files into place and removes what it no longer
// publishes: the output files it adds and the resources it deletes. Until
// the state is saved, the state does not know them; a build that fails or
// is killed in between leaves the record behind, and the next build
// removes the files it names that it does not publish itself.
type Intent struct {
	Added, Deleted []string
}

// LoadIntent reads the record a failed or killed build left in the state
// folder dir; none is an empty Intent.
func LoadIntent(dir string) (Intent, error) {
	var in Intent
	p := filepath.Join(dir, PublishingFile)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return in, nil
	}
	if err != nil {
		return in, fmt.Errorf("state %s: %w", p, err)
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
			in.Added = append(in.Added, path)
		case "- ":
			in.Deleted = append(in.Deleted, path)
		}
	}
	return in, nil
}

// IntentWriter writes a publishing record one path at a time, so that a
// build that adds many files (a first build that keeps versions adds two
// per resource) does not hold their paths: see SaveIntent.
type IntentWriter struct {
	w *bufio.Writer
	n int
}

// Add records an output file the build adds.
func (w *IntentWriter) Add(path string) { w.line('+', path) }

// Delete records a resource the build deletes.
func (w *IntentWriter) Delete(path string) { w.line('-', path) }

// line writes one quoted path per line, so that any name fits.
func (w *IntentWriter) line(op byte, path string) {
	w.w.WriteByte(op)
	w.w.WriteByte(' ')
	w.w.WriteString(strconv.Quote(path))
	w.w.WriteByte('\n')
	w.n++
}

// errEmptyIntent stops the write of a record that names nothing.
var errEmptyIntent = errors.New("empty publishing record")

// SaveIntent writes the record that write makes into the state folder dir,
// atomically. A record that names nothing writes no file.
func SaveIntent(dir string, write func(*IntentWriter) error) error {
	err := writeAtomic(dir, PublishingFile, func(f io.Writer) error {
		w := &IntentWriter{w: bufio.NewWriter(f)}
		if err := write(w); err != nil {
			return err
		}
		if w.n == 0 {
			return errEmptyIntent
		}
		return w.w.Flush()
	})
	if errors.Is(err, errEmptyIntent) {
		return nil
	}
	return err
}

// ClearIntent removes the record from the state folder dir once the state
// knows what it named.
func ClearIntent(dir string) error {
	p := filepath.Join(dir, PublishingFile)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("state %s: %w", p, err)
	}
	return nil
}
