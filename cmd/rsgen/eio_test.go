//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rsgen/rsgen/layout"
)

// TestEIOInjection runs the real rsgen binary under strace's syscall fault
// injection (issue 5: EIO while writing gives a clear error and leaves the
// previous output and state usable). For each family of file system calls
// rsgen makes, and N = 1, 2, ..., the build of a small mutated site gets
// EIO from its Nth call of that family, and must either
//
//   - exit 1 with one error line that says "input/output error" and names a
//     path, leave the state file as it was, every output file either as it
//     was or as the same build completed writes it (never torn, never a
//     third version), and no temporary file; after which a build without
//     injection publishes every change of the mutation exactly once, passes
//     `rsgen check --strict --verify-content`, and gives the output a clean
//     build gives (see checkLeft for what a recovery changes);
//   - or exit 0 when the failed call is one rsgen may ignore (a write to
//     stdout, a Go runtime probe, the removal of a temporary file), and
//     then its output is the complete, correct one.
//
// A build writes every document, package and replaced resource as a
// temporary file first and renames them all into place at the end
// (generator/sink.go, stage), so a failure before that leaves the output
// as it was ("left the output as it was" in the log). A failure among the
// renames, or after them (removing what is no longer published, saving
// the state), leaves some files at their new version ("partly advanced"):
// each file is then either as before or as after, and the next build
// completes the publication from the record the failed one left
// (generator/intent.go), removing its files that nothing lists.
//
// strace counts the calls "per syscall and per tracee", and a Go program
// runs on several threads: when=N fails the Nth call of the family on each
// thread, so a run may inject more than once. The test counts the
// injections strace reports ("(INJECTED)" in its trace) and stops a
// family's sweep when two values of N in a row inject nothing.
// RSGEN_EIO_ONLY=family[:N] runs one family (or one injection), and
// RSGEN_EIO_KEEP=dir keeps a copy of the site after each problem.
func TestEIOInjection(t *testing.T) {
	if testing.Short() {
		t.Skip("runs hundreds of builds under strace; skipped with -short")
	}
	// Among the longest tests of the package: they overlap. The other
	// tests that set straceArgs are not parallel, so they are done by now.
	t.Parallel()
	requireStrace(t)
	start := time.Now()
	bin := rsgenBinary(t)

	// The syscall families rsgen's writer uses. All of a family share one
	// injection counter per thread.
	families := []eioFamily{
		{name: "write", calls: "write,pwrite64,writev,pwritev"},
		{name: "fsync", calls: "fsync,fdatasync,sync_file_range,syncfs"},
		{name: "rename", calls: "rename,renameat,renameat2"},
		{name: "link", calls: "link,linkat"},
		// openat cannot be filtered by flags: reads fail too, which is fine.
		{name: "open", calls: "open,openat,creat"},
		{name: "chmod", calls: "chmod,fchmod,fchmodat"},
		{name: "utimes", calls: "utimensat,utimes,futimesat"},
		{name: "mkdir", calls: "mkdir,mkdirat"},
		{name: "unlink", calls: "unlink,unlinkat,rmdir"},
		{name: "read", calls: "read,pread64,readv"},
		{name: "copy", calls: "copy_file_range,sendfile,splice"},
		{name: "close", calls: "close"},
		{name: "truncate", calls: "ftruncate,truncate"},
	}

	// RSGEN_EIO_ONLY=family or family:N runs only those injections.
	if only := os.Getenv("RSGEN_EIO_ONLY"); only != "" {
		name, n, _ := strings.Cut(only, ":")
		families = slices.DeleteFunc(families, func(f eioFamily) bool { return f.name != name })
		if len(families) == 0 {
			t.Fatalf("RSGEN_EIO_ONLY=%s: no such family", only)
		}
		families[0].only, _ = strconv.Atoi(n)
	}

	// Two workers, each with its own copy of the site, share the families.
	const workers = 2
	sites := make([]*eioSite, workers)
	for i := range sites {
		sites[i] = newEIOSite(t, bin)
	}
	jobs := make(chan *eioFamily, len(families))
	for i := range families {
		jobs <- &families[i]
	}
	close(jobs)
	var wg sync.WaitGroup
	for _, s := range sites {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range jobs {
				s.sweep(f)
			}
		}()
	}
	wg.Wait()

	var total eioStats
	for _, f := range families {
		t.Logf("%-8s %3d injected runs (N up to %d, %d injections): %d failed cleanly (%d left the output as it was, %d partly advanced, %d with the state saved), %d succeeded despite the injection",
			f.name, f.stats.runs, f.stats.maxN, f.stats.injections, f.stats.failed, f.stats.intact, f.stats.advanced, f.stats.saved, f.stats.succeeded)
		total.add(&f.stats)
	}
	t.Logf("total: %d injected runs, %d injections: %d failed cleanly (%d left the output as it was, %d partly advanced, %d with the state saved), %d succeeded despite the injection; %s",
		total.runs, total.injections, total.failed, total.intact, total.advanced, total.saved, total.succeeded, time.Since(start).Round(time.Millisecond))
	t.Logf("%d runs failed in the dynamic loader, %d in the Go runtime; after %d failures the next build rebuilt the state from the output",
		total.loader, total.runtime, total.recovered)
	if want := map[bool]int{true: 100, false: 20}[stress()]; !t.Failed() && os.Getenv("RSGEN_EIO_ONLY") == "" && total.failed < want {
		t.Errorf("only %d injected runs failed; the injection does not reach rsgen's writer", total.failed)
	}
}

