package deploy

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rsgen/rsgen/checker"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/snapshot"
)

// webRoot returns the files of a web root (output paths and SHA-256),
// without the deploy's own folder, and fails on a temporary file left.
func webRoot(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	files := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == MetaDir:
			return fs.SkipDir
		case strings.HasPrefix(d.Name(), layout.TempPrefix):
			t.Errorf("temporary file left: %s", rel)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files[rel] = sha256.Sum256(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestDirExampleSite deploys the example site into a web root: the same
// files as the output (the web servers' configuration included), a
// Source that checks, one read for a deploy with nothing changed, and the
// difference (deleted folders pruned) after a change.
func TestDirExampleSite(t *testing.T) {
	s := exampleSite(t, "http://localhost:8000/")
	dst := filepath.Join(t.TempDir(), "www")
	store, err := OpenDir(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	run(t, s.options(store))
	if got, want := webRoot(t, dst), s.outputFiles(t, store); !equalFiles(got, want) {
		t.Errorf("web root differs from the output:\n%v\n%v", keysOf(got), keysOf(want))
	}
	for _, f := range []string{".htaccess", "rsgen-nginx.conf", layout.SourceDescription} {
		if _, err := os.Stat(filepath.Join(dst, f)); err != nil {
			t.Errorf("%s was not deployed: %v", f, err)
		}
	}
	rep, err := checker.CheckDir(context.Background(), dst, checker.Options{VerifyContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Severity == checker.Error {
			t.Errorf("check: %v", f)
		}
	}

	before := store.Requests()
	if sum := run(t, s.options(store)); sum.Unchanged != sum.Files {
		t.Errorf("no-change deploy: %+v", sum)
	}
	if n := store.Requests().sub(before).Total(); n != 1 {
		t.Errorf("a deploy with nothing changed made %d requests; want 1", n)
	}

	s.remove(t, "collection/metadata/survey-1843.dc.xml")
	s.write(t, "data/catalogue.csv", "id,title\n1,changed\n")
	s.build(t)
	run(t, s.options(store))
	if got, want := webRoot(t, dst), s.outputFiles(t, store); !equalFiles(got, want) {
		t.Errorf("web root differs from the output after a change")
	}
	if _, err := os.Stat(filepath.Join(dst, "collection", "metadata")); !os.IsNotExist(err) {
		t.Errorf("the folder the deleted file left empty is still there: %v", err)
	}
}

func equalFiles(a, b map[string][32]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestFileChangedUnderDeploy: an output file replaced after the deploy
// read it (a build running meanwhile) fails the deploy rather than
// publish bytes the plan did not read; nothing of a later step is written.
func TestFileChangedUnderDeploy(t *testing.T) {
	s := tinySite(t, "https://data.example.org/", 3)
	dst := t.TempDir()
	store, err := OpenDir(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	opts := s.options(store)
	policy, err := OutputPolicy(openRoot(t, s.cfg.Out), slices.Values([]string(nil)), s.types(t), opts.ShortCache)
	if err != nil {
		t.Fatal(err)
	}
	replaced := false
	opts.Policy = func(rel string) Headers {
		if !replaced { // the plan asks the policy once the output was read
			replaced = true
			p := filepath.Join(s.cfg.Out, "docs", "file-001.txt")
			os.Remove(p)
			os.WriteFile(p, []byte("file 1, rewritten\n"), 0o644)
		}
		return policy(rel)
	}
	_, err = Run(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "docs/file-001.txt") || !strings.Contains(err.Error(), "changed") {
		t.Fatalf("deploy of a file replaced under it: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dst, layout.SourceDescription)); !os.IsNotExist(err) {
		t.Error("the Source Description was deployed after a failed step")
	}
}

// TestTamperedManifest: a manifest naming a key outside the store, or in
// the deploy's own folder, fails the deploy before it deletes anything.
func TestTamperedManifest(t *testing.T) {
	s := tinySite(t, "https://data.example.org/", 1)
	parent := t.TempDir()
	dst := filepath.Join(parent, "www")
	store, err := OpenDir(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	victim := filepath.Join(parent, "victim.txt")
	os.WriteFile(victim, []byte("keep me"), 0o644)
	m := newManifest()
	m.entries["../victim.txt"] = &entry{Object: Object{Key: "../victim.txt"}}
	os.MkdirAll(filepath.Join(dst, MetaDir), 0o755)
	os.WriteFile(filepath.Join(dst, MetaDir, "manifest"), m.encode(), 0o644)
	_, err = Run(context.Background(), s.options(store))
	if err == nil || !strings.Contains(err.Error(), "bad path") {
		t.Fatalf("deploy with a tampered manifest: %v", err)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("a file outside the web root was deleted: %v", err)
	}
}

// TestDeployLeavesNoTemporaryFiles: a deploy removes its file list and
// its plan's files from its folder of the state folder, and the leftovers
// of a deploy killed meanwhile, which could be hundreds of megabytes.
func TestDeployLeavesNoTemporaryFiles(t *testing.T) {
	s := tinySite(t, "https://data.example.org/", 3)
	store, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	run(t, s.options(store))
	dir := filepath.Join(s.cfg.State, snapshot.DeployDir, storeID(store))
	left := filepath.Join(dir, layout.TempPrefix+"plan-killed")
	if err := os.MkdirAll(left, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(left, "writes-0"), []byte("left by a killed deploy"), 0o644)
	s.write(t, "docs/file-000.txt", "changed\n")
	s.build(t)
	run(t, s.options(store))
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), layout.TempPrefix) {
			t.Errorf("%s left in the state folder", e.Name())
		}
	}
}

// TestHashCacheKept: the scan's file list is kept as the hash cache
// (sink.Keep, which copies where there are no hard links:
// sink.TestKeepWithoutHardLinks), without a warning, and a deploy with
// nothing changed reads no file.
func TestHashCacheKept(t *testing.T) {
	s := tinySite(t, "https://data.example.org/", 3)
	store, err := OpenDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	opts := s.options(store)
	opts.Notify = func(e Event) {
		if e.Kind == EventWarning {
			t.Errorf("warning: %s", e.Msg)
		}
	}
	if sum := run(t, opts); sum.Hashed != sum.Files {
		t.Fatalf("first deploy read %d of %d files", sum.Hashed, sum.Files)
	}
	if sum := run(t, opts); sum.Hashed != 0 || sum.Unchanged != sum.Files {
		t.Errorf("no-change deploy read %d of %d files; %d unchanged", sum.Hashed, sum.Files, sum.Unchanged)
	}
}

// TestDirTamperedManifest alters a web root's manifest, as someone with
// write access to it could: it names a file rsgen never published there
// (the site's own notes), a file rsgen published that someone replaced
// since, and a folder holding files, none of which the output has. The
// next deploy deletes none of them, warns about each, and completes; the manifest then names none of them, and later deploys run.
func TestDirTamperedManifest(t *testing.T) {
	s := tinySite(t, "https://data.example.org/", 2)
	dst := t.TempDir()
	store, err := OpenDir(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	run(t, s.options(store))
	for rel, content := range map[string]string{"notes.txt": "the site's own notes\n", "docs/file-000.txt": "replaced on the server\n",
		"folder/inside.txt": "a file in a folder\n"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755)
		os.WriteFile(filepath.Join(dst, rel), []byte(content), 0o644)
	}
	path := filepath.Join(dst, MetaDir, "manifest")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := mustDecodeManifest(t, data)
	for _, key := range []string{"notes.txt", "folder"} {
		m.entries[key] = &entry{Object: Object{Key: key, Size: 21, SHA256: sha256.Sum256([]byte(key))}}
	}
	os.WriteFile(path, m.encode(), 0o644)
	s.remove(t, "docs/file-000.txt")
	s.build(t)

	var warned []string
	opts := s.options(store)
	opts.Notify = func(e Event) {
		if e.Kind == EventWarning {
			warned = append(warned, e.Path+": "+e.Msg)
		}
	}
	if sum := run(t, opts); sum.Deletes != 0 {
		t.Errorf("%d deleted; want none", sum.Deletes)
	}
	for _, rel := range []string{"notes.txt", "docs/file-000.txt", "folder/inside.txt"} {
		if _, err := os.Stat(filepath.Join(dst, rel)); err != nil {
			t.Errorf("%s was deleted: %v", rel, err)
		}
	}
	if len(warned) != 3 || !strings.HasPrefix(warned[0], "docs/file-000.txt: its length or SHA-256 is not that of the file rsgen published there") ||
		!strings.HasPrefix(warned[1], "folder: a folder, not the file rsgen published there: kept") || !strings.HasPrefix(warned[2], "notes.txt: ") {
		t.Errorf("warnings %q; want one about each path kept", warned)
	}
	data, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"notes.txt", "folder", "docs/file-000.txt"} {
		if e := mustDecodeManifest(t, data).entries[key]; e != nil {
			t.Errorf("the manifest still names %s", key)
		}
	}
	if sum := run(t, s.options(store)); sum.Unchanged != sum.Files {
		t.Errorf("the next deploy: %+v", sum)
	}
}

// TestDirKilledDeployTidied kills a deploy to a web root (SIGKILL) while
// it writes files: their temporary files stay behind, beside them, where
// no server configured by rsgen serves them. The next deploy leaves them
// while another deploy holds the web root's lock; then it removes them,
// and only them: other files whose names start as a deploy's temporary
// files do are not the deploy's.
func TestDirKilledDeployTidied(t *testing.T) {
	s := tinySite(t, "https://data.example.org/", 3)
	dst := t.TempDir()
	marker := filepath.Join(t.TempDir(), "writing")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperDeployDir$")
	cmd.Env = append(os.Environ(), "RSGEN_DEPLOY_HELPER=1", "HELPER_CONFIG="+s.dir+"/rsgen.toml", "HELPER_BASE="+s.cfg.BaseURL,
		"HELPER_DIR="+dst, "HELPER_MARKER="+marker)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) { // polls for the child's handshake
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the deploy to kill did not start writing")
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	left := tempFiles(t, dst)
	if len(left) == 0 {
		t.Fatal("the killed deploy left no temporary file: the test tests nothing")
	}
	others := []string{"docs/" + tempPrefix + "notours", "docs/" + layout.TempPrefix + "other", "docs/" + tempPrefix + "0123456789ABCDEF"}
	for _, rel := range others {
		os.WriteFile(filepath.Join(dst, rel), []byte("not the deploy's\n"), 0o644)
	}

	store, err := OpenDir(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	held, err := store.Lock(context.Background(), Holder{Host: "elsewhere", PID: 4242}, false)
	if err != nil {
		t.Fatal(err)
	}
	var locked *LockedError
	if _, err := Run(context.Background(), s.options(store)); !errors.As(err, &locked) {
		t.Fatalf("deploy while another holds the lock: %v", err)
	}
	if got := tempFiles(t, dst); !slices.Equal(got, left) {
		t.Errorf("the deploy refused by the lock touched the temporary files: %v, then %v", left, got)
	}
	held.Release(context.Background())

	run(t, s.options(store))
	if got := tempFiles(t, dst); len(got) != 0 {
		t.Errorf("temporary files of the killed deploy left: %v", got)
	}
	for _, rel := range others {
		if _, err := os.Stat(filepath.Join(dst, rel)); err != nil {
			t.Errorf("%s, not the deploy's, was removed: %v", rel, err)
		}
	}
}

// tempFiles returns the deploy's temporary files in the web root dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var temps []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && isTemp(d.Name()) {
			rel, _ := filepath.Rel(dir, p)
			temps = append(temps, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return temps
}

// TestHelperDeployDir is the child process of TestDirKilledDeployTidied:
// a deploy to a web root whose writes stall after their first byte, until
// it is killed.
func TestHelperDeployDir(t *testing.T) {
	if os.Getenv("RSGEN_DEPLOY_HELPER") != "1" || os.Getenv("HELPER_DIR") == "" {
		t.Skip("runs only as the child of a test")
	}
	s := loadSite(t, os.Getenv("HELPER_CONFIG"), os.Getenv("HELPER_BASE"))
	store, err := OpenDir(os.Getenv("HELPER_DIR"))
	if err != nil {
		t.Fatal(err)
	}
	Run(context.Background(), s.options(&stallingStore{DirStore: store, marker: os.Getenv("HELPER_MARKER")}))
}

// stallingStore is a web root whose writes stall (see stallingReader).
type stallingStore struct {
	*DirStore
	marker string
}

func (s *stallingStore) Put(ctx context.Context, obj *Object, body io.ReaderAt, ifAbsent bool) error {
	return s.DirStore.Put(ctx, obj, &stallingReader{r: body, marker: s.marker}, ifAbsent)
}

// stallingReader gives the first byte of a file, then writes the file
// marker and stalls: the temporary file it is copied into is there.
type stallingReader struct {
	r      io.ReaderAt
	marker string
}

func (r *stallingReader) ReadAt(p []byte, off int64) (int, error) {
	if off == 0 {
		return r.r.ReadAt(p[:1], 0)
	}
	os.WriteFile(r.marker, nil, 0o644)
	time.Sleep(time.Hour) // until killed
	return 0, io.EOF
}
