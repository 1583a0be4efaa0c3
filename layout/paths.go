package layout

import (
	"fmt"
	"path"
	"strings"
	"time"
)

// SourceDescription is the output path of the Source Description (§6.3.2).
const SourceDescription = ".well-known/resourcesync"

// DocumentsDir is the output folder holding the documents of every set.
const DocumentsDir = "resourcesync"

// SetDir returns the folder of one set's documents.
func SetDir(set string) string { return DocumentsDir + "/" + set }

// CapabilityList returns the output path of a set's Capability List.
func CapabilityList(set string) string { return SetDir(set) + "/capabilitylist.xml" }

// ResourceList returns the output path of a set's Resource List, or of its
// Resource List Index when the list is split.
func ResourceList(set string) string { return SetDir(set) + "/resourcelist.xml" }

// ResourceDump returns the output path of a set's Resource Dump, or of its
// index when it is split.
func ResourceDump(set string) string { return SetDir(set) + "/resourcedump.xml" }

// Part returns the output path of part n (from 1) of the split document at
// doc, which ends in ".xml": resourcelist.xml has parts resourcelist-00001.xml,
// resourcelist-00002.xml and so on.
func Part(doc string, n int) string {
	return fmt.Sprintf("%s-%05d.xml", strings.TrimSuffix(doc, ".xml"), n)
}

// ResourceDumpPackage returns the output path of a Resource Dump package
// named by id, a digest of its contents: a package's URI changes exactly
// when its bytes do.
func ResourceDumpPackage(set, id string) string {
	return SetDir(set) + "/resourcedump/" + id + ".zip"
}

// ManifestCopy returns the output path of the published copy of a dump
// package's manifest, linked with rel="contents".
func ManifestCopy(pkg string) string {
	return strings.TrimSuffix(pkg, ".zip") + "-manifest.xml"
}

// ChangeListIndex returns the output path of a set's Change List Index.
func ChangeListIndex(set string) string { return SetDir(set) + "/changelist.xml" }

// ChangeList returns the output path of the Change List of a set that
// opened at from. Names sort in chronological order and never change, so a
// closed list keeps its URI forever.
func ChangeList(set string, from time.Time, seq int) string {
	return SetDir(set) + "/changelists/" + segmentName("changelist", from, seq) + ".xml"
}

// ChangeDumpIndex returns the output path of a set's Change Dump Index.
func ChangeDumpIndex(set string) string { return SetDir(set) + "/changedump.xml" }

// ChangeDump returns the output path of the Change Dump of a set that
// opened at from, the companion of the Change List of the same segment.
func ChangeDump(set string, from time.Time, seq int) string {
	return SetDir(set) + "/changedumps/" + segmentName("changedump", from, seq) + ".xml"
}

// ChangeDumpPackage returns the output path of the Change Dump package of
// the build at until, whose contents have digest id.
func ChangeDumpPackage(set string, until time.Time, id string) string {
	return SetDir(set) + "/changedump/" + until.UTC().Format("20060102T150405Z") + "-" + id + ".zip"
}

func segmentName(kind string, from time.Time, seq int) string {
	name := kind + "-" + from.UTC().Format("20060102T150405Z")
	if seq > 0 {
		// Several segments can open in the same second when a build's
		// events overflow one list.
		name += fmt.Sprintf("-%d", seq)
	}
	return name
}

// IsReserved reports whether a source path would collide with a document
// rsgen writes, so it cannot be published as a resource.
func IsReserved(p string) bool {
	return p == SourceDescription || p == DocumentsDir || strings.HasPrefix(p, DocumentsDir+"/")
}

// Clean reports whether p is a clean, relative, slash-separated path of the
// kind io/fs uses.
func Clean(p string) bool {
	return p != "" && p != "." && path.Clean(p) == p && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "../")
}

// ComparePaths orders paths in walk order: byte by byte, with '/' before
// every other byte.
func ComparePaths(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		if ca == '/' {
			return -1
		}
		if cb == '/' {
			return 1
		}
		if ca < cb {
			return -1
		}
		return 1
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}