// requireStrace skips the test when strace is missing or cannot trace here
// (no ptrace in a container), unless RSGEN_REQUIRE_STRACE=1.
func requireStrace(t *testing.T) {
	t.Helper()
	skip := func(why string) {
		if os.Getenv("RSGEN_REQUIRE_STRACE") == "1" {
			t.Fatalf("%s, and RSGEN_REQUIRE_STRACE=1 (apt-get install strace; allow ptrace)", why)
		}
		t.Skipf("%s; set RSGEN_REQUIRE_STRACE=1 to make this an error", why)
	}
	if _, err := exec.LookPath("strace"); err != nil {
		skip("strace not found")
	}
	probe := func(extra ...string) error {
		args := append([]string{"-f", "-qq", "-o", "/dev/null"}, extra...)
		args = append(args, "-e", "trace=getppid", "-e", "inject=getppid:error=EIO:when=1", "--", "true")
		out, err := exec.Command("strace", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v %s", err, bytes.TrimSpace(out))
		}
		return nil
	}
	if err := probe(); err != nil {
		skip(fmt.Sprintf("strace cannot trace here (ptrace not permitted?): %v", err))
	}
	// With a seccomp filter, strace stops the program only at the calls it
	// traces: several times faster.
	straceArgs = []string{"-f", "-qq", "-y"}
	if probe("--seccomp-bpf") == nil {
		straceArgs = append(straceArgs, "--seccomp-bpf")
	}
}

// straceArgs are the options every injected run passes to strace.
var straceArgs []string

// straceCommand returns the strace prefix that fails the nth call of
// calls on each thread with EIO, and traces them into traceFile; extra
// options (-P path) come first.
func straceCommand(traceFile, calls string, n int, extra ...string) []string {
	args := append([]string{"strace"}, straceArgs...)
	args = append(args, extra...)
	return append(args, "-o", traceFile, "-e", "trace="+calls,
		"-e", fmt.Sprintf("inject=%s:error=EIO:when=%d", calls, n), "--")
}

// injectedLines returns the calls strace's trace says it failed. A call
// that another thread's call interrupted in the trace ends on a line of
// its own, "<... write resumed>", without its arguments; its start, with
// the descriptor (-y names it, as <anon_inode:[eventfd]> for the Go
// runtime's poller), is joined to it.
func injectedLines(t *testing.T, traceFile string) []string {
	t.Helper()
	trace, err := os.ReadFile(traceFile)
	eioMust(t, err)
	var injected []string
	unfinished := map[string]string{} // by thread id, the call it started
	for _, line := range strings.Split(string(trace), "\n") {
		pid, _, _ := strings.Cut(line, " ")
		if start, ok := strings.CutSuffix(line, " <unfinished ...>"); ok {
			unfinished[pid] = start
			continue
		}
		if strings.Contains(line, " resumed>") {
			line = unfinished[pid] + " " + line
			delete(unfinished, pid)
		}
		if strings.HasSuffix(line, "(INJECTED)") {
			injected = append(injected, line)
		}
	}
	return injected
}

type eioFamily struct {
	name   string
	calls  string // strace's syscall set
	stats  eioStats
	errors int
	only   int // the only N to try, if not 0
}

type eioStats struct {
	runs, injections, maxN int
	failed, succeeded      int
	intact, advanced       int // failed runs: output as before, or partly as after
	saved                  int // failed runs whose state was already saved
	loader                 int // runs the dynamic loader failed: rsgen did not start
	runtime                int // runs the Go runtime died of (its eventfd)
	recovered              int // failed runs after which the next build rebuilt the state from the output
}

