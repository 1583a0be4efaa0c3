package generator

import (
	"bytes"
	"fmt"
	"testing"
)

// inject runs doc through a headInjector in writes of chunk bytes.
func inject(t testing.TB, doc []byte, chunk int) ([]byte, bool) {
	var out bytes.Buffer
	inj := &headInjector{dst: &out, tags: []byte("<TAG>")}
	for len(doc) > 0 {
		n := min(chunk, len(doc))
		if _, err := inj.Write(doc[:n]); err != nil {
			t.Fatal(err)
		}
		doc = doc[n:]
	}
	if err := inj.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), inj.inserted
}

// FuzzHeadInjector: whatever a source's HTML file holds, the page
// published is the file itself, or the file with the tags inserted at one
// place; and how the bytes arrive (the reads of a file) changes nothing.
func FuzzHeadInjector(f *testing.F) {
	for _, seed := range []string{
		"<html><head><title>", "<!DOCTYPE html>\n<!-- <head> --><html>\n <head>", "<header><head>",
		"<script>document.write('<head>')</script><head>", "<html lang='<head>'><head>", "\ufeff<head/>x", "<head",
	} {
		f.Add([]byte(seed), uint8(1))
	}
	f.Fuzz(func(t *testing.T, doc []byte, chunk uint8) {
		whole, inserted := inject(t, doc, len(doc)+1)
		pieces, _ := inject(t, doc, int(chunk)+1)
		if !bytes.Equal(whole, pieces) {
			t.Fatalf("%q: written whole %q, in writes of %d bytes %q", doc, whole, int(chunk)+1, pieces)
		}
		if !inserted {
			if !bytes.Equal(whole, doc) {
				t.Fatalf("%q changed to %q without the tags", doc, whole)
			}
			return
		}
		// The tags go in at k, at most the length of the common prefix.
		tags := []byte("<TAG>")
		common := 0
		for common < len(doc) && doc[common] == whole[common] {
			common++
		}
		for k := max(0, common-len(tags)); k <= common; k++ {
			if len(whole) == len(doc)+len(tags) && bytes.Equal(whole[k:k+len(tags)], tags) && bytes.Equal(whole[k+len(tags):], doc[k:]) {
				return
			}
		}
		t.Fatalf("%q became %q: not the document with the tags at one place", doc, whole)
	})
}

// BenchmarkHeadInjector injects into a page whose head is not decided
// before the search limit (a comment that runs on), written in reads of
// several sizes. In writes of one byte, a page of 60,000 bytes took about
// 10 s when every write read the held bytes from the start again, and
// takes 1 ms since headStart runs only once they have doubled.
func BenchmarkHeadInjector(b *testing.B) {
	doc := append([]byte("<!--"), bytes.Repeat([]byte("a"), headSearchLimit-10)...)
	for _, chunk := range []int{1, 512, 32 << 10} {
		b.Run(fmt.Sprintf("writes-of-%d", chunk), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				inject(b, doc, chunk)
			}
		})
	}
}
