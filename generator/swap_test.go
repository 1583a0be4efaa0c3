package generator_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rsgen/rsgen/generator"
)

// TestSymlinkSwapNeverPublishesOutside: a file or a folder swapped for a
// symbolic link to something outside the source while a build runs (here:
// the moment the scan finds it, through the Notify hook) is never read,
// linked or published: the build fails naming it, or leaves it out, and
// the outside bytes appear nowhere in the output, nor their hash in a
// document.
func TestSymlinkSwapNeverPublishesOutside(t *testing.T) {
	secret := "secret outside the source\n"
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "victim.txt"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	swapFile := func(s *site, rel string) {
		p := s.src(rel)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(outside, "victim.txt"), p); err != nil {
			t.Fatal(err)
		}
	}
	swapDir := func(s *site, rel string) {
		p := s.src(rel)
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name     string
		when     string // the path whose discovery triggers the swap
		swap     func(s *site)
		rebuild  bool // swap in a second build, after wiping the output: the file is trusted, not read
		followed bool // follow_symlinks on
	}{
		{name: "new file", when: "victim.txt", swap: func(s *site) { swapFile(s, "victim.txt") }},
		{name: "folder", when: "dir/victim.txt", swap: func(s *site) { swapDir(s, "dir") }},
		{name: "trusted file, fresh output", when: "victim.txt", swap: func(s *site) { swapFile(s, "victim.txt") }, rebuild: true},
		{name: "folder, following links", when: "dir/victim.txt", swap: func(s *site) { swapDir(s, "dir") }, followed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, testBaseURL, nil)
			s.Cfg.FollowSymlinks = tc.followed
			s.write("victim.txt", "inside\n")
			s.write("dir/victim.txt", "inside too\n")
			s.write("z.txt", "z")
			if tc.rebuild {
				s.build(t0)
				if err := os.RemoveAll(s.Out); err != nil {
					t.Fatal(err)
				}
			}
			swapped := false
			_, err := generator.Build(context.Background(), s.Cfg, generator.Options{Now: t0.Add(1e9), Notify: func(n generator.Note) {
				if n.Kind == generator.NoteFound && n.Path == tc.when && !swapped {
					swapped = true
					tc.swap(s)
				}
			}})
			if !swapped {
				t.Fatal("the scan never found the path to swap")
			}
			if err != nil && !strings.Contains(err.Error(), "victim.txt") {
				t.Errorf("the build failed without naming the swapped file: %v", err)
			}
			sum := sha256Hex([]byte(secret))
			for rel, data := range readTree(t, s.Out) {
				if bytes.Equal(data, []byte(secret)) {
					t.Errorf("the output publishes the outside file at %s", rel)
				}
				if bytes.Contains(data, []byte(sum)) {
					t.Errorf("%s advertises the outside file's hash", rel)
				}
			}
		})
	}
}