func (s *eioStats) add(o *eioStats) {
	s.runs += o.runs
	s.injections += o.injections
	s.failed += o.failed
	s.succeeded += o.succeeded
	s.intact += o.intact
	s.advanced += o.advanced
	s.saved += o.saved
	s.loader += o.loader
	s.runtime += o.runtime
	s.recovered += o.recovered
}

// The build times: the first build, the mutated build (under injection),
// and the build that follows a failed one.
var (
	eioNow0 = "2026-01-01T00:00:00Z"
	eioNow1 = "2026-01-01T02:00:00Z" // past rotate: the first Change List closes
	eioNow2 = "2026-01-01T03:00:00Z"
)

const eioConfig = `base_url = "https://data.example.org/"
describedby = "https://data.example.org/about.html"
hashes = ["md5", "sha-256"]

[changelist]
rotate = "1h"

[dumps]
resource_dump = true
change_dump = true
package_size = "1kB"

[archives]
change_lists = true
resource_lists = true

[publish]
targets = ["netlify", "nginx"]
robots = true
html_link = true

[[set]]
name = "default"
describedby = "https://data.example.org/about.html"
keep_versions = true
patches = true
`

// eioSite is a source tree after its mutation, with the output and state
// of the build before the mutation kept aside, and the outputs clean builds
// of the mutation give.
type eioSite struct {
	t                *testing.T
	bin              string
	dir, src         string
	out, state       string
	before           eioTree // output before the mutated build
	stateBefore      eioTree
	after1, after2   eioTree // output of the mutated build at eioNow1, eioNow2
	after12          eioTree // output of the mutated build at eioNow1, then a build at eioNow2
	closed1, closed2 eioTree // state archive after them
	want             map[string]string
}

func newEIOSite(t *testing.T, bin string) *eioSite {
	t.Helper()
	dir := t.TempDir()
	s := &eioSite{t: t, bin: bin, dir: dir, src: filepath.Join(dir, "site"),
		out: filepath.Join(dir, "public"), state: filepath.Join(dir, ".rsgen")}
	eioMust(t, os.WriteFile(filepath.Join(dir, "rsgen.toml"), []byte(eioConfig), 0o644))
	files := map[string]string{
		"a.txt":                   "alpha\n",
		"keep.txt":                "unchanged\n",
		"page.html":               "<html><head><title>p</title></head><body>page</body></html>\n",
		"sub/b.txt":               strings.Repeat("bravo ", 300),
		"sub/deep/c.json":         `{"c": 1}` + "\n",
		"sub/deep/gone.txt":       "to be deleted\n",
		"odd dir/ä b#c%d?e&f.txt": "odd\n",
		"data/big.bin":            strings.Repeat("0123456789abcdef", 256),
	}
	for p, c := range files {
		s.write(p, c)
	}
	if code, _, stderr := s.run(nil, "build", "--now", eioNow0); code != 0 {
		t.Fatalf("first build: exit %d\n%s", code, stderr)
	}
	// The mutation: two files created (one in a new folder), four
	// updated (one rewritten in the published form, one with an odd name,
	// one JSON file, which gets a patch from its kept version), two
	// deleted (one emptying its folder).
	s.write("new.txt", "new\n")
	s.write("fresh/dir/n.txt", "fresh\n")
	s.write("a.txt", "alpha, longer now\n")
	s.write("page.html", "<html><head><title>p2</title></head><body>page 2</body></html>\n")
	s.write("odd dir/ä b#c%d?e&f.txt", "odd, changed\n")
	s.write("sub/deep/c.json", `{"c": 2}`+"\n")
	s.remove("sub/b.txt")
	s.remove("sub/deep/gone.txt")
	s.want = map[string]string{
		"new.txt": "created", "fresh/dir/n.txt": "created",
		"a.txt": "updated", "page.html": "updated", "odd dir/ä b#c%d?e&f.txt": "updated", "sub/deep/c.json": "updated",
		"sub/b.txt": "deleted", "sub/deep/gone.txt": "deleted",
	}
	s.before = s.snapshot(s.out)
	s.stateBefore = s.snapshot(s.state)

	for _, ref := range []struct {
		now          string
		out, archive *eioTree
	}{{eioNow1, &s.after1, &s.closed1}, {eioNow2, &s.after2, &s.closed2}} {
		s.restore()
		if code, _, stderr := s.run(nil, "build", "--now", ref.now); code != 0 {
			t.Fatalf("mutated build at %s: exit %d\n%s", ref.now, code, stderr)
		}
		*ref.out, *ref.archive = s.snapshot(s.out), s.archive()
		if problems := s.checkPublished(); len(problems) > 0 {
			t.Fatalf("a clean build of the mutation at %s:\n%s", ref.now, strings.Join(problems, "\n"))
		}
	}
	s.restore()
	for _, now := range []string{eioNow1, eioNow2} {
		if code, _, stderr := s.run(nil, "build", "--now", now); code != 0 {
			t.Fatalf("build at %s: exit %d\n%s", now, code, stderr)
		}
	}
	s.after12 = s.snapshot(s.out)
	if d := eioDiff(s.after1, s.after2); len(d) == 0 {
		t.Fatal("the builds at two times publish the same output: the test cannot tell them apart")
	}
	return s
}

