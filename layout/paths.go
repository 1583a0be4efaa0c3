package layout

import (
	"fmt"
	"path"
	"path/filepath"
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

// ChangeNotificationTopic returns the output path of a set's Change
// Notification topic: the URI of its WebSub channel, which serves the
// channel's newest notification (or nothing before the first).
func ChangeNotificationTopic(set string) string { return SetDir(set) + "/notification/change.xml" }

// FrameworkNotificationTopic returns the output path of a set's Framework
// Notification topic, the channel of changes to its capability documents.
func FrameworkNotificationTopic(set string) string {
	return SetDir(set) + "/notification/framework.xml"
}

// IsTopic reports whether the output path rel is a notification topic.
func IsTopic(rel string) bool {
	rest, ok := strings.CutPrefix(rel, DocumentsDir+"/")
	set, name, _ := strings.Cut(rest, "/")
	return ok && set != "" && (name == "notification/change.xml" || name == "notification/framework.xml")
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

// Archive returns the output path of a set's archive of documents of the
// given capability ("changelist" gives changelist-archive.xml), or of its
// Archive Index when it is split.
func Archive(set, capability string) string {
	return SetDir(set) + "/" + capability + "-archive.xml"
}

// ArchivedResourceList returns the output path of the Resource List of a
// set kept in its archive, named by its at.
func ArchivedResourceList(set string, at time.Time) string {
	return SetDir(set) + "/resourcelists/resourcelist-" + at.UTC().Format("20060102T150405Z") + ".xml"
}

// ArchivedResourceDump returns the output path of the Resource Dump of a
// set kept in its archive, named by its at.
func ArchivedResourceDump(set string, at time.Time) string {
	return SetDir(set) + "/resourcedumps/resourcedump-" + at.UTC().Format("20060102T150405Z") + ".xml"
}

// Memento returns the output path of the version of the resource at
// source path p first seen at t: a time-specific URI in the manner of web
// archives, <time>/<path>. Versions are shared by the sets that keep them.
func Memento(t time.Time, p string) string {
	return DocumentsDir + "/mementos/" + t.UTC().Format("20060102150405") + "/" + p
}

// TimeMap returns the output path of the TimeMap (RFC 7089) of the
// resource at source path p.
func TimeMap(p string) string {
	return DocumentsDir + "/timemaps/" + p + ".timemap"
}

// Patch returns the output path of the JSON Patch that turns the version
// of the resource at source path p before t into the one first seen at t.
func Patch(t time.Time, p string) string {
	return DocumentsDir + "/patches/" + t.UTC().Format("20060102150405") + "/" + p + ".json-patch"
}

// VersionDirs are the folders of DocumentsDir that hold versions, TimeMaps
// and patches rather than a set's documents: no set may take their names.
var VersionDirs = []string{"mementos", "timemaps", "patches"}

// ViewerPage is the output path of the document browser's page (package
// viewer): no set may take its name either.
const ViewerPage = DocumentsDir + "/index.html"

// The hosting files: what rsgen writes at the top of the output for the
// hosts that serve it ([publish] targets). They are configuration, never
// resources: the hosts, rsgen serve and rsgen deploy to S3 keep them from
// being served.
const (
	NoJekyllFile = ".nojekyll"        // github-pages: publish dot-folders such as .well-known
	HeadersFile  = "_headers"         // netlify, cloudflare-pages
	NginxFile    = "rsgen-nginx.conf" // nginx: include it in the server block
	HtaccessFile = ".htaccess"        // apache
)

// HostingFiles lists the hosting files.
var HostingFiles = []string{NoJekyllFile, HeadersFile, NginxFile, HtaccessFile}

// DeployMetaDir is the folder rsgen deploy keeps its manifest and lock in,
// at the top of what it publishes to. It is never published: no output path
// may lie in it, and the hosting files keep hosts from serving it.
const DeployMetaDir = ".rsgen-deploy"

// Within reports whether the file system path p is dir or inside it. Both
// are clean; no symbolic link is resolved.
func Within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
