package snapshot

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rsgen/rsgen/rs"
)

// nastyTree writes, into a new folder, a tree whose walk has every kind of
// entry: folders deep, wide and empty, more folders than the readers hold
// ahead of the walk, names that sort around a folder's name ("a" before
// "a b", "a-b", "a.txt"), names with spaces, accents and, on Linux, bytes
// that are not UTF-8, links to a file, to a folder, broken, to a loop and
// outside, and a FIFO. Every file is an hour old, so that a rebuild
// trusts it by its stat.
func nastyTree(t *testing.T) string {
	t.Helper()
	dir, outside := t.TempDir(), t.TempDir()
	var files []string
	files = append(files, "a/b/c/d/e/f/g/deep.txt", "a b/x", "a-b/y", "a.txt", "a/z", "été/naïve file.txt")
	for i := range 300 {
		files = append(files, fmt.Sprintf("wide/%03d", i))
	}
	for i := range 20 {
		for j := range 5 {
			files = append(files, fmt.Sprintf("many/%02d/%d/one", i, j), fmt.Sprintf("many/%02d/%d/two.skip", i, j))
		}
	}
	if runtime.GOOS == "linux" {
		files = append(files, "bad\xffname/f\xfe")
	}
	old := time.Now().Add(-time.Hour)
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	for _, empty := range []string{"empty", "a/b/empty"} {
		if err := os.MkdirAll(filepath.Join(dir, empty), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"links/file": "../a.txt", "links/folder": "../a/b", "links/broken": "nothing",
		"links/loop": "..", "links/outside": filepath.Join(outside, "secret")} {
		p := filepath.Join(dir, filepath.FromSlash(link))
		os.MkdirAll(filepath.Dir(p), 0o755)
		symlink(t, target, p)
	}
	if runtime.GOOS != "windows" {
		if err := mkfifo(filepath.Join(dir, "a", "fifo")); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// serialWalk returns what filepath.WalkDir finds in dir, one entry at a
// time: the regular files in its order, and the rest, sorted, but the
// folders; exclude leaves paths out as ScanOptions.Exclude does, and each
// path it is asked about is counted in asked.
func serialWalk(t *testing.T, dir string, exclude func(p string, isDir bool) bool, asked map[string]int) (files, others []string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(full string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, full)
		p := filepath.ToSlash(rel)
		if p == "." {
			return nil
		}
		asked[p]++
		switch {
		case exclude(p, d.IsDir()) && d.IsDir():
			return filepath.SkipDir
		case exclude(p, d.IsDir()), d.IsDir():
		case d.Type().IsRegular():
			files = append(files, p)
		default:
			others = append(others, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(others)
	return files, others
}

// TestParallelWalkFindsWhatASerialWalkFinds: the scan, whose folders are
// read ahead of its walk by several readers, finds the files a serial
// walk finds, in the same order, asks Exclude about each path once, and
// notes every other entry as skipped; on any number of workers, with
// links followed or not. A rebuild then trusts every file by its stat.
func TestParallelWalkFindsWhatASerialWalkFinds(t *testing.T) {
	dir := nastyTree(t)
	exclude := func(p string, isDir bool) bool {
		return isDir && p == "many/03" || strings.HasSuffix(p, ".skip")
	}
	wantAsked := map[string]int{}
	wantFiles, wantOthers := serialWalk(t, dir, exclude, wantAsked)
	for _, follow := range []bool{false, true} {
		for _, workers := range []int{1, 2, 7} {
			t.Run(fmt.Sprintf("follow=%v/workers=%d", follow, workers), func(t *testing.T) {
				tree, err := OpenTree(dir, follow)
				if err != nil {
					t.Fatal(err)
				}
				defer tree.Close()
				var mu sync.Mutex
				asked := map[string]int{}
				var skipped []string
				opts := ScanOptions{FS: tree, Algorithms: []rs.HashAlgorithm{rs.SHA256}, Workers: workers, FollowSymlinks: follow,
					Exclude: func(p string, isDir bool) bool {
						asked[p]++ // the walk's goroutine alone asks
						return exclude(p, isDir)
					},
					Notify: func(n Note) {
						if n.Kind == NoteSkipped {
							mu.Lock()
							skipped = append(skipped, n.Path)
							mu.Unlock()
						}
					},
				}
				recs, _, _, err := scanRecords(context.Background(), &State{}, opts)
				if err != nil {
					t.Fatal(err)
				}
				want, wantSkipped := wantFiles, wantOthers
				if follow {
					// The link to a file and the folder a link leads to are
					// walked at the links' paths; the rest is refused.
					want = slices.Clone(want)
					want = append(want, "links/file", "links/folder/c/d/e/f/g/deep.txt")
					slices.SortFunc(want, comparePaths)
					wantSkipped = slices.DeleteFunc(slices.Clone(wantSkipped), func(p string) bool { return p == "links/file" || p == "links/folder" })
				}
				var got []string
				for _, r := range recs {
					got = append(got, r.Path)
					if want := "links/folder/c/d/e/f/g/deep.txt"; r.Path == want && r.Size != int64(len("a/b/c/d/e/f/g/deep.txt")) {
						t.Errorf("%s: %d bytes, want those of the file the link leads to", want, r.Size)
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("found %d files, want %d: %s", len(got), len(want), firstDifference(got, want))
				}
				slices.Sort(skipped)
				if !slices.Equal(skipped, wantSkipped) {
					t.Errorf("skipped %q, want %q", skipped, wantSkipped)
				}
				if !follow && !maps.Equal(asked, wantAsked) {
					t.Errorf("Exclude asked about %d paths, want %d, each once: %v", len(asked), len(wantAsked), asked)
				}

				prev := &State{Files: RecordsOf(recs...), ScanStart: time.Now().UnixNano()}
				opts.Notify, asked = nil, map[string]int{}
				again, events, stats, err := scanRecords(context.Background(), prev, opts)
				if err != nil {
					t.Fatal(err)
				}
				if len(events) != 0 || stats.Hashed != 0 || stats.Trusted != len(recs) || len(again) != len(recs) {
					t.Errorf("rebuild: %d events, %d files read, %d of %d trusted; want every file trusted", len(events), stats.Hashed, stats.Trusted, len(recs))
				}
			})
		}
	}
}

// TestParallelWalkSkipsUnreadableFolders: with SkipUnreadable, a folder
// that cannot be read is noted and left out wherever it lies, on any
// number of workers, and the files around it are found in order.
func TestParallelWalkSkipsUnreadableFolders(t *testing.T) {
	dir := nastyTree(t)
	deny := map[string]bool{"many/07/2": true, "a/b/c": true, "wide/150": true}
	// os.DirFS opens no name that is not UTF-8.
	notUTF8 := func(p string, _ bool) bool { return !utf8.ValidString(p) }
	all, _ := serialWalk(t, dir, notUTF8, map[string]int{})
	want := slices.DeleteFunc(slices.Clone(all), func(p string) bool {
		return deny[p] || strings.HasPrefix(p, "many/07/2/") || strings.HasPrefix(p, "a/b/c/")
	})
	for _, workers := range []int{1, 3} {
		var mu sync.Mutex
		var skipped []string
		notes := 0
		recs, _, stats, err := scanRecords(context.Background(), &State{}, ScanOptions{
			FS: denyFS{os.DirFS(dir), deny}, Algorithms: []rs.HashAlgorithm{rs.SHA256}, Workers: workers, SkipUnreadable: true, Exclude: notUTF8,
			Notify: func(n Note) {
				mu.Lock()
				defer mu.Unlock()
				if n.Kind == NoteSkipped {
					notes++
				}
				if n.Kind == NoteSkipped && n.Code == SkipUnreadable {
					skipped = append(skipped, n.Path)
				}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range recs {
			got = append(got, r.Path)
		}
		if !slices.Equal(got, want) {
			t.Errorf("workers %d: %s", workers, firstDifference(got, want))
		}
		slices.Sort(skipped)
		if wantSkipped := []string{"a/b/c", "many/07/2", "wide/150"}; !slices.Equal(skipped, wantSkipped) || stats.Skipped != notes {
			t.Errorf("workers %d: skipped %q (%d), want %q", workers, skipped, stats.Skipped, wantSkipped)
		}
	}
}

// comparePaths orders paths as a walk does: a folder's files after the
// folder, before the next name.
func comparePaths(a, b string) int {
	return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/"))
}

// firstDifference says where two lists of paths first differ.
func firstDifference(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("at %d: %q, want %q", i, got[i], want[i])
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(got), len(want))
}

// TestReadJobsTakeAFolderEach: the files to read of one folder are read by
// one job, one after the other (and so linked into the output by one
// worker, with the job's tee), a job reads the files of one folder only,
// and only a folder of more than maxBatchFiles files to read is split;
// a job that has read handOffBytes hands the rest of its folder to an
// idle worker.
func TestReadJobsTakeAFolderEach(t *testing.T) {
	dir := t.TempDir()
	want := map[string]int{}
	for i := range 12 {
		n := 1 + i*7
		if i == 11 {
			n = maxBatchFiles + 10
		}
		for j := range n {
			p := fmt.Sprintf("d%02d/f%03d", i, j)
			if i == 5 && j == 3 {
				p = fmt.Sprintf("d%02d/f003.d/f", i) // a subfolder between the folder's files
			}
			os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
			if err := os.WriteFile(filepath.Join(dir, p), []byte(p), 0o644); err != nil {
				t.Fatal(err)
			}
			want[path.Dir(p)]++
		}
	}
	var mu sync.Mutex
	var jobs [][]string // the files each job's tee saw, in order
	tees := func() (Tee, func()) {
		var seen []string
		tee := func(r *Record, _ bool, _ fs.File) (io.Writer, func(bool) error, error) {
			seen = append(seen, r.Path) // the job's worker alone
			return nil, func(bool) error { return nil }, nil
		}
		return tee, func() {
			mu.Lock()
			jobs = append(jobs, seen)
			mu.Unlock()
		}
	}
	if _, _, _, err := scanRecords(context.Background(), &State{}, ScanOptions{FS: openTree(t, dir), Algorithms: []rs.HashAlgorithm{rs.SHA256}, Workers: 4, Tee: tees}); err != nil {
		t.Fatal(err)
	}
	got := map[string][]int{} // per folder, the sizes of its jobs
	for _, job := range jobs {
		if len(job) == 0 {
			continue
		}
		folder := path.Dir(job[0])
		for _, p := range job {
			if path.Dir(p) != folder {
				t.Fatalf("one job read %s and %s", job[0], p)
			}
		}
		if !slices.IsSortedFunc(job, comparePaths) {
			t.Errorf("a job read %q out of walk order", job)
		}
		got[folder] = append(got[folder], len(job))
	}
	for folder, n := range want {
		jobs := got[folder]
		slices.Sort(jobs)
		switch {
		case folder == "d11" && !slices.Equal(jobs, []int{10, maxBatchFiles}):
			t.Errorf("%s: jobs of %v files, want %d files split at %d", folder, jobs, n, maxBatchFiles)
		case folder == "d05" && !slices.Equal(jobs, []int{3, n - 3}):
			t.Errorf("%s: jobs of %v files, want those before its subfolder and those after", folder, jobs)
		case folder != "d11" && folder != "d05" && !slices.Equal(jobs, []int{n}):
			t.Errorf("%s: jobs of %v files, want one of %d", folder, jobs, n)
		}
	}

	// A folder of files of handOffBytes is read on more than one worker.
	defer func(saved int64) { handOffBytes = saved }(handOffBytes)
	handOffBytes = int64(len("d03/f000"))
	jobs = nil
	if _, _, _, err := scanRecords(context.Background(), &State{}, ScanOptions{FS: openTree(t, filepath.Join(dir, "d03")), Algorithms: []rs.HashAlgorithm{rs.SHA256}, Workers: 4, Tee: tees}); err != nil {
		t.Fatal(err)
	}
	if len(jobs) < 2 {
		t.Errorf("a folder of large files was read by %d job", len(jobs))
	}
}

// TestFolderReadersHoldABoundedLookahead: the folder readers read at most
// their lookahead of the folders the walk has not entered, however many
// are scheduled, and read on as the walk enters them.
func TestFolderReadersHoldABoundedLookahead(t *testing.T) {
	var listed atomic.Int32
	fr := startFolderReaders(2, func(string) ([]folderEntry, error) {
		listed.Add(1)
		return nil, nil
	})
	defer fr.stop()
	reads := make([]*folderRead, 10*fr.limit)
	for i := range reads {
		reads[i] = &folderRead{dir: fmt.Sprint(i)}
	}
	fr.schedule(reads)
	waitListed := func(n int) {
		for int(listed.Load()) < n {
			runtime.Gosched()
		}
		time.Sleep(20 * time.Millisecond) // room to read more, were the readers unbounded
		if got := int(listed.Load()); got != n {
			t.Fatalf("the readers read %d folders ahead of the walk, want %d", got, n)
		}
	}
	waitListed(fr.limit)
	for i := range 3 {
		if _, err := fr.take(reads[i]); err != nil {
			t.Fatal(err)
		}
	}
	waitListed(fr.limit + 3)
}