// write replaces a source file the way editors do: a new file renamed over
// the old one, so that its published hard link keeps the old bytes.
func (s *eioSite) write(rel, content string) {
	p := filepath.Join(s.src, filepath.FromSlash(rel))
	eioMust(s.t, os.MkdirAll(filepath.Dir(p), 0o755))
	eioMust(s.t, os.WriteFile(p+".new~", []byte(content), 0o644))
	eioMust(s.t, os.Rename(p+".new~", p))
}

func (s *eioSite) remove(rel string) {
	eioMust(s.t, os.Remove(filepath.Join(s.src, filepath.FromSlash(rel))))
}

// run runs rsgen in the site's folder, under prefix (strace) if given.
func (s *eioSite) run(prefix []string, args ...string) (code int, stdout, stderr string) {
	argv := append(slices.Clone(prefix), s.bin)
	argv = append(argv, args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = s.dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	default:
		s.t.Fatalf("%v: %v", argv, err)
	}
	return code, o.String(), e.String()
}

// eioTree is a folder's files by slash path.
type eioTree map[string]eioFile

type eioFile struct {
	data  []byte
	mode  fs.FileMode
	mtime time.Time
	link  string // the source file it is a hard link of, if any
}

// snapshot reads every file under root.
func (s *eioSite) snapshot(root string) eioTree {
	s.t.Helper()
	inodes := map[uint64]string{}
	filepath.WalkDir(s.src, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				inodes[info.Sys().(*syscall.Stat_t).Ino] = p
			}
		}
		return nil
	})
	tree := eioTree{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		tree[filepath.ToSlash(rel)] = eioFile{data: data, mode: info.Mode(), mtime: info.ModTime(),
			link: inodes[info.Sys().(*syscall.Stat_t).Ino]}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.t.Fatal(err)
	}
	return tree
}

// archive is the state folder without the state file itself, whose bytes
// hold the wall-clock time of the scan.
func (s *eioSite) archive() eioTree {
	tree := s.snapshot(s.state)
	delete(tree, "state")
	return tree
}

// restore puts back the output and state of the build before the
// mutation, hard links included.
func (s *eioSite) restore() {
	s.t.Helper()
	for root, tree := range map[string]eioTree{s.out: s.before, s.state: s.stateBefore} {
		eioMust(s.t, os.RemoveAll(root))
		for rel, f := range tree {
			p := filepath.Join(root, filepath.FromSlash(rel))
			eioMust(s.t, os.MkdirAll(filepath.Dir(p), 0o755))
			if f.link != "" {
				eioMust(s.t, os.Link(f.link, p))
				continue
			}
			eioMust(s.t, os.WriteFile(p, f.data, f.mode.Perm()))
			eioMust(s.t, os.Chmod(p, f.mode.Perm()))
			eioMust(s.t, os.Chtimes(p, f.mtime, f.mtime))
		}
	}
}

// eioDiff lists the files whose bytes or mode differ between two trees.
func eioDiff(a, b eioTree) []string {
	var d []string
	for p, fa := range a {
		fb, ok := b[p]
		switch {
		case !ok:
			d = append(d, "only before: "+p)
		case !bytes.Equal(fa.data, fb.data):
			d = append(d, "bytes differ: "+p)
		case fa.mode.Perm() != fb.mode.Perm():
			d = append(d, fmt.Sprintf("mode %v, then %v: %s", fa.mode.Perm(), fb.mode.Perm(), p))
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			d = append(d, "only after: "+p)
		}
	}
	slices.Sort(d)
	return d
}

