package checker

import (
	"archive/zip"
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
)

// buildSite unpacks the txtar archive at path into a new directory and
// returns it. Files named "P.zip!/NAME" become members NAME of the ZIP
// package P.zip, in archive order. Once the packages are built,
// "{{len:F}}", "{{md5:F}}" and "{{sha-256:F}}" in the other files are
// replaced by the length and digests of file F.
func buildSite(t testing.TB, path string) string {
	t.Helper()
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	zips := map[string]*zipBuild{}
	var order []string
	for _, f := range ar.Files {
		if pkg, member, ok := strings.Cut(f.Name, "!/"); ok {
			if zips[pkg] == nil {
				zips[pkg] = &zipBuild{}
				order = append(order, pkg)
			}
			zips[pkg].add(t, member, f.Data)
		}
	}
	for _, pkg := range order {
		writeFile(t, dir, pkg, zips[pkg].close(t))
	}
	for _, f := range ar.Files {
		if !strings.Contains(f.Name, "!/") {
			writeFile(t, dir, f.Name, f.Data)
		}
	}
	for _, f := range ar.Files {
		if !strings.Contains(f.Name, "!/") && placeholder.Match(f.Data) {
			writeFile(t, dir, f.Name, fillPlaceholders(t, dir, f.Data))
		}
	}
	return dir
}

type zipBuild struct {
	buf bytes.Buffer
	w   *zip.Writer
}

func (z *zipBuild) add(t testing.TB, name string, data []byte) {
	if z.w == nil {
		z.w = zip.NewWriter(&z.buf)
	}
	w, err := z.w.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store, Modified: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
}

func (z *zipBuild) close(t testing.TB) []byte {
	if err := z.w.Close(); err != nil {
		t.Fatal(err)
	}
	return z.buf.Bytes()
}

var placeholder = regexp.MustCompile(`\{\{(len|md5|sha-256):([^}]+)\}\}`)

func fillPlaceholders(t testing.TB, dir string, data []byte) []byte {
	return placeholder.ReplaceAllFunc(data, func(m []byte) []byte {
		sub := placeholder.FindSubmatch(m)
		b, err := os.ReadFile(filepath.Join(dir, string(sub[2])))
		if err != nil {
			t.Fatalf("placeholder %s: %v", m, err)
		}
		switch string(sub[1]) {
		case "len":
			return []byte(strconv.Itoa(len(b)))
		case "md5":
			s := md5.Sum(b)
			return []byte(hex.EncodeToString(s[:]))
		}
		s := sha256.Sum256(b)
		return []byte(hex.EncodeToString(s[:]))
	})
}

func writeFile(t testing.TB, dir, name string, data []byte) {
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestValidSite(t *testing.T) {
	dir := buildSite(t, "testdata/sites/valid.txtar")
	rep, err := CheckDir(t.Context(), dir, Options{VerifyContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		t.Errorf("unexpected finding: %s", f)
	}
	if rep.Documents != 9 || rep.Packages != 2 {
		t.Errorf("read %d documents and %d packages, want 9 and 2 (a manifest copy is a document)", rep.Documents, rep.Packages)
	}
}
