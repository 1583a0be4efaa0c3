package generator

import (
	"bytes"
	"testing"
)

// TestHeadInjectorAcrossWrites: the link goes right after the document's
// own <head> start tag, found as a browser finds it: never inside a
// comment, a script or an attribute, and never after content has begun.
func TestHeadInjectorAcrossWrites(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"<html><head><title>", "<html><head>TAG<title>"},
		{"<HEAD\n  profile=x>x", "<HEAD\n  profile=x>TAGx"},
		{"<header><head>", "<header><head>"}, // <header> starts the body: a later <head> is not the head
		{"<p>no head</p>", "<p>no head</p>"},
		{"<head", "<head"},
		{"\ufeff<!DOCTYPE html>\n<!-- <head> --><html>\n <head>", "\ufeff<!DOCTYPE html>\n<!-- <head> --><html>\n <head>TAG"},
		{"<!-- <head> -->", "<!-- <head> -->"},
		{"<script>document.write('<head>')</script><head>", "<script>document.write('<head>')</script><head>"},
		{"<html lang='<head>'><head>", "<html lang='<head>'><head>TAG"},
		{"<html><title>x</title><head>", "<html><title>x</title><head>"},
		{"<!doctype html><head/>x", "<!doctype html><head/>TAGx"},
	} {
		// One byte at a time: the start tag arrives in pieces.
		var out bytes.Buffer
		inj := &headInjector{dst: &out, tags: []byte("TAG")}
		for i := range len(tc.in) {
			if _, err := inj.Write([]byte{tc.in[i]}); err != nil {
				t.Fatal(err)
			}
		}
		if err := inj.Close(); err != nil {
			t.Fatal(err)
		}
		if out.String() != tc.want {
			t.Errorf("%q became %q, want %q", tc.in, out.String(), tc.want)
		}
	}
	// Past the search limit bytes pass through unchanged.
	var out bytes.Buffer
	inj := &headInjector{dst: &out, tags: []byte("TAG")}
	long := append(bytes.Repeat([]byte("x"), headSearchLimit+1), "<head>"...)
	inj.Write(long)
	inj.Close()
	if !bytes.Equal(out.Bytes(), long) {
		t.Error("a <head> past the search limit was rewritten")
	}
}

func TestRelativeHref(t *testing.T) {
	for _, tc := range []struct{ from, want string }{
		{".well-known/resourcesync", "../resourcesync/_stylesheet.xsl"},
		{"resourcesync/s/capabilitylist.xml", "../_stylesheet.xsl"},
		{"resourcesync/s/changelists/changelist-1.xml", "../../_stylesheet.xsl"},
	} {
		if got := relativeHref(tc.from, StylesheetPath); got != tc.want {
			t.Errorf("relativeHref(%q) = %q, want %q", tc.from, got, tc.want)
		}
	}
}
