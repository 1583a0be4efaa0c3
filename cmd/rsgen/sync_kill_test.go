package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/generator"
	"github.com/rsgen/rsgen/serve"
)

// TestSyncKill9 runs the real rsgen binary's sync against a Source that
// rsgen serve serves, and kills it with SIGKILL at random points of its
// progress (once it has journaled a random number of files, 0 for at
// once): in baselines, in incremental syncs after the Source changed, and
// while the Resource Dump's packages seed the folder. After every kill the next sync must finish,
// leave DIR equal to the source tree with nothing else in it, pass
// --audit, and never have fetched again a resource it had verified: the
// resources fetched over all runs are at most the resources to fetch plus
// those in flight at each kill.
func TestSyncKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the rsgen binary")
	}
	rounds := 2
	if os.Getenv("RSGEN_STRESS") == "1" {
		rounds = 20
	}
	for _, dumps := range []string{"never", "always"} {
		t.Run("dumps-"+dumps, func(t *testing.T) { killedSyncs(t, dumps, rounds) })
	}
}

func killedSyncs(t *testing.T, dumps string, rounds int) {
	bin := rsgenBinary(t)
	rng := rand.New(rand.NewPCG(uint64(len(dumps)), 42))
	ln, cfg := loopbackSite(t, func(c *config.Config) {
		c.Dumps.ResourceDump = true
		c.Dumps.PackageSize = 256 << 10
	})
	base, root := cfg.BaseURL, cfg.Dir
	write := func(p string) {
		full := filepath.Join(cfg.Source, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		n := 100 + rng.IntN(4000)
		if rng.IntN(40) == 0 {
			n = 1<<20 + rng.IntN(1<<20)
		}
		if err := os.WriteFile(full, bytes.Repeat([]byte{byte('a' + rng.IntN(26))}, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for i := range 150 {
		p := fmt.Sprintf("d%d/f %03d#.txt", i%7, i)
		names = append(names, p)
		write(p)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	build := func() {
		now = now.Add(time.Minute)
		if _, err := generator.Build(context.Background(), &cfg, generator.Options{Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	build()
	h, err := serve.New(serve.Options{Dir: cfg.Out, BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	var resourceGets atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/resourcesync/") && !strings.HasPrefix(r.URL.Path, "/.well-known/") {
			resourceGets.Add(1)
		}
		h.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	defer srv.Close()

	dir := filepath.Join(root, "mirror")
	journal := filepath.Join(root, ".rsgen-sync", "mirror", "journal")
	args := []string{"sync", base, dir, "--jobs", "4", "--dumps", dumps, "--quiet"}

	// Each round changes the Source (but the first, a baseline), then
	// kills syncs at random moments, each resuming the one before, until
	// one finishes before its kill.
	landed := 0
	for round := range rounds {
		fetch := int64(len(names))
		if round > 0 {
			fetch = 0
			for range 20 {
				write(names[rng.IntN(len(names))])
				fetch++
			}
			p := fmt.Sprintf("new/n%d.txt", round)
			names = append(names, p)
			write(p)
			i := rng.IntN(len(names) - 1)
			os.Remove(filepath.Join(cfg.Source, filepath.FromSlash(names[i])))
			names = append(names[:i], names[i+1:]...)
			build()
			fetch++
		}
		resourceGets.Store(0)
		killed := 0
		for {
			old, _ := os.Stat(journal)
			cmd := exec.Command(bin, args...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			var err error
			go func() { err = cmd.Wait(); close(done) }()
			// Kill once the sync has journaled a random number of the files
			// it is to fetch (0: at once), fewer after each kill, as fewer
			// are left.
			waitJournal(journal, old, int(rng.Int64N(max(1, fetch>>killed))), done)
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				killed++
				continue
			}
			if err != nil {
				t.Fatalf("round %d: the sync after %d kills failed: %v\n%s", round, killed, err, out.String())
			}
			break
		}
		checkMirror(t, bin, base, dir, cfg.Source)
		// Fetched again: at most what was in flight at each kill.
		if got, most := resourceGets.Load(), fetch+int64(killed)*4; dumps == "never" && got > most {
			t.Errorf("round %d: %d resources fetched over %d kills, more than the %d to fetch and 4 in flight at each kill", round, got, killed, fetch)
		}
		landed += killed
	}
	if landed == 0 {
		t.Errorf("no kill landed in %d rounds: the test tests nothing", rounds)
	}
	t.Logf("%d kills landed in %d rounds", landed, rounds)
}

// waitJournal waits until the sync's journal holds n lines, or the sync
// ends (done closes). A killed sync leaves its journal, which the next
// replaces with one of its own: only a journal other than old counts.
func waitJournal(journal string, old os.FileInfo, n int, done <-chan struct{}) {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		if info, err := os.Stat(journal); err == nil && (old == nil || !os.SameFile(info, old)) {
			if data, _ := os.ReadFile(journal); bytes.Count(data, []byte{'\n'}) >= n {
				return
			}
		}
		select {
		case <-done:
			return
		case <-time.After(time.Millisecond): // polling a bounded wait for the sync's progress
		}
	}
}

// checkMirror checks that dir holds exactly the files of src, byte for
// byte, and passes rsgen sync --audit.
func checkMirror(t *testing.T, bin, base, dir, src string) {
	t.Helper()
	want, got := filesUnder(t, src), filesUnder(t, dir)
	for p, data := range want {
		if got[p] != data {
			t.Fatalf("%s: %d bytes in the mirror, %d in the source", p, len(got[p]), len(data))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Fatalf("%s: in the mirror, not in the source", p)
		}
	}
	if out, err := exec.Command(bin, "sync", base, dir, "--audit").CombinedOutput(); err != nil {
		t.Fatalf("audit: %v\n%s", err, out)
	}
}

func filesUnder(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
