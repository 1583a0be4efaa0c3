package zippkg

import (
	"context"
	"crypto/sha256"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The benchmarks package the same tree on disk, 400 files of 256 KiB (100
// MiB, half text, half random "PNG"), into a file in the same temporary
// folder, and report MB/s of source bytes. BenchmarkInfoZip runs
// `zip -0 -r -q` over that tree for comparison:
//
//	go test -run '^$' -bench 'Package|InfoZip' -benchtime 5x ./zippkg/

const benchFiles, benchFileSize = 400, 256 << 10

func benchTree(b *testing.B) (dir string, entries []Entry) {
	b.Helper()
	dir = b.TempDir()
	src := filepath.Join(dir, "src")
	for i := range benchFiles {
		name := filepath.Join(src, "d"+string(rune('a'+i%8)), "f"+strconv.Itoa(i)+".html")
		data := benchText(i)
		if i%2 == 0 {
			name = name[:len(name)-len(".html")] + ".png"
			data = pseudoRandom(byte(i), benchFileSize)
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(name, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir, scanTree(b, src)
}

// benchText returns HTML-like text of words picked pseudo-randomly, which
// deflates about as well as prose (to about a third).
func benchText(i int) []byte {
	words := strings.Fields("the of and to in a is that for it as was with be by on not he " +
		"this are or his from at which but have an they you were her she there been one all " +
		"resource synchronization dump package manifest archive change list capability source")
	out := append(make([]byte, 0, benchFileSize+64), "<p>"...)
	x := uint32(i + 1)
	for len(out) < benchFileSize {
		x = x*1664525 + 1013904223
		out = append(out, words[x>>8%uint32(len(words))]...)
		out = append(out, " \n"[x>>4%8/7])
	}
	return out[:benchFileSize]
}

func BenchmarkPackage(b *testing.B) {
	dir, entries := benchTree(b)
	m := &Manifest{Kind: ResourceDump, Up: testUp, At: testAt, Entries: entries}
	open := func(e *Entry) (io.ReadCloser, error) {
		return os.Open(filepath.Join(dir, "src", filepath.FromSlash(e.Path[len("/resources/"):])))
	}
	vouched := func(e *Entry) (io.ReadCloser, error) {
		f, err := open(e)
		return Vouched(f), err
	}
	store := &Options{Method: func(string) uint16 { return 0 }}
	for _, c := range []struct {
		name   string
		opts   *Options
		hashes string // the digests the manifest publishes
		open   func(e *Entry) (io.ReadCloser, error)
	}{
		{"store/length-only", store, "", open},
		{"store/sha-256", store, "sha-256", open},
		{"store/sha-256/vouched", store, "sha-256", vouched},
		{"store/md5+sha-256", store, "md5 sha-256", open},
		{"default/length-only", nil, "", open},
		{"default/sha-256", nil, "sha-256", open},
		{"default/sha-256/vouched", nil, "sha-256", vouched},
		{"default/md5+sha-256", nil, "md5 sha-256", open},
	} {
		mc := *m
		mc.Entries = withHashes(entries, c.hashes)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(benchFiles * benchFileSize)
			for b.Loop() {
				writeBenchPackage(b, dir, func(w io.Writer) error { return Write(context.Background(), w, &mc, c.opts, c.open) })
			}
		})
	}
}

// withHashes returns entries whose hash attributes keep only the
// algorithms in algs (space separated).
func withHashes(entries []Entry, algs string) []Entry {
	out := append([]Entry(nil), entries...)
	for i := range out {
		var kept []string
		for _, d := range strings.Fields(out[i].Hash) {
			if alg, _, _ := strings.Cut(d, ":"); slices.Contains(strings.Fields(algs), alg) {
				kept = append(kept, d)
			}
		}
		out[i].Hash = strings.Join(kept, " ")
	}
	return out
}

// BenchmarkReadFloor reads the benchmark tree through SHA-256, one worker
// per core, as the bench's read+hash floor does: "store/sha-256" of
// BenchmarkPackage, which reads, verifies and writes the same bytes, is
// measured against it.
func BenchmarkReadFloor(b *testing.B) {
	dir, entries := benchTree(b)
	b.SetBytes(benchFiles * benchFileSize)
	for b.Loop() {
		jobs := make(chan string)
		var wg sync.WaitGroup
		for range runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				buf := make([]byte, 256<<10)
				h := sha256.New()
				for name := range jobs {
					f, err := os.Open(name)
					if err != nil {
						b.Error(err)
						continue
					}
					h.Reset()
					if _, err := io.CopyBuffer(h, f, buf); err != nil {
						b.Error(err)
					}
					f.Close()
				}
			})
		}
		for _, e := range entries {
			jobs <- filepath.Join(dir, "src", filepath.FromSlash(e.Path[len("/resources/"):]))
		}
		close(jobs)
		wg.Wait()
	}
}

// writeBenchPackage writes a package into a new file, as the generator
// does. The last iteration's package is removed outside the timer:
// truncating a file of 100 MB in place cost ext4 here about 70 ms, a
// third of the whole, which a build never pays.
func writeBenchPackage(b *testing.B, dir string, write func(w io.Writer) error) {
	name := filepath.Join(dir, "package.zip")
	b.StopTimer()
	if err := os.Remove(name); err != nil && !os.IsNotExist(err) {
		b.Fatal(err)
	}
	b.StartTimer()
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := write(f); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkInfoZip(b *testing.B) {
	bin, err := exec.LookPath("zip")
	if err != nil {
		b.Skip("Info-ZIP zip not found")
	}
	dir, _ := benchTree(b)
	out := filepath.Join(dir, "infozip.zip")
	for _, level := range []string{"-0", "-1"} {
		b.Run(level, func(b *testing.B) {
			b.SetBytes(benchFiles * benchFileSize)
			for b.Loop() {
				os.Remove(out)
				cmd := exec.Command(bin, level, "-r", "-q", "-X", out, "src")
				cmd.Dir = dir
				if msg, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("zip: %v\n%s", err, msg)
				}
			}
		})
	}
}