// sweep runs the mutated build with EIO injected into the Nth call of the
// family, for N = 1 to 24, then every third and then every eighth N, until
// two N in a row inject nothing. The short form (without RSGEN_STRESS=1)
// tries N = 1, 3, 9 and 27, until one injects nothing.
func (s *eioSite) sweep(f *eioFamily) {
	if f.only > 0 {
		s.inject(f, f.only)
		return
	}
	idle, maxIdle, maxN := 0, 2, 2000
	if !stress() {
		maxIdle, maxN = 1, 28
	}
	for n := 1; idle < maxIdle && n < maxN && f.errors < 3; {
		if s.inject(f, n) {
			idle = 0
			f.stats.maxN = n
		} else {
			idle++
		}
		switch {
		case !stress():
			n *= 3 // the short form: the first call, then sparser
		case n < 24:
			n++
		case n < 60:
			n += 3
		default:
			n += 8
		}
	}
}

// errorf reports a problem of one injected run; after three, the test goes
// on with the next family.
func (s *eioSite) errorf(f *eioFamily, n int, trace, format string, args ...any) {
	f.errors++
	if keep := os.Getenv("RSGEN_EIO_KEEP"); keep != "" {
		// RSGEN_EIO_KEEP=dir keeps a copy of the site after each problem.
		dst := filepath.Join(keep, fmt.Sprintf("%s-%d-%d", f.name, n, f.errors))
		exec.Command("cp", "-a", s.dir, dst).Run()
	}
	s.t.Errorf("EIO into %s call %d: %s\ninjected:\n%s", f.name, n, fmt.Sprintf(format, args...), trace)
}

// inject runs one injected build and checks what it left; it reports
// whether strace injected anything.
func (s *eioSite) inject(f *eioFamily, n int) bool {
	s.restore()
	traceFile := filepath.Join(s.dir, "strace.out")
	code, _, stderr := s.run(straceCommand(traceFile, f.calls, n), "build", "--now", eioNow1)
	injected := injectedLines(s.t, traceFile)
	injectedText := strings.Join(injected, "\n")
	if len(injected) == 0 {
		if code != 0 {
			s.errorf(f, n, "(nothing)", "exit %d with nothing injected:\n%s", code, stderr)
		}
		return false
	}
	f.stats.runs++
	f.stats.injections += len(injected)
	if code == 127 && strings.Contains(stderr, "error while loading shared libraries") {
		// The dynamic loader failed before rsgen started (the binary is
		// linked with libc): nothing of rsgen's to check but that it
		// changed nothing.
		f.stats.loader++
		if d := eioDiff(s.before, s.snapshot(s.out)); len(d) > 0 {
			s.errorf(f, n, injectedText, "the loader failed, yet the output changed:\n%s", strings.Join(d, "\n"))
		}
		return true
	}
	// The Go runtime writes to (and reads) an eventfd to wake its network
	// poller, and dies ("fatal error: runtime: netpollBreak write
	// failed") when that fails: not rsgen's to handle. Such a run is
	// checked as a killed build is: the output and state as a failed
	// build leaves them, and the next build repairs the rest.
	if code == 2 && strings.Contains(stderr, "fatal error: runtime:") && strings.Contains(injectedText, "<anon_inode:[eventfd]>") {
		f.stats.runtime++
		s.checkFailed(f, n, injectedText, stderr, false)
		return true
	}
	if strings.Contains(stderr, "panic:") || strings.Contains(stderr, "goroutine ") {
		s.errorf(f, n, injectedText, "crashed (exit %d):\n%s", code, stderr)
		return true
	}
	switch code {
	case 0:
		f.stats.succeeded++
		s.checkSucceeded(f, n, injectedText)
	case 1:
		f.stats.failed++
		s.checkFailed(f, n, injectedText, stderr, true)
	default:
		s.errorf(f, n, injectedText, "exit %d, want 1 (failure) or 0:\n%s", code, stderr)
	}
	return true
}

// checkSucceeded: a build that ignored its injected error must have
// published exactly what a clean build publishes.
func (s *eioSite) checkSucceeded(f *eioFamily, n int, injected string) {
	if d := eioDiff(s.after1, s.snapshot(s.out)); len(d) > 0 {
		s.errorf(f, n, injected, "exit 0, but the output is not a clean build's:\n%s", strings.Join(d, "\n"))
	}
	archive := s.archive()
	delete(archive, "lock") // see tempFiles
	if d := eioDiff(s.closed1, archive); len(d) > 0 {
		s.errorf(f, n, injected, "exit 0, but the state archive is not a clean build's:\n%s", strings.Join(d, "\n"))
	}
	if problems := append(s.tempFiles(injected), s.checkPublished()...); len(problems) > 0 {
		s.errorf(f, n, injected, "exit 0, but:\n%s", strings.Join(problems, "\n"))
	}
}

// checkFailed checks the error message and what a failed build left, then
// builds again without injection.
func (s *eioSite) checkFailed(f *eioFamily, n int, injected, stderr string, clean bool) {
	if clean {
		s.checkMessage(f, n, injected, stderr)
	}
	s.checkLeft(f, n, injected, clean)
}

