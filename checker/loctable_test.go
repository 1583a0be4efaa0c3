package checker

import (
	"fmt"
	"slices"
	"testing"
)

// TestLocTable: a table finds each loc at its latest entry, and each
// yields every distinct loc once, in the order added, at that entry, with
// the document and line it is at and the fixity it was added with.
func TestLocTable(t *testing.T) {
	var tab locTable
	tab.keepFixities()
	tab.addDocument(&Document{URL: "http://example.org/list-1.xml", File: "list-1.xml"})
	tab.add("http://example.org/a", 6, nil)
	tab.add("http://example.org/b", 10, &fixity{length: "5", hash: "md5:x", typ: "text/plain", hasType: true})
	tab.addDocument(&Document{URL: "http://example.org/list-2.xml", File: "list-2.xml"})
	tab.add("http://example.org/c", 6, nil)
	tab.add("http://example.org/a", 10, &fixity{length: "7"})

	if n := len(tab.index); n != 3 {
		t.Errorf("len %d, want 3", n)
	}
	e, ok := tab.find("http://example.org/a")
	if !ok || tab.where(e) != (where{url: "http://example.org/list-2.xml", file: "list-2.xml", line: 10}) {
		t.Errorf("find a: %v at %+v; want its latest entry, list-2.xml line 10", ok, tab.where(e))
	}
	if _, ok := tab.find("http://example.org/d"); ok {
		t.Error("found a loc never added")
	}
	var got []string
	tab.each(func(loc string, k locKey, e locPos, fix *fixity) {
		if k != keyOf(loc) {
			t.Errorf("%s: digest %x, want %x", loc, k, keyOf(loc))
		}
		w := tab.where(e)
		got = append(got, fmt.Sprintf("%s %s:%d %+v", loc, w.file, w.line, fix))
	})
	want := []string{"http://example.org/b list-1.xml:10 &{length:5 hash:md5:x typ:text/plain hasType:true}",
		"http://example.org/c list-2.xml:6 <nil>", "http://example.org/a list-2.xml:10 &{length:7 hash: typ: hasType:false}"}
	if !slices.Equal(got, want) {
		t.Errorf("each yielded\n%q\nwant\n%q", got, want)
	}
}
