package sink

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/rsgen/rsgen/internal/chunked"
	"github.com/rsgen/rsgen/internal/sysfile"
	"github.com/rsgen/rsgen/layout"
)

// Sink is the output folder as one build writes it. Files are written as
// temporary files and staged; Commit renames them into place in the order
// of publication. The Sink records the output path of every file the build
// publishes (Outputs), so that the next build removes those it no longer
// writes, and counts them by kind.
//
// Stage, Current and the counting methods are safe for concurrent use;
// the writes of documents are not (the documents are written in order).
type Sink struct {
	dir     string
	written func(rel string) // told of every output file this build changes

	// syncFS makes the staged files not synced on their own durable
	// before Commit renames them (syncOutput; a test's stand-in), through
	// outDir, the output folder opened before the first file was written
	// (watchOutput): a sync reports the write-back errors since its
	// descriptor was opened. Where the system has no such sync (nil),
	// every file is synced on its own.
	syncFS func(*os.File) error
	outDir *os.File

	mu          sync.Mutex
	syncedAlone int  // files synced on their own as they were written (see syncNow)
	deferred    bool // a file was written to be synced at Commit
	// staged holds the files waiting to be renamed into place, by step of
	// publication; spill, when set, gives its lists a file to spill into.
	staged         [layout.NumSteps]stagedFiles
	spill          func() (chunked.File, error)
	spillBlockSize int
	// stagedAt maps a staged file's place to its temporary file, for
	// Current: of every file but the versions'; versionsAt, of the version
	// files staged since ForgetVersions.
	stagedAt, versionsAt map[string]string
	// displaced are the output paths of files of earlier builds in the way
	// of files this build stages (Displace).
	displaced []string
	outputs   []string
	recorded  map[string]bool
	counts    [NumKinds]Counts
}

// New returns the Sink of the output folder dir. written, when set, is
// told the output path of every file the build writes or replaces.
func New(dir string, written func(rel string)) *Sink {
	return &Sink{dir: dir, written: written, syncFS: syncOutput, stagedAt: map[string]string{},
		versionsAt: map[string]string{}, recorded: map[string]bool{}}
}

// SpillInto makes the lists of staged files move their full blocks, of
// blockSize bytes (0: 64 KiB), into files of spill's (unnamed files of the
// state folder), so that a build holds a block of each, however many files
// it stages; without, they stay in memory.
func (s *Sink) SpillInto(spill func() (chunked.File, error), blockSize int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.spill, s.spillBlockSize = spill, blockSize
	for i := range s.staged {
		s.staged[i].setSpill(spill, blockSize)
	}
}

// Path returns the file of output path rel.
func (s *Sink) Path(rel string) string { return filepath.Join(s.dir, filepath.FromSlash(rel)) }

// Rel returns the output path of a file in the output folder.
func (s *Sink) Rel(path string) string {
	rel, _ := filepath.Rel(s.dir, path)
	return filepath.ToSlash(rel)
}

// InOutput reports whether path lies in the output folder, where writes are
// staged, rather than in the state folder, where they are not: a build
// reads its state folder's copies back as it publishes from them.
func (s *Sink) InOutput(path string) bool {
	rel, err := filepath.Rel(s.dir, path)
	return err == nil && filepath.IsLocal(rel)
}

// Write streams the file at output path rel through write, atomically and
// only when its bytes change (see Lazy), and records it.
func (s *Sink) Write(rel string, write func(io.Writer) error) error {
	changed, err := s.WriteFile(s.Path(rel), write)
	if err != nil {
		return err
	}
	s.Record(rel, changed)
	return nil
}

// WriteFile streams a file into path through write, atomically and only
// when its bytes change. A file in the output is staged, one elsewhere (the
// state folder) is renamed into place at once. It reports whether the file
// changes, and does not record it: see Record.
func (s *Sink) WriteFile(path string, write func(io.Writer) error) (bool, error) {
	if !s.InOutput(path) {
		f, err := writeLazy(path, write)
		if err != nil {
			return false, err
		}
		defer f.Abort()
		return f.Commit()
	}
	tmp, err := s.WriteLazy(s.Rel(path), write)
	if err != nil || tmp == "" {
		return false, err
	}
	s.Stage(tmp, path)
	return true, nil
}

