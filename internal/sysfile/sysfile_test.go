package sysfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestTryLock: a second handle on a locked file finds it held, and takes
// the lock once the first is closed; the holder's content stays readable
// to the other handle meanwhile.
func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	first, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := TryLock(first); err != nil {
		t.Fatal(err)
	}
	if _, err := first.WriteString("4242\n"); err != nil {
		t.Fatal(err)
	}
	second, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if err := TryLock(second); !errors.Is(err, ErrHeld) {
		t.Errorf("TryLock of a held file: %v, want ErrHeld", err)
	}
	buf := make([]byte, 5)
	if n, err := second.ReadAt(buf, 0); n != 5 || string(buf) != "4242\n" {
		t.Errorf("the holder's content: %q, %v", buf[:n], err)
	}
	first.Close()
	if err := TryLock(second); err != nil {
		t.Errorf("TryLock once the holder closed: %v", err)
	}
}

// TestRenames: Rename replaces a file, also one held open by OpenShared,
// whose reader reads the old bytes on; RenameNoReplace refuses to.
func TestRenames(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dst := write("dst", "old")
	reader, err := OpenShared(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if err := Rename(write("new", "new"), dst); err != nil {
		t.Fatalf("Rename over a file open for reading: %v", err)
	}
	buf := make([]byte, 3)
	if n, _ := reader.Read(buf); string(buf[:n]) != "old" {
		t.Errorf("the reader read %q after the rename, want old", buf[:n])
	}
	if data, _ := os.ReadFile(dst); string(data) != "new" {
		t.Errorf("dst holds %q after Rename", data)
	}
	other := write("other", "other")
	if err := RenameNoReplace(other, dst); err == nil {
		t.Error("RenameNoReplace replaced a file")
	}
	if err := RenameNoReplace(other, filepath.Join(dir, "fresh")); err != nil {
		t.Errorf("RenameNoReplace to a free name: %v", err)
	}
}

// TestDup: a duplicate reads on where the original is, and outlives it.
func TestDup(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("abcd"), 0o644)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2)
	f.Read(buf)
	dup, err := Dup(f)
	if err != nil {
		t.Fatal(err)
	}
	defer dup.Close()
	f.Close()
	if n, err := dup.Read(buf); string(buf[:n]) != "cd" {
		t.Errorf("the duplicate read %q, %v; want cd", buf[:n], err)
	}
}
