package sink

import (
	"path"
	"slices"
	"strings"

	"github.com/rsgen/rsgen/layout"
)

// Kind is what an output file is: the summary counts each kind apart, so
// that a count means one thing.
type Kind uint8

const (
	// Document is a ResourceSync document: the Source Description, a list,
	// an index or one of its parts, a dump document, a manifest copy.
	Document Kind = iota
	// Package is a dump package (ZIP).
	Package
	// Version is a kept version of a resource, a TimeMap or a patch.
	Version
	// SideFile is a file rsgen writes for people and hosts: the document
	// browser, the stylesheet, the hosting files, robots.txt.
	SideFile
	NumKinds
)

// Counts counts the outputs of one kind in a build.
type Counts struct {
	Written   int // written or replaced
	Unchanged int // published already with the same bytes
	Removed   int // published by an earlier build and no longer
}

// KindOf returns the kind of the output file at output path rel, from
// where layout puts each kind.
func KindOf(rel string) Kind {
	if rel == layout.SourceDescription {
		return Document
	}
	sub, ok := strings.CutPrefix(rel, layout.DocumentsDir+"/")
	if !ok {
		return SideFile
	}
	top, _, _ := strings.Cut(sub, "/")
	switch {
	case slices.Contains(layout.VersionDirs, top):
		return Version
	case path.Ext(rel) == ".zip":
		return Package
	case path.Ext(rel) == ".xml" && !strings.HasPrefix(sub, "_"):
		return Document
	}
	return SideFile
}
