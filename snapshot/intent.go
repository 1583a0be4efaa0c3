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

// Save writes the record into the state folder dir, atomically: one quoted
// path per line, so that any name fits. An empty Intent writes nothing.
func (in Intent) Save(dir string) error {
	if len(in.Added) == 0 && len(in.Deleted) == 0 {
		return nil
	}
	return writeAtomic(dir, PublishingFile, func(f io.Writer) error {
		w := bufio.NewWriter(f)
		for _, p := range in.Added {
			fmt.Fprintf(w, "+ %q\n", p)
		}
		for _, p := range in.Deleted {
			fmt.Fprintf(w, "- %q\n", p)
		}
		return w.Flush()
	})
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
