package generator

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// prepare readies the output and state folders before a build writes
// anything, under the state's lock: it finishes a state recovery and
// removes the temporary files a killed build left behind.
func (b *builder) prepare() error {
	if err := b.restoreRecovered(); err != nil {
		return err
	}
	return b.removeStaleTemps()
}

// removeStaleTemps deletes the temporary files of killed builds: files
// named with tempPrefix in the output folder, and temporary state files in
// the state folder. Only rsgen creates such names (source files with them
// are never published, see excluder), and the state's lock guarantees that
// no other build is writing them now.
func (b *builder) removeStaleTemps() error {
	err := filepath.WalkDir(b.cfg.Out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), tempPrefix) {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("remove temporary files of an earlier build: %w", err)
	}
	err = filepath.WalkDir(b.cfg.State, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		name := d.Name()
		if !d.IsDir() && (strings.HasPrefix(name, tempPrefix) || strings.HasPrefix(name, ".state-") && strings.HasSuffix(name, ".tmp")) {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("remove temporary files of an earlier build: %w", err)
	}
	return nil
}