// checkMessage checks that a failed build says why, once.
func (s *eioSite) checkMessage(f *eioFamily, n int, injected, stderr string) {
	var errLines []string
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.HasPrefix(line, "rsgen build: ") {
			errLines = append(errLines, line)
		}
	}
	// A failed write to stderr itself (fd 2) may eat the message: the exit
	// code is then all rsgen can say.
	stderrFailed := strings.Contains(injected, "write(2<")
	switch {
	case len(errLines) == 1:
		msg := errLines[0]
		if !strings.Contains(msg, "input/output error") {
			s.errorf(f, n, injected, "the error does not say input/output error: %s", msg)
		}
		// Every path rsgen touches lies in the site's folder, and is
		// named absolute but for the configuration file, named as given;
		// a call it cannot name (none is known) would at least say the
		// error.
		if !strings.Contains(msg, s.dir) && !strings.HasPrefix(msg, "rsgen build: rsgen.toml: ") {
			s.errorf(f, n, injected, "the error names no path: %s", msg)
		}
	case stderrFailed && len(errLines) == 0:
	default:
		s.errorf(f, n, injected, "want one error line, got:\n%s", stderr)
	}
}

// leftByDeadBuild reports whether p, under the output or the state folder,
// is what a build that died (the Go runtime's failure, like a kill) leaves
// for the next build to remove or take over: a temporary file, or the lock.
func leftByDeadBuild(p string) bool {
	return strings.HasPrefix(path.Base(p), layout.TempPrefix) || p == "lock"
}

// checkLeft checks what a failed build left (temporary files only after
// a clean failure: a dead one leaves them to the next build), then builds
// again without injection.
func (s *eioSite) checkLeft(f *eioFamily, n int, injected string, clean bool) {
	out := s.snapshot(s.out)
	stateNow := s.snapshot(s.state)
	stateSaved := !bytes.Equal(stateNow["state"].data, s.stateBefore["state"].data)
	if stateSaved {
		// The state is committed last: once it is renamed into place, the
		// build is complete, and only what follows can still fail (the
		// folder's fsync, pruning the archive). The output must then be
		// the complete new one.
		f.stats.saved++
		if d := eioDiff(s.after1, out); len(d) > 0 {
			s.errorf(f, n, injected, "the state was saved, but the output is not complete:\n%s", strings.Join(d, "\n"))
		}
	} else {
		// Every output file is as before, or as the build completed
		// writes it: none torn, none in a third version.
		var bad []string
		advanced := false
		for _, p := range eioKeys(s.before, s.after1, out) {
			now, inNow := out[p]
			if fileIs(now, inNow, s.before, p) || !clean && leftByDeadBuild(p) {
				continue
			}
			advanced = true
			if !fileIs(now, inNow, s.after1, p) {
				bad = append(bad, p)
			}
		}
		for _, p := range eioKeys(s.stateBefore, s.closed1, stateNow) {
			now, inNow := stateNow[p]
			// publishing: the record of what a build failing while it
			// renames its staged files into place was publishing (see
			// generator/intent.go), for the next build.
			if p != "state" && p != "publishing" && !fileIs(now, inNow, s.stateBefore, p) && !fileIs(now, inNow, s.closed1, p) &&
				(clean || !leftByDeadBuild(p)) {
				bad = append(bad, ".rsgen/"+p)
			}
		}
		if len(bad) > 0 {
			s.errorf(f, n, injected, "files neither as before the build nor as after it:\n%s", strings.Join(bad, "\n"))
		}
		if advanced {
			f.stats.advanced++
		} else {
			f.stats.intact++
		}
	}
	if problems := s.tempFiles(injected); clean && len(problems) > 0 {
		s.errorf(f, n, injected, "after the failed build:\n%s", strings.Join(problems, "\n"))
	}

	// The next build, later and without injection, publishes the mutation
	// once, as a clean build at that time does.
	code, stdout2, stderr2 := s.run(nil, "build", "--now", eioNow2)
	if code != 0 {
		s.errorf(f, n, injected, "the build after the failed one: exit %d\n%s", code, stderr2)
		return
	}
	// The next build goes on from the state, and publishes what a clean
	// build at its time does; or, when the failed build got as far as
	// writing a Resource List, it rebuilds the state from the output
	// (recover.go, outputNewer) and goes on from the failed build's
	// Change Lists, as a build after the completed one does.
	ref, refName := s.after2, "a clean build at "+eioNow2
	recovered := strings.Contains(stdout2+stderr2, "rebuilt the state")
	if recovered {
		f.stats.recovered++
		ref, refName = s.after12, "a complete build at "+eioNow1+" and a build at "+eioNow2
	} else if d := eioDiff(s.closed2, s.archive()); len(d) > 0 && !stateSaved {
		s.errorf(f, n, injected, "the build after the failed one leaves another state archive than %s:\n%s", refName, strings.Join(d, "\n"))
	}
	if stateSaved {
		ref, refName = s.after12, "a complete build at "+eioNow1+" and a build at "+eioNow2
	}
	// Documents a failed build wrote under names of its own time (the
	// Change List it opened, its Change Dump packages), and the copy of a
	// resource it deleted, are removed by the next build (the build's
	// staged writes and its record of them, generator/intent.go): any
	// file left over is an error.
	var other []string
	for _, d := range eioDiff(ref, s.snapshot(s.out)) {
		switch {
		// A recovery rebuilds what the output does not say from the
		// files: dump packages the failed build wrote but no document
		// listed get this build's time. checkPublished checks the
		// documents against the resources.
		case recovered && strings.HasPrefix(strings.TrimPrefix(strings.TrimPrefix(d, "only before: "), "bytes differ: "), "resourcesync/"):
		default:
			other = append(other, d)
		}
	}
	if len(other) > 0 {
		s.errorf(f, n, injected, "the build after the failed one publishes another output than %s:\n%s", refName, strings.Join(other, "\n"))
	}
	if problems := append(s.tempFiles(""), s.checkPublished()...); len(problems) > 0 {
		s.errorf(f, n, injected, "after the build that followed the failed one:\n%s", strings.Join(problems, "\n"))
	}
}

