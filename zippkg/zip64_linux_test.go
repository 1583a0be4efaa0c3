package zippkg

import (
	"archive/zip"
	"bytes"
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
// checks the package with archive/zip and unzip -t. It writes 8 GiB to disk
// and deflates 4 GiB: RSGEN_STRESS=1 runs it; TestZip64InMemory checks the
// same records by default.
func TestZip64(t *testing.T) {
	if os.Getenv("RSGEN_STRESS") != "1" {
		t.Skip("8 GiB of disk and a minute: RSGEN_STRESS=1 runs it (TestZip64InMemory runs by default)")
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

// TestZip64InMemory packages a stored bitstream of 4 GiB + 1 zero bytes and
// a small file after it, which so starts past 4 GiB, into a sparse buffer
// that keeps only the chunks that are not zeros, and reads it back with
// archive/zip: the Zip64 records, the offsets past 4 GiB and every CRC-32.
func TestZip64InMemory(t *testing.T) {
	const size = 4<<30 + 1
	m := &Manifest{Kind: ResourceDump, Up: testUp, At: testAt, Entries: []Entry{
		{Loc: testBase + "/big.mp4", Path: "/big.mp4", Length: size, Type: "video/mp4"},
		{Loc: testBase + "/small.txt", Path: "/small.txt", Length: 5, Hash: hashOf([]byte("small")), Type: "text/plain"},
	}}
	var buf sparseBuffer
	err := Write(context.Background(), &buf, m, nil, func(e *Entry) (io.ReadCloser, error) {
		if e.Path == "/small.txt" {
			return io.NopCloser(strings.NewReader("small")), nil
		}
		return io.NopCloser(io.LimitReader(zeros{}, size)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(&buf, buf.size)
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != 3 || zr.File[1].ReaderVersion != 45 || zr.File[1].UncompressedSize64 != size {
		t.Fatalf("no Zip64 entry for big.mp4: %d files, version %d", len(zr.File), zr.File[1].ReaderVersion)
	}
	if off, err := zr.File[2].DataOffset(); err != nil || off < 1<<32 {
		t.Errorf("small.txt at %d (%v), want past 4 GiB", off, err)
	}
	for i, f := range zr.File[1:] {
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
}

// sparseBuffer is a file in memory that keeps only its chunks that hold a
// byte other than zero, so that a package of gigabytes of zeros fits.
type sparseBuffer struct {
	size   int64
	chunks map[int64][]byte // by chunk index
}

const sparseChunk = 1 << 16

var zeroChunk = make([]byte, sparseChunk)

func (b *sparseBuffer) Write(p []byte) (int, error) {
	if b.chunks == nil {
		b.chunks = map[int64][]byte{}
	}
	for n := 0; n < len(p); {
		i, off := b.size/sparseChunk, int(b.size%sparseChunk)
		k := min(len(p)-n, sparseChunk-off)
		part := p[n : n+k]
		if c, ok := b.chunks[i]; ok {
			copy(c[off:], part)
		} else if !bytes.Equal(part, zeroChunk[:len(part)]) { // memequal: ten times a byte loop

			c := make([]byte, sparseChunk)
			copy(c[off:], part)
			b.chunks[i] = c
		}
		n += k
		b.size += int64(k)
	}
	return len(p), nil
}

func (b *sparseBuffer) ReadAt(p []byte, at int64) (int, error) {
	if at >= b.size {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && at < b.size {
		i, off := at/sparseChunk, int(at%sparseChunk)
		k := int(min(int64(len(p)-n), int64(sparseChunk-off), b.size-at))
		if c, ok := b.chunks[i]; ok {
			copy(p[n:n+k], c[off:])
		} else {
			clear(p[n : n+k])
		}
		n += k
		at += int64(k)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
