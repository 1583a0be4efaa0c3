package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rsgen/rsgen/internal/sitemaptest"
	"github.com/rsgen/rsgen/internal/sysfile"
)

// The crash tests run the real rsgen binary and kill it with SIGKILL at
// random moments of its builds. After every kill the next build must
// complete, leave no temporary file in the output, write documents that
// parse and pass `rsgen check --verify-content`, and the Change Lists,
// replayed over the first build's Resource List, must give exactly the
// source tree: every change since the last complete build published once,
// none lost, none twice.

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// rsgenBinary builds the rsgen command once per test binary.
func rsgenBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "rsgen-bin-")
		if err != nil {
			binErr = err
			return
		}
		os.Chmod(dir, 0o755)
		binPath = filepath.Join(dir, "rsgen")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// crashSite is a source tree, its output and state, and the model the
// published Change Lists are checked against.
type crashSite struct {
	t          *testing.T
	bin        string
	dir        string
	src, out   string
	state      string
	rng        *rand.Rand
	minute     int
	names      []string // source files, by slash path
	baseline   map[string]string
	stateless  bool // remove the state before every build, as a CI runner without a cache
	corrupt    bool // spoil the state after some kills
	seq        int
	stats      *crashStats
	lastDur    time.Duration
	maxDelay   time.Duration
	checkEvery int
	builds     int
	// archives: dumps, every archive and kept versions are on; what they
	// published must survive every kill and state loss (see checkKept).
	archives bool
	kept     map[string]bool // archived documents and mementos seen listed
}

type crashStats struct {
	kills, landed, corruptions, recoveries, builds int
}

// archiveConfig turns on everything that publishes what no build can make
// again: Change Dumps and their archive, archived Resource Lists and
// Resource Dumps, and kept versions.
const archiveConfig = `
[dumps]
resource_dump = true
change_dump = true
package_size = "64kB"
[archives]
change_lists = true
change_dumps = true
resource_lists = true
resource_dumps = true
snapshot_every = "3m"
[[set]]
name = "default"
keep_versions = true
`

func newCrashSite(t *testing.T, bin string, seed uint64, outDir string, rotate string, archives bool) *crashSite {
	dir := t.TempDir()
	c := &crashSite{t: t, bin: bin, dir: dir, src: filepath.Join(dir, "site"), out: filepath.Join(dir, "public"),
		state: filepath.Join(dir, ".rsgen"), rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), checkEvery: 5}
	if outDir != "" {
		c.out = outDir
	}
	cfg := fmt.Sprintf("base_url = %q\nout = %q\n[changelist]\nrotate = %q\n", testBase, c.out, rotate)
	if archives {
		cfg += archiveConfig
		c.archives, c.kept = true, map[string]bool{}
	}
	if err := os.WriteFile(filepath.Join(dir, "rsgen.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 400 {
		c.create(fmt.Sprintf("d%d/f%03d.txt", i%9, i))
	}
	c.create("odd names/a b#c%d?e&f+g'h\"i.txt")
	c.create("odd names/ümlaut.txt")
	c.create("big/one.bin")
	return c
}

func (c *crashSite) content(p string) []byte {
	n := 20 + c.rng.IntN(400)
	if strings.HasPrefix(p, "big/") {
		n = 2<<20 + c.rng.IntN(1<<20)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + c.rng.IntN(26))
	}
	return b
}

func (c *crashSite) create(p string) {
	full := filepath.Join(c.src, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(full, c.content(p), 0o644); err != nil {
		c.t.Fatal(err)
	}
	if !slices.Contains(c.names, p) {
		c.names = append(c.names, p)
	}
}

// mutate makes a few random changes to the source.
func (c *crashSite) mutate() {
	for range 1 + c.rng.IntN(6) {
		switch op := c.rng.IntN(10); {
		case op < 5 && len(c.names) > 0: // update
			c.create(c.names[c.rng.IntN(len(c.names))])
		case op < 8: // create
			c.seq++
			c.create(fmt.Sprintf("new%d/n%05d.txt", c.seq%4, c.seq))
		case len(c.names) > 0: // delete
			i := c.rng.IntN(len(c.names))
			if err := os.Remove(filepath.Join(c.src, filepath.FromSlash(c.names[i]))); err != nil {
				c.t.Fatal(err)
			}
			c.names = slices.Delete(c.names, i, i+1)
		}
	}
}

func (c *crashSite) command(extra ...string) *exec.Cmd {
	c.minute++
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(c.minute) * time.Minute)
	args := append([]string{"build", "--now", now.Format(time.RFC3339)}, extra...)
	cmd := exec.Command(c.bin, args...)
	cmd.Dir = c.dir
	return cmd
}

