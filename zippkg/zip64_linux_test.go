package zippkg

import (
	"archive/zip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestZip64 packages a sparse file of 4 GiB + 1 byte twice, stored and
// deflated, and a small file after them, which so starts past 4 GiB, then
// checks the package with archive/zip and unzip -t.
func TestZip64(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the 4 GiB Zip64 test")
	}
	const size = 4<<30 + 1
	dir := t.TempDir()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || st.Bavail*uint64(st.Bsize) < 2*size {
		t.Skipf("skipping the Zip64 test: it needs %d GiB free in %s (statfs: %v)", 2*size>>30, dir, err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, size); err != nil {
		t.Fatal(err)
	}
	m := &Manifest{Kind: ResourceDump, Up: testUp, At: testAt, Entries: []Entry{
		{Loc: testBase + "/big.mp4", Path: "/big.mp4", Length: size, Type: "video/mp4"},
		{Loc: testBase + "/big.txt", Path: "/big.txt", Length: size, Type: "text/plain"},
		{Loc: testBase + "/small.txt", Path: "/small.txt", Length: 5, Hash: hashOf([]byte("small")), Type: "text/plain"},
	}}
	pkgFile := filepath.Join(dir, "package.zip")
	writeZip64Package(t, pkgFile, m, big)

	zr, err := zip.OpenReader(pkgFile)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if off, err := zr.File[3].DataOffset(); err != nil || off < 1<<32 || zr.File[1].ReaderVersion != 45 {
		t.Errorf("no Zip64: small.txt at %d (%v), big.mp4 needs version %d", off, err, zr.File[1].ReaderVersion)
	}
	for i, f := range zr.File[1:] {
		if int64(f.UncompressedSize64) != m.Entries[i].Length {
			t.Errorf("%s: size %d", f.Name, f.UncompressedSize64)
		}
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, r) // checks the CRC-32 at the end
		if err != nil || n != m.Entries[i].Length {
			t.Errorf("%s: read %d bytes: %v", f.Name, n, err)
		}
		r.Close()
	}
	unzipTest(t, pkgFile)
}

func writeZip64Package(t *testing.T, pkgFile string, m *Manifest, big string) {
	t.Helper()
	out, err := os.Create(pkgFile)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	err = Write(context.Background(), out, m, nil, func(e *Entry) (io.ReadCloser, error) {
		if e.Path == "/small.txt" {
			return io.NopCloser(strings.NewReader("small")), nil
		}
		return os.Open(big)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
