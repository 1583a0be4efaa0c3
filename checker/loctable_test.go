package checker

import (
	"fmt"
	"slices"
	"testing"
)

// TestLocTable: a table finds each loc at its latest entry, and each
// yields every distinct loc once, in the order added, at that entry, with
// the document and line it is at.
func TestLocTable(t *testing.T) {
	var tab locTable
	tab.addDocument(&Document{URL: "http://example.org/list-1.xml", File: "list-1.xml"})
	tab.add("http://example.org/a", 6, nil)
	tab.add("http://example.org/b", 10, &fixity{length: "5"})
	tab.addDocument(&Document{URL: "http://example.org/list-2.xml", File: "list-2.xml"})
	tab.add("http://example.org/c", 6, nil)
	tab.add("http://example.org/a", 10, &fixity{length: "7"})

	if n := tab.len(); n != 3 {
		t.Errorf("len %d, want 3", n)
	}
	e, ok := tab.find("http://example.org/a")
	if !ok || e.fix == nil || e.fix.length != "7" || tab.where(e) != (where{url: "http://example.org/list-2.xml", file: "list-2.xml", line: 10}) {
		t.Errorf("find a: %v %+v at %+v; want its latest entry, list-2.xml line 10", ok, e, tab.where(e))
	}
	if _, ok := tab.find("http://example.org/d"); ok {
		t.Error("found a loc never added")
	}
	var got []string
	tab.each(func(loc string, k locKey, e entry) {
		if k != keyOf(loc) {
			t.Errorf("%s: digest %x, want %x", loc, k, keyOf(loc))
		}
		w := tab.where(e)
		got = append(got, fmt.Sprintf("%s %s:%d", loc, w.file, w.line))
	})
	want := []string{"http://example.org/b list-1.xml:10", "http://example.org/c list-2.xml:6", "http://example.org/a list-2.xml:10"}
	if !slices.Equal(got, want) {
		t.Errorf("each yielded\n%q\nwant\n%q", got, want)
	}
}