func (c *crashSite) dropState() {
	if c.stateless {
		if err := os.RemoveAll(c.state); err != nil {
			c.t.Fatal(err)
		}
	}
}

// killedBuild starts a build and kills it after a random delay; it
// reports whether the kill landed before the build ended.
func (c *crashSite) killedBuild() bool {
	c.dropState()
	cmd := c.command()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	delay := time.Duration(c.rng.Int64N(int64(c.maxDelay)))
	time.Sleep(delay)
	c.stats.kills++
	landed := cmd.Process.Signal(syscall.SIGKILL) == nil
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		c.stats.landed++
		return true
	}
	if err != nil {
		c.t.Fatalf("build (not killed) failed: %v\n%s", err, stderr.String())
	}
	_ = landed
	return false
}

// completeBuild runs a build that must succeed, then checks the output.
func (c *crashSite) completeBuild() {
	c.t.Helper()
	c.dropState()
	cmd := c.command()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		c.t.Fatalf("build after a kill failed: %v\n%s", err, stderr.String())
	}
	c.lastDur = time.Since(start)
	c.stats.builds++
	c.builds++
	if strings.Contains(stderr.String(), "rebuilt") {
		c.stats.recoveries++
	}
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if line != "" && !strings.HasPrefix(line, "rsgen: ") {
			c.t.Errorf("unexpected message: %s", line)
		}
	}
	c.checkOutput()
}

// checkOutput checks the published tree after a complete build.
func (c *crashSite) checkOutput() {
	c.t.Helper()
	for _, dir := range []string{c.out, c.state} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && (strings.HasPrefix(d.Name(), ".rsgen-tmp-") || strings.HasSuffix(d.Name(), ".tmp")) {
				c.t.Errorf("temporary file left after a complete build: %s", p)
			}
			return nil
		})
	}
	if c.builds%c.checkEvery == 0 {
		cmd := exec.Command(c.bin, "check", "--verify-content", c.out)
		if out, err := cmd.CombinedOutput(); err != nil {
			c.t.Fatalf("rsgen check after a build: %v\n%s", err, out)
		}
	}
	c.checkEvents()
	if c.archives {
		c.checkKept()
	}
}

// checkKept checks that the archives only ever grow and every version
// kept stays listed in its TimeMap, whatever was killed or lost: with
// keep = "forever", an archived document or a memento that was published
// once is published for good.
func (c *crashSite) checkKept() {
	c.t.Helper()
	listed := map[string]bool{}
	for _, archive := range []string{"resourcelist", "resourcedump", "changelist", "changedump"} {
		rel := "resourcesync/default/" + archive + "-archive.xml"
		if _, err := os.Stat(filepath.Join(c.out, rel)); errors.Is(err, fs.ErrNotExist) {
			continue // it would list nothing, so it is not published: what was kept is checked below
		} else if err != nil {
			c.t.Fatal(err)
		}
		for _, e := range c.readDoc(c.out, rel).Entries() {
			listed[c.rel(e.Loc)] = true
		}
	}
	maps, _ := filepath.Glob(filepath.Join(c.out, "resourcesync", "timemaps", "*", "*.timemap"))
	for _, m := range maps {
		data, err := os.ReadFile(m)
		if err != nil {
			c.t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if i := strings.Index(line, testBase+"resourcesync/mementos/"); i >= 0 {
				listed[c.rel(line[i:strings.IndexByte(line[i:], '>')+i])] = true
			}
		}
	}
	for p := range c.kept {
		if !listed[p] {
			c.t.Fatalf("%s was published, and is no longer listed after a kill or a lost state", p)
		}
		if _, err := os.Stat(filepath.Join(c.out, filepath.FromSlash(p))); err != nil {
			c.t.Fatalf("%s is listed but gone: %v", p, err)
		}
	}
	for p := range listed {
		c.kept[p] = true
	}
}

