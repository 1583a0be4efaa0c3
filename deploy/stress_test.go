package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestS3Stress100k deploys a tree of 100,000 files to versitygw: a first
// deploy, one with nothing changed (one request), one after every file was
// touched as a CI checkout does (one request, every file read again), and
// one after 1% of the files changed. It logs the requests, bytes and times
// the README reports. RSGEN_STRESS=1 runs it.
func TestS3Stress100k(t *testing.T) {
	if os.Getenv("RSGEN_STRESS") != "1" {
		t.Skip("RSGEN_STRESS=1 runs it")
	}
	const folders, perFolder = 100, 1000
	v := startVersity(t)
	dir := t.TempDir()
	write := func(i, j int, version string) {
		p := filepath.Join(dir, "site", fmt.Sprintf("d%03d", i), fmt.Sprintf("f%04d.txt", j))
		if err := os.WriteFile(p, []byte(fmt.Sprintf("folder %d, file %d, %s\n", i, j, version)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range folders {
		os.MkdirAll(filepath.Join(dir, "site", fmt.Sprintf("d%03d", i)), 0o755)
		for j := range perFolder {
			write(i, j, "first")
		}
	}
	start := time.Now()
	s := newSite(t, dir, "", v.website)
	t.Logf("build: %s", time.Since(start).Round(time.Millisecond))
	store := v.store(t, v.endpoint, "")

	deployed := func(name string) *Summary {
		t.Helper()
		before := store.Requests()
		start := time.Now()
		sum := run(t, s.options(store))
		took := time.Since(start)
		r := store.Requests().sub(before)
		uploads, _, bytes := sum.Uploads()
		t.Logf("%s: %d files, %d uploads (%d bytes of files), %d deletes; %d requests (%d PUT, %d GET, %d HEAD, %d DELETE), %d bytes sent; read %d files; %s (scan %s)",
			name, sum.Files, uploads, bytes, sum.Deletes, r.Total(), r.Put, r.Get, r.Head, r.Delete, r.BytesSent, sum.Hashed,
			took.Round(time.Millisecond), sum.ScanTime.Round(time.Millisecond))
		return sum
	}
	first := deployed("first deploy")
	if uploads, _, _ := first.Uploads(); uploads != first.Files || first.Files < folders*perFolder {
		t.Errorf("first deploy uploaded %d of %d files", uploads, first.Files)
	}
	before := store.Requests()
	deployed("no change")
	if n := store.Requests().sub(before).Total(); n != 1 {
		t.Errorf("a deploy with nothing changed made %d requests", n)
	}
	touched := time.Now().Add(-time.Minute)
	filepath.WalkDir(s.cfg.Out, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			os.Chtimes(p, touched, touched)
		}
		return nil
	})
	before = store.Requests()
	if sum := deployed("every file touched"); sum.Hashed != sum.Files {
		t.Errorf("read %d of %d touched files", sum.Hashed, sum.Files)
	}
	if n := store.Requests().sub(before).Total(); n != 1 {
		t.Errorf("a deploy of touched files made %d requests", n)
	}
	for i := range folders {
		for j := 0; j < perFolder/100; j++ {
			write(i, j, "second")
		}
	}
	s.build(t)
	deployed("1% changed")
}