// WriteLazy streams the file at output path rel through write, comparing
// it with the file there (see Lazy), and returns the temporary file that
// holds its new bytes, or "" when they are the file's. It stages nothing:
// see StageLazy. Unlike WriteFile, it is safe for concurrent use: the parts
// of a long list are written in parallel, then staged in order, so that
// the order of publication, and of the outputs the state records, does
// not depend on which finished first.
func (s *Sink) WriteLazy(rel string, write func(io.Writer) error) (string, error) {
	s.watchOutput()
	f, err := writeLazy(s.Path(rel), write)
	if err != nil {
		return "", err
	}
	defer f.Abort()
	return f.Finish(s.syncNow())
}

// StageLazy stages tmp, which WriteLazy returned for output path rel (""
// for a file unchanged: nothing to stage), and records rel.
func (s *Sink) StageLazy(rel, tmp string) {
	if tmp != "" {
		s.Stage(tmp, s.Path(rel))
	}
	s.Record(rel, tmp != "")
}

// writeLazy streams a file into path through write, as a Lazy file that
// the caller commits or finishes, and aborts.
func writeLazy(path string, write func(io.Writer) error) (*Lazy, error) {
	f, err := CreateLazy(path)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	if err := write(f); err != nil {
		f.Abort()
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return f, nil
}

// WriteNew writes the file at output path rel in full through write, as a
// new temporary file that is staged and recorded; nothing is staged when
// write fails. It is for the files rsgen writes once and never compares:
// dump packages and kept versions.
func (s *Sink) WriteNew(rel string, write func(io.Writer) error) error {
	tmp, err := s.WriteTemp(rel, write)
	if err != nil {
		return err
	}
	s.StageNew(rel, tmp)
	return nil
}

// WriteTemp is the first half of WriteNew: it writes the file at output
// path rel in full through write, as a new temporary file beside it, and
// returns the temporary file's path, for StageNew; nothing is left when
// write fails. Unlike the writes of documents, it is safe for concurrent
// use: dump packages are written in parallel, then staged in order, so that
// the order of publication, and of the outputs the state records, does not
// depend on which finished first.
func (s *Sink) WriteTemp(rel string, write func(io.Writer) error) (string, error) {
	s.watchOutput()
	tmp, err := createTemp(s.Path(rel))
	if err != nil {
		return "", err
	}
	err = write(tmp)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil && s.syncNow() {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}

// StageNew stages tmp, written by WriteTemp, for output path rel, and
// records rel as written.
func (s *Sink) StageNew(rel, tmp string) {
	s.Stage(tmp, s.Path(rel))
	s.Record(rel, true)
}

// Record records output path rel as published by this build, changed or
// not. A path is recorded once. The files of versions (Version) are
// counted but not listed in Outputs: the state keeps the versions, which
// grow with every build, in a file of their own, and the build removes
// their files itself.
func (s *Sink) Record(rel string, changed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	kind := KindOf(rel)
	if kind != Version {
		if s.recorded[rel] {
			return
		}
		s.recorded[rel] = true
		s.outputs = append(s.outputs, rel)
	}
	c := &s.counts[kind]
	if !changed {
		c.Unchanged++
		return
	}
	c.Written++
	if s.written != nil {
		s.written(rel)
	}
}

// Recorded reports whether this build recorded output path rel (see
// Record), which is not that of a version.
func (s *Sink) Recorded(rel string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recorded[rel]
}

// Outputs returns the output paths this build recorded, in the order it
// recorded them, but those of versions (see Record).
func (s *Sink) Outputs() []string { return s.outputs }

// Counts returns the counts of this build's outputs by kind.
func (s *Sink) Counts() [NumKinds]Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// Stage holds the temporary file tmp, which lies beside dst, until Commit
// renames it to dst. The documents of a build are all written before any
// is renamed into place, so a build that fails while it writes them (a
// full disk, an I/O error) leaves every published file as it was, and no
// file of its own.
//
// tmp lies beside dst, or in a folder above dst's when a file of an
// earlier build stands in the way of that folder (see tempDir, Displace).
func (s *Sink) Stage(tmp, dst string) {
	rel := s.Rel(dst)
	name := filepath.Base(tmp)
	if filepath.Dir(tmp) != filepath.Dir(dst) {
		name, _ = filepath.Rel(filepath.Dir(dst), tmp) // "../" and up
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.staged[layout.PublishStep(rel)].add(rel, name)
	if KindOf(rel) == Version {
		s.versionsAt[dst] = tmp
	} else {
		s.stagedAt[dst] = tmp
	}
}

// Displace makes Commit remove the output file rel, which an earlier build
// published and this one does not, and the folders it leaves empty, before
// it renames any staged file into place: rel stands where this build puts
// a file of the other type (a folder where it was a file, or a file where
// it was a folder), and the new one cannot take its name before it left.
//
// Why then, and not after the documents as other files this build no
// longer publishes: the documents that still list rel are replaced by
// those that list the new file within the same Commit, so a reader can
// meet either rel missing (its list not yet replaced) or the new file
// missing (already listed). Removing rel first, and placing the new file
// in the first step of publication, keeps the first window to the
// renames of one Commit, and makes the second impossible: a listed
// resource is never missing longer than the renames take, and a new one
// is in place before any document lists it, as every other resource is.
// A file already gone, or a folder at rel (the new type is in place
// already), is left as it is.
func (s *Sink) Displace(rel string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.displaced = append(s.displaced, rel)
}

// Current returns the file that holds what this build publishes at dst:
// its staged replacement, if any, else dst. Of a version file, it knows
// the replacements staged since ForgetVersions only.
func (s *Sink) Current(dst string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tmp, ok := s.stagedAt[dst]; ok {
		return tmp
	}
	if tmp, ok := s.versionsAt[dst]; ok {
		return tmp
	}
	return dst
}

// ForgetVersions lets Current forget where the version files staged so
// far are. A build reads a version file back only while it works on that
// version's resource (a patch reads two mementos), and a first build that
// keeps versions stages two files per resource, too many to hold a map
// of: the versions are kept one resource at a time, and this is called
// between two.
func (s *Sink) ForgetVersions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.versionsAt)
}

// Staged calls each with the output path of every staged file, in the
// order of publication, and returns the first error, each's or of reading
// the list of staged files back.
func (s *Sink) Staged(each func(rel string) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.staged {
		for rel := range s.staged[i].all() {
			if err := each(rel); err != nil {
				return err
			}
		}
		if err := s.staged[i].err(); err != nil {
			return fmt.Errorf("the files this build staged: %w", err)
		}
	}
	return nil
}

// syncEach is how many files a build syncs one by one as it writes them.
// A file renamed into place must hold its bytes after a crash, but a build
// that keeps versions writes two files per resource on its first build,
// and an fsync each took 1 ms here (20,000 files: 19 s synced one by one,
// 0.5 s by one syncfs): the files past syncEach are synced together, by
// one sync of the output's file system at Commit. A build that writes few
// (most builds, and every one of rsgen watch) does not sync the whole file
// system, whose other writers it would wait for.
const syncEach = 64

// watchOutput opens the output folder for syncStaged, unless it is open:
// before the bytes of a file are written, so that the sync reports their
// write-back errors. When it fails, syncStaged opens it again and says why.
func (s *Sink) watchOutput() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.outDir == nil {
		s.outDir, _ = os.Open(s.dir)
	}
}

