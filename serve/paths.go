package serve

import (
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/rsgen/rsgen/layout"
)

// hostingFiles are the files rsgen writes at the top of the output folder
// for the hosts ([publish] targets, in generator/hosting.go), which every
// host it configures refuses to serve. robots.txt, which it also writes,
// is meant to be served.
var hostingFiles = layout.HostingFiles

// target is what a request's path leads to: a redirect, a status, the
// handler of a live-reload path, or else a file.
type target struct {
	redirect string // the Location of a redirect
	status   int    // the status of a refusal
	dev      func(http.ResponseWriter, *http.Request, *index)
	file     string // the output path of the file to serve
}

// cleanPath turns the path of a request below the base path into a path
// below the output folder: "" for the folder itself, with a trailing
// slash kept. It refuses ".." segments, however they were encoded, and NUL
// bytes.
func cleanPath(p string) (string, bool) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", false
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == ".." {
			return "", false
		}
	}
	clean := path.Clean("/" + p)[1:]
	if strings.HasSuffix(p, "/") && clean != "" {
		clean += "/"
	}
	return clean, true
}

// published reports whether a production host configured by rsgen serves
// the output file at name: not rsgen's temporary files, not its hosting
// files, and of the files with a dot-segment in their path (.git/config,
// .env) only those in .well-known (RFC 8615's public folder, which rsgen
// publishes by default), the resources the Resource Lists list (dotfiles
// published with include_dotfiles) and rsgen's versions of them.
func (x *index) published(name string) bool {
	if _, listed := x.resources[name]; listed {
		return true
	}
	if slices.Contains(hostingFiles, name) {
		return false
	}
	versions := slices.ContainsFunc(layout.VersionDirs, func(d string) bool {
		return strings.HasPrefix(name, layout.DocumentsDir+"/"+d+"/")
	})
	for i, seg := range strings.Split(name, "/") {
		switch {
		case strings.HasPrefix(seg, layout.TempPrefix):
			return false
		case i == 0 && seg == wellKnown, versions:
		case strings.HasPrefix(seg, "."):
			return false
		}
	}
	return true
}

// wellKnown is the folder of RFC 8615, where the Source Description is.
var wellKnown, _, _ = strings.Cut(layout.SourceDescription, "/")
