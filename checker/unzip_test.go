package checker

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// replacePackage replaces resourcedump-1.zip of a built valid site by data
// and updates the length and hash the Resource Dump gives it.
func replacePackage(t *testing.T, dir string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "resourcedump-1.zip"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "resourcedump.xml")
	doc, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	doc = regexp.MustCompile(`length="\d+"`).ReplaceAll(doc, []byte(`length="`+strconv.Itoa(len(data))+`"`))
	doc = regexp.MustCompile(`sha-256:[0-9a-f]{64}`).ReplaceAll(doc, []byte("sha-256:"+hex.EncodeToString(sum[:])))
	if err := os.WriteFile(p, doc, 0o644); err != nil {
		t.Fatal(err)
	}
}

// readPackage returns the bytes of a package of a built site.
func readPackage(t *testing.T, dir, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// duplicateEntry returns a copy of the ZIP file data with one more central
// directory record: the record of name, renamed newName, which points to
// the same local header and data. That is the overlap of a zip bomb.
func duplicateEntry(t *testing.T, data []byte, name, newName string) []byte {
	t.Helper()
	le := binary.LittleEndian
	eocd := len(data) - 22
	if le.Uint32(data[eocd:]) != 0x06054b50 {
		t.Fatal("no end of central directory record at the end")
	}
	cdSize, cdOff := le.Uint32(data[eocd+12:]), le.Uint32(data[eocd+16:])
	var record []byte
	for off := int(cdOff); off < int(cdOff+cdSize); {
		n, m, k := int(le.Uint16(data[off+28:])), int(le.Uint16(data[off+30:])), int(le.Uint16(data[off+32:]))
		if string(data[off+46:off+46+n]) == name {
			record = append(append(append([]byte(nil), data[off:off+46]...), newName...), data[off+46+n:off+46+n+m+k]...)
			le.PutUint16(record[28:], uint16(len(newName)))
		}
		off += 46 + n + m + k
	}
	if record == nil {
		t.Fatalf("no entry %s", name)
	}
	out := append(append([]byte(nil), data[:cdOff+cdSize]...), record...)
	end := append([]byte(nil), data[eocd:]...)
	le.PutUint16(end[8:], le.Uint16(end[8:])+1)
	le.PutUint16(end[10:], le.Uint16(end[10:])+1)
	le.PutUint32(end[12:], cdSize+uint32(len(record)))
	return append(out, end...)
}

func checkDir(t *testing.T, dir string, opts Options) Report {
	t.Helper()
	opts.BaseURL = "http://example.org/"
	rep, err := CheckDir(t.Context(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestZipOverlap checks that a package whose entries share their data is
// refused before anything is decompressed.
func TestZipOverlap(t *testing.T) {
	dir := buildSite(t, "testdata/sites/valid.txtar")
	bomb := duplicateEntry(t, readPackage(t, dir, "resourcedump-1.zip"), "res/a.txt", "res/z.txt")
	if zr, err := zip.NewReader(bytes.NewReader(bomb), int64(len(bomb))); err != nil || len(zr.File) != 5 {
		t.Fatalf("archive/zip does not read the crafted package: %v", err)
	}
	replacePackage(t, dir, bomb)
	if msg := firstFinding(t, checkDir(t, dir, Options{}), "zip-invalid").Message; !strings.Contains(msg, "entries res/a.txt and res/z.txt overlap") {
		t.Errorf("message %q", msg)
	}
}

// TestZipRatio checks that a package is refused when it declares more
// than deflate can compress its files to (1032 to 1), and only then: a
// package of zeros, which deflate packs about 1028 to 1, is read.
func TestZipRatio(t *testing.T) {
	dir := buildSite(t, "testdata/sites/valid.txtar")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "res/zeros.bin", Method: zip.Deflate})
	if err == nil {
		_, err = w.Write(make([]byte, 2*unzipFloor))
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	replacePackage(t, dir, buf.Bytes())
	if rules := ruleSet(checkDir(t, dir, Options{}).Findings); slices.Contains(rules, "zip-limit") {
		t.Errorf("a package of zeros (%d bytes) is refused: %v", buf.Len(), rules)
	}

	// A few zeros, declared to decompress to 2 GiB.
	var compressed bytes.Buffer
	fw, _ := flate.NewWriter(&compressed, flate.BestCompression)
	fw.Write(make([]byte, 4096))
	fw.Close()
	buf.Reset()
	zw = zip.NewWriter(&buf)
	w, err = zw.CreateRaw(&zip.FileHeader{Name: "res/zeros.bin", Method: zip.Deflate,
		CompressedSize64: uint64(compressed.Len()), UncompressedSize64: 2 << 30})
	if err == nil {
		_, err = w.Write(compressed.Bytes())
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	replacePackage(t, dir, buf.Bytes())
	if msg := firstFinding(t, checkDir(t, dir, Options{}), "zip-limit").Message; !strings.Contains(msg, "more than 1032 times its") {
		t.Errorf("message %q", msg)
	}
}

// TestZipBudget checks that the packages of one check decompress to at
// most MaxUnzipBytes in all: the valid site's two packages hold 715 and
// 798 bytes.
func TestZipBudget(t *testing.T) {
	dir := buildSite(t, "testdata/sites/valid.txtar")
	if f := firstFinding(t, checkDir(t, dir, Options{MaxUnzipBytes: 1000}), "zip-limit"); !strings.HasSuffix(f.URL, "/changedump.xml") || !strings.Contains(f.Message, "with the 715 bytes of the packages before it, that passes --max-unzip 1000") {
		t.Errorf("got %s", f)
	}
	wantRules(t, checkDir(t, dir, Options{MaxUnzipBytes: 715 + 798}))
}