// fileIs reports whether a file (now, present if inNow) is as tree has it.
func fileIs(now eioFile, inNow bool, tree eioTree, p string) bool {
	want, ok := tree[p]
	if !ok || !inNow {
		return ok == inNow
	}
	return bytes.Equal(now.data, want.data) && now.mode.Perm() == want.mode.Perm()
}

func eioKeys(trees ...eioTree) []string {
	var keys []string
	for _, t := range trees {
		for p := range t {
			keys = append(keys, p)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// tempFiles lists the temporary files left in the output and state. The
// lock file stays when its own removal failed (injected says so): the
// next build takes it as a killed build's, which costs it a sweep for
// temporary files and a warning, nothing else.
func (s *eioSite) tempFiles(injected string) []string {
	lockKept := strings.Contains(injected, "unlinkat(AT_FDCWD<"+s.dir+">, \""+filepath.Join(s.state, "lock")+"\"")
	var found []string
	for _, root := range []string{s.out, s.state} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && (strings.HasPrefix(d.Name(), ".rsgen-tmp-") || strings.HasPrefix(d.Name(), ".state-") || d.Name() == "lock" && !lockKept) {
				found = append(found, "temporary file left: "+p)
			}
			return nil
		})
	}
	return found
}

// checkPublished runs rsgen check on the output and counts the events of
// the Change Lists the index lists: each change of the mutation once,
// nothing else (the first build's Change List opens empty).
func (s *eioSite) checkPublished() []string {
	var problems []string
	if code, stdout, stderr := s.run(nil, "check", "--strict", "--verify-content", s.out); code != 0 {
		problems = append(problems, fmt.Sprintf("rsgen check: exit %d\n%s%s", code, stdout, stderr))
	}
	counts, err := eioEvents(s.out)
	if err != nil {
		return append(problems, err.Error())
	}
	for p, change := range s.want {
		if c := counts[p+" "+change]; c != 1 {
			problems = append(problems, fmt.Sprintf("%s %s published %d times", change, p, c))
		}
	}
	for k, c := range counts {
		i := strings.LastIndexByte(k, ' ')
		p, change := k[:i], k[i+1:]
		if s.want[p] != change {
			problems = append(problems, fmt.Sprintf("%s published %d times, not a change of the mutation", k, c))
		}
	}
	slices.Sort(problems)
	return problems
}

// eioEvents counts the "path change" events in the Change Lists the
// Change List Index of the default set lists.
func eioEvents(out string) (map[string]int, error) {
	events, err := publishedEvents(out)
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, e := range events {
		counts[e.Path+" "+e.MD().Change]++
	}
	return counts, nil
}

func eioMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// eioSmallSite writes a one-file site with its configuration, and returns
// its folder.
func eioSmallSite(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	eioMust(t, os.MkdirAll(filepath.Join(dir, "site"), 0o755))
	eioMust(t, os.WriteFile(filepath.Join(dir, "site", "a.txt"), []byte("a\n"), 0o644))
	eioMust(t, os.WriteFile(filepath.Join(dir, "rsgen.toml"), []byte("base_url = \"https://data.example.org/\"\n"), 0o644))
	return dir
}

// eioRun runs rsgen in dir under strace, failing the first call of calls
// that touches path (strace -P) with EIO, and returns the exit code and
// stderr. It fails the test if nothing was injected.
func eioRun(t *testing.T, dir, calls, path string, args ...string) (int, string) {
	t.Helper()
	traceFile := filepath.Join(t.TempDir(), "strace.out")
	s := &eioSite{t: t, bin: rsgenBinary(t), dir: dir}
	code, _, stderr := s.run(straceCommand(traceFile, calls, 1, "-P", path), args...)
	if injected := injectedLines(t, traceFile); len(injected) == 0 {
		t.Fatalf("nothing injected into %s of %s (exit %d):\n%s", calls, path, code, stderr)
	}
	return code, stderr
}

// TestEIOLockFile: a build that cannot write its PID into the lock file it
// created fails, and removes that file: left there, it would tell the
// next build that a build was killed.
func TestEIOLockFile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs rsgen under strace; skipped with -short")
	}
	requireStrace(t)
	for _, calls := range []string{"pwrite64", "ftruncate"} {
		dir := eioSmallSite(t)
		lock := filepath.Join(dir, ".rsgen", "lock")
		code, stderr := eioRun(t, dir, calls, lock, "build", "--now", eioNow0)
		if code != 1 || !strings.Contains(stderr, "rsgen build: lock "+lock) || !strings.Contains(stderr, "input/output error") {
			t.Errorf("%s of the lock file failed: exit %d, %q; want exit 1 and an error naming the lock", calls, code, stderr)
		}
		if _, err := os.Stat(lock); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s of the lock file failed, and the lock file is left: %v", calls, err)
		}
	}
}

// TestEIOConfigFile: a configuration file that cannot be read for an I/O
// error fails the build (exit 1), not as a configuration error (exit 2,
// kept for a missing file).
func TestEIOConfigFile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs rsgen under strace; skipped with -short")
	}
	requireStrace(t)
	dir := eioSmallSite(t)
	cfg := filepath.Join(dir, "rsgen.toml")
	for _, calls := range []string{"openat", "read"} {
		code, stderr := eioRun(t, dir, calls, cfg, "build", "--config", cfg, "--now", eioNow0)
		if code != 1 || stderr != "rsgen build: "+cfg+": cannot read the configuration file: input/output error\n" {
			t.Errorf("%s of the configuration file failed: exit %d, %q; want exit 1 and the error", calls, code, stderr)
		}
	}
	// rsgen.toml found in the working folder, whose stat fails: it is
	// still the configuration (here it reads fine), not silently none.
	code, stderr := eioRun(t, dir, "newfstatat,stat,statx", "rsgen.toml", "build", "--now", eioNow0)
	if code != 0 {
		t.Errorf("stat of rsgen.toml failed: exit %d, %q; want the build to read it and succeed", code, stderr)
	}
	s := &eioSite{t: t, bin: rsgenBinary(t), dir: dir}
	if code, _, stderr := s.run(nil, "build", "--config", "nosuch.toml"); code != 2 || !strings.Contains(stderr, "nosuch.toml: cannot read the configuration file") {
		t.Errorf("a missing configuration file: exit %d, %q; want exit 2", code, stderr)
	}
}

// TestInjectedLinesJoinResumedCalls: a failed call that strace's trace
// shows in two parts, interrupted by another thread's, is reported with
// its start, whose descriptor tells the Go runtime's eventfd from rsgen's
// files.
func TestInjectedLinesJoinResumedCalls(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "strace.out")
	eioMust(t, os.WriteFile(trace, []byte(`5589  write(4<anon_inode:[eventfd]>, "\1\0\0\0\0\0\0\0", 8 <unfinished ...>
5590  write(7</site/out/a.txt>, "a", 1) = 1
5589  <... write resumed>)              = -1 EIO (Input/output error) (INJECTED)
5590  write(7</site/out/b.txt>, "b", 1) = -1 EIO (Input/output error) (INJECTED)
`), 0o644))
	got := injectedLines(t, trace)
	if len(got) != 2 || !strings.Contains(got[0], "<anon_inode:[eventfd]>") || !strings.Contains(got[0], "(INJECTED)") || !strings.Contains(got[1], "b.txt") {
		t.Errorf("injected lines: %q", got)
	}
}
