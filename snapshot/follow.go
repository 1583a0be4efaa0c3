package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/rsgen/rsgen/layout"
)

// Following symbolic links (ScanOptions.FollowSymlinks)
//
// A link is followed only while its target, fully resolved, stays inside
// the source folder: a link pointing outside is skipped with a note naming
// it and its target, so that following links can never publish a file
// from elsewhere on the machine (/etc/passwd through a planted link). A
// link to a folder is walked under the link's own path, in walk order, as
// if the folder were there; a link to a folder that holds the link (a
// loop, however many links it takes) is skipped with a note. Broken links
// are skipped with a note too. The file is read through the link's path,
// opened by the Tree beneath the source (a link changed meanwhile to point
// outside fails the open), and hashFile stats the file it opened, so the
// record describes the bytes read.

// follow handles the symbolic link at p: it adds the file a link to a
// file leads to, and returns the folder a link to a folder leads to, for
// the walk to enter.
func (s *scan) follow(ctx context.Context, p string) (*walkFolder, error) {
	tree, ok := s.opts.FS.(*Tree)
	if !ok || !tree.follow {
		s.skip(p, SkipSymlink, "symbolic link not followed (the source is not a folder opened to follow links)")
		return nil, nil
	}
	root := tree.dir
	rootReal, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, &PathError{Path: ".", Err: err}
	}
	target, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(p)))
	switch {
	case errors.Is(err, syscall.ELOOP) || err != nil && strings.Contains(err.Error(), "too many links"):
		s.skip(p, SkipSymlinkRefused, "symbolic link loop: not followed")
		return nil, nil
	case errors.Is(err, fs.ErrNotExist):
		s.skip(p, SkipSymlinkRefused, "broken symbolic link: not followed")
		return nil, nil
	case err != nil:
		s.skip(p, SkipSymlinkRefused, "symbolic link cannot be resolved: "+unwrapPathError(err).Error())
		return nil, nil
	}
	if !layout.Within(target, rootReal) {
		s.skip(p, SkipSymlinkRefused, fmt.Sprintf("symbolic link points outside the source folder (to %s): not followed", target))
		return nil, nil
	}
	info, err := os.Stat(target)
	if err != nil {
		s.skip(p, SkipSymlinkRefused, "symbolic link cannot be resolved: "+unwrapPathError(err).Error())
		return nil, nil
	}
	switch {
	case info.Mode().IsRegular():
		return nil, s.addFile(ctx, &folderEntry{path: p, stat: StatOf(info), statted: true})
	case info.IsDir():
		// A loop: the target holds the folder the link is in, or any
		// folder on the way there, through however many links.
		for dir := path.Dir(p); ; dir = path.Dir(dir) {
			real, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(dir)))
			if err == nil && layout.Within(real, target) {
				s.skip(p, SkipSymlinkRefused, fmt.Sprintf("symbolic link loop (to %s, which holds the link): not followed", target))
				return nil, nil
			}
			if dir == "." {
				break
			}
		}
		return s.enter(&folderRead{dir: p})
	}
	s.skip(p, SkipSpecial, skipReason(info.Mode().Type())+" (through a symbolic link)")
	return nil, nil
}