// checkEvents replays the published Change Lists over the baseline and
// compares the result with the Resource List and the source tree.
func (c *crashSite) checkEvents() {
	c.t.Helper()
	rl := c.resourceList()
	if c.baseline == nil {
		c.baseline = rl
	}
	model := map[string]string{}
	for p, h := range c.baseline {
		model[p] = h
	}
	events, err := publishedEvents(c.out)
	if err != nil {
		c.t.Fatal(err)
	}
	lastTime := ""
	for _, e := range events {
		p, h := e.Path, e.MD().Hash
		if e.MD().Datetime < lastTime {
			c.t.Fatalf("%s: %s %s at %s, after an event at %s", e.List, e.MD().Change, p, e.MD().Datetime, lastTime)
		}
		lastTime = e.MD().Datetime
		old, present := model[p]
		switch e.MD().Change {
		case "created":
			if present {
				c.t.Fatalf("%s: created %s at %s, which exists already: published twice?", e.List, p, e.MD().Datetime)
			}
			model[p] = h
		case "updated":
			if !present || old == h {
				c.t.Fatalf("%s: updated %s at %s (present %v, same hash %v): published twice?", e.List, p, e.MD().Datetime, present, old == h)
			}
			model[p] = h
		case "deleted":
			if !present {
				c.t.Fatalf("%s: deleted %s at %s, which does not exist: published twice?", e.List, p, e.MD().Datetime)
			}
			delete(model, p)
		}
	}
	src := c.sourceHashes()
	for p, h := range src {
		if rl[p] != h {
			c.t.Fatalf("Resource List has %s as %q, source as %q", p, rl[p], h)
		}
		if model[p] != h {
			c.t.Fatalf("replaying the Change Lists gives %s as %q, source has %q: a change was lost", p, model[p], h)
		}
	}
	for p := range model {
		if _, ok := src[p]; !ok {
			c.t.Fatalf("replaying the Change Lists gives %s, which the source no longer has: a deletion was lost", p)
		}
	}
	if len(rl) != len(src) {
		c.t.Fatalf("Resource List has %d entries, source %d files", len(rl), len(src))
	}
}