// syncNow reports whether the file being written is synced on its own, as
// the first syncEach are, and all where the file system cannot be synced;
// the others are synced at Commit.
func (s *Sink) syncNow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.syncedAlone < syncEach || s.syncFS == nil {
		s.syncedAlone++
		return true
	}
	s.deferred = true
	return false
}

// Commit makes the staged files durable (see syncEach) and renames them
// into place in the order of publication (layout.PublishStep), and in the
// order they were staged within a step: leaves before the indexes and
// lists that point to them, the Source Description last.
func (s *Sink) Commit() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.syncStaged(); err != nil {
		return fmt.Errorf("sync the output folder %s: %w", s.dir, err)
	}
	for _, rel := range s.displaced {
		if _, err := s.remove(rel); err != nil {
			return err
		}
	}
	s.displaced = nil
	for i := range s.staged {
		l := &s.staged[i]
		for rel, tmp := range l.all() {
			if err := s.rename(tmp, s.Path(rel)); err != nil {
				return err
			}
		}
		if err := l.err(); err != nil {
			return fmt.Errorf("the files this build staged: %w", err)
		}
		l.reset(s.spill, s.spillBlockSize)
	}
	clear(s.stagedAt)
	clear(s.versionsAt)
	return nil
}

// rename renames the staged file tmp, named from the folder of dst (see
// Stage), to dst, making dst's folder first when tmp waited in a folder
// above it, where a file of an earlier build stood (Displace).
func (s *Sink) rename(tmp, dst string) error {
	dir := filepath.Dir(dst)
	if strings.ContainsRune(tmp, filepath.Separator) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write %s: %w", dst, err)
		}
	}
	if err := sysfile.Rename(filepath.Join(dir, tmp), dst); err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	return nil
}

