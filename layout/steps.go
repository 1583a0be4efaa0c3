package layout

import (
	"path"
	"strings"
)

// Step is the place of an output file in the order of publication: a file
// is made visible only after every file it may reference, so that a
// Destination reading from the top (the Source Description) down never
// follows a link to a file that is not there yet. The build renames its
// files into place in this order, and rsgen deploy uploads them in it.
type Step uint8

// The steps, in order.
const (
	StepResources    Step = iota // resources, and files nothing references (the viewer, robots.txt)
	StepVersions                 // mementos and patches
	StepTimeMaps                 // TimeMaps, which list the mementos
	StepImmutable                // dump packages, their manifests, closed and archived documents, open segment documents
	StepParts                    // the parts of split documents
	StepLists                    // Resource Lists, dumps, indexes and archives, which list the above
	StepCapabilities             // Capability Lists
	StepDescription              // the Source Description, last
	NumSteps
)

var stepNames = [NumSteps]string{"resources", "versions", "timemaps", "immutable", "parts", "lists", "capability lists", "source description"}

// String names the step.
func (s Step) String() string { return stepNames[s] }

// PublishStep returns the step of the output file at rel.
func PublishStep(rel string) Step {
	if rel == SourceDescription {
		return StepDescription
	}
	rest, ok := strings.CutPrefix(rel, DocumentsDir+"/")
	if !ok {
		return StepResources
	}
	first, _, _ := strings.Cut(rest, "/")
	switch first {
	case "mementos", "patches":
		return StepVersions
	case "timemaps":
		return StepTimeMaps
	}
	name := path.Base(rel)
	dir := path.Base(path.Dir(rel))
	switch {
	case strings.Count(rest, "/") >= 2 && (dir == "resourcedump" || dir == "changedump" || dir == "changelists" ||
		dir == "changedumps" || dir == "resourcelists" || dir == "resourcedumps"):
		return StepImmutable
	case !strings.HasSuffix(name, ".xml") || strings.Count(rest, "/") == 0:
		return StepResources // the viewer, the stylesheet: nothing depends on their order
	case name == "capabilitylist.xml":
		return StepCapabilities
	case isPart(name):
		return StepParts
	}
	return StepLists
}

// isPart reports whether name is that of a part of a split document,
// such as resourcelist-00001.xml (see Part).
func isPart(name string) bool {
	stem := strings.TrimSuffix(name, ".xml")
	i := strings.LastIndexByte(stem, '-')
	if i < 0 || len(stem)-i-1 != 5 {
		return false
	}
	for _, c := range stem[i+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