func (c *crashSite) sourceHashes() map[string]string {
	m := map[string]string{}
	for _, p := range c.names {
		data, err := os.ReadFile(filepath.Join(c.src, filepath.FromSlash(p)))
		if err != nil {
			c.t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		m[p] = "sha-256:" + hex.EncodeToString(sum[:])
	}
	return m
}

func (c *crashSite) resourceList() map[string]string {
	m := map[string]string{}
	rl := c.readDoc(c.out, "resourcesync/default/resourcelist.xml")
	entries := rl.Entries()
	if rl.XMLName.Local == "sitemapindex" {
		entries = nil
		for _, part := range rl.Entries() {
			entries = append(entries, c.readDoc(c.out, c.rel(part.Loc)).Entries()...)
		}
	}
	for _, e := range entries {
		m[c.rel(e.Loc)] = e.MD().Hash
	}
	return m
}

func (c *crashSite) rel(loc string) string {
	p, err := publishedPath(loc)
	if err != nil {
		c.t.Fatal(err)
	}
	return p
}

func (c *crashSite) readDoc(dir, rel string) *sitemaptest.Doc {
	c.t.Helper()
	d, err := readPublished(dir, rel)
	if err != nil {
		c.t.Fatal(err)
	}
	return d
}

// spoil damages the state file in one of several ways.
func (c *crashSite) spoil() {
	p := filepath.Join(c.state, "state")
	data, err := os.ReadFile(p)
	if err != nil || len(data) < 20 {
		return
	}
	switch c.rng.IntN(4) {
	case 0:
		data = data[:c.rng.IntN(len(data))]
	case 1:
		data[c.rng.IntN(len(data))] ^= byte(1 + c.rng.IntN(255))
	case 2:
		data = nil
	case 3:
		os.Remove(p)
		c.stats.corruptions++
		return
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		c.t.Fatal(err)
	}
	c.stats.corruptions++
}

// TestCrashKill9 kills builds at random moments in several scenarios.
func TestCrashKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("kills hundreds of builds; skipped with -short")
	}
	if !stress() {
		// Among the longest tests of the package: they overlap. The
		// stress form runs alone, its kills bounded by a time budget.
		t.Parallel()
	}
	bin := rsgenBinary(t)
	otherFS := ""
	if a, b := devOf("/dev/shm"), devOf(os.TempDir()); a != 0 && a != b {
		if d, err := os.MkdirTemp("/dev/shm", "rsgen-crash-"); err == nil {
			otherFS = d
			t.Cleanup(func() { os.RemoveAll(d) })
		}
	}
	scenarios := []struct {
		name      string
		rotate    string
		out       string
		stateless bool
		corrupt   bool
		archives  bool
		kills     int
	}{
		{name: "linked", rotate: "5m", kills: 80},
		{name: "copied", rotate: "3m", out: otherFS, kills: 70},
		{name: "stateless", rotate: "4m", stateless: true, kills: 60},
		{name: "corrupt-state", rotate: "6m", corrupt: true, kills: 55},
		{name: "archives", rotate: "4m", archives: true, kills: 50},
		{name: "archives-stateless", rotate: "5m", archives: true, stateless: true, kills: 40},
	}
	// The short form kills each scenario a few times; RSGEN_STRESS=1 runs
	// the full counts.
	share, budget, wantKills := 20, 20*time.Second, 15
	if stress() {
		share, budget, wantKills = 1, 75*time.Second, 200
	}
	total := &crashStats{}
	ran := 0 // scenarios run to their end: -run may pick some
	deadline := time.Now().Add(budget)
	for i, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			if sc.name == "copied" && otherFS == "" {
				t.Skip("no second file system (/dev/shm) to force copies")
			}
			out := ""
			if sc.out != "" {
				out = filepath.Join(sc.out, "public")
			}
			c := newCrashSite(t, bin, uint64(i+1)*7919, out, sc.rotate, sc.archives)
			c.stateless, c.corrupt, c.stats = sc.stateless, sc.corrupt, &crashStats{}
			c.completeBuild()
			c.maxDelay = max(c.lastDur*3/2, 20*time.Millisecond)
			for k := 0; k < sc.kills/share && time.Now().Before(deadline); k++ {
				c.mutate()
				c.killedBuild()
				if c.rng.IntN(3) == 0 { // kill the repair too, now and then
					c.killedBuild()
				}
				if c.corrupt && c.rng.IntN(2) == 0 {
					c.spoil()
				}
				if c.rng.IntN(2) == 0 {
					c.mutate()
				}
				c.completeBuild()
				c.maxDelay = max(c.lastDur*3/2, 20*time.Millisecond)
			}
			c.checkEvery = 1
			c.completeBuild()
			t.Logf("%s: %d kills (%d landed mid-build), %d state corruptions, %d recoveries from the output, %d complete builds checked",
				sc.name, c.stats.kills, c.stats.landed, c.stats.corruptions, c.stats.recoveries, c.stats.builds)
			total.kills += c.stats.kills
			total.landed += c.stats.landed
			total.corruptions += c.stats.corruptions
			total.recoveries += c.stats.recoveries
			total.builds += c.stats.builds
			ran++
		})
	}
	t.Logf("total: %d kills (%d landed mid-build), %d state corruptions, %d recoveries, %d complete builds checked",
		total.kills, total.landed, total.corruptions, total.recoveries, total.builds)
	if !t.Failed() && ran == len(scenarios) && otherFS != "" && total.kills < wantKills && time.Now().Before(deadline) {
		t.Errorf("only %d kills, want at least %d", total.kills, wantKills)
	}
}

func devOf(p string) uint64 {
	info, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return sysfile.Device(info)
}