// syncStaged makes the staged files not synced on their own durable.
func (s *Sink) syncStaged() error {
	defer s.closeOutDir()
	if !s.deferred {
		return nil
	}
	if s.outDir == nil {
		d, err := os.Open(s.dir)
		if err != nil {
			return err
		}
		s.outDir = d
	}
	if err := s.syncFS(s.outDir); err != nil {
		return err
	}
	s.deferred = false
	return nil
}

func (s *Sink) closeOutDir() {
	if s.outDir != nil {
		s.outDir.Close()
		s.outDir = nil
	}
}

// Discard removes the staged files not renamed into place: after a failed
// build. Those of a step that a failed Commit renamed are gone already.
// When the list of staged files cannot be read back, it removes every
// temporary file of the output folder instead (RemoveTemps): the build
// holds the state's lock, so they are all its own or a killed build's.
func (s *Sink) Discard() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeOutDir()
	unread := false
	for i := range s.staged {
		for rel, tmp := range s.staged[i].all() {
			os.Remove(filepath.Join(filepath.Dir(s.Path(rel)), tmp))
		}
		unread = unread || s.staged[i].err() != nil
		s.staged[i].reset(s.spill, s.spillBlockSize)
	}
	if unread {
		RemoveTemps(s.dir, nil)
	}
	s.displaced = nil
	clear(s.stagedAt)
	clear(s.versionsAt)
}

// Remove deletes the output file rel, which an earlier build published and
// this one does not, and the folders it leaves empty, and counts it. A file
// already gone is not an error, and is not counted: a file two lists name
// (a state's outputs, before format 5, and its versions) is removed once.
func (s *Sink) Remove(rel string) error {
	removed, err := s.remove(rel)
	if err != nil || !removed {
		return err
	}
	s.mu.Lock()
	s.counts[KindOf(rel)].Removed++
	s.mu.Unlock()
	return nil
}

// RemoveFile deletes the output file rel and the folders it leaves empty,
// without counting it (resources are counted by their placer).
func (s *Sink) RemoveFile(rel string) error {
	_, err := s.remove(rel)
	return err
}

// remove deletes the output file rel and the folders it leaves empty, and
// reports whether the file was there.
func (s *Sink) remove(rel string) (bool, error) {
	return RemoveInFolder(s.dir, s.Path(rel))
}

// RemoveInFolder deletes the file at path, which lies in the folder root,
// and the folders between them that it leaves empty (those of a file
// already gone too), and reports whether the file was there. A file
// already gone is not an error, nor a path whose type changed: a folder
// stands at path, or a file in the way of its folder, either of which is
// not the file to remove, and is left as it is.
func RemoveInFolder(root, path string) (bool, error) {
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, syscall.ENOTDIR):
		return false, nil // no folder above it to remove either
	case err == nil && info.IsDir():
		return false, nil
	}
	err = os.Remove(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("remove %s: %w", path, err)
	}
	for dir := filepath.Dir(path); dir != root && len(dir) > len(root); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break // not empty, or gone
		}
	}
	return err == nil, nil
}

// WriteBytes writes a small generated file at output path rel, atomically
// and only when its bytes change, and records it.
func (s *Sink) WriteBytes(rel string, data []byte) error {
	return s.Write(rel, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
