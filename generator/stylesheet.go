package generator

import (
	"bufio"
	_ "embed"
	"io"
	"path/filepath"
	"strings"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/viewer"
)

// StylesheetPath is the output path of the XSL stylesheet that every
// document references when [publish] stylesheet is on. Set names start
// with a letter or digit, so no set's folder can take this name.
const StylesheetPath = layout.DocumentsDir + "/_stylesheet.xsl"

// stylesheet is the XSL stylesheet: it shows any ResourceSync document as
// a table of its entries, with its from, until and links above.
//
//go:embed stylesheet.xsl
var stylesheet string

// writeSideFile writes a file rsgen generates beside the documents (the
// stylesheet, the hosting files) at output path rel through the sink w,
// atomically and only when its bytes change, and records it as an output
// of this build, so that a later build that no longer writes it removes
// it.
func writeSideFile(w *sink.Sink, rel string, fill func(*bufio.Writer) error) error {
	return w.Write(rel, func(f io.Writer) error {
		bw := bufio.NewWriter(f)
		if err := fill(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// writeStylesheet publishes the stylesheet, when pub asks for it. It is
// written before the documents that reference it, as documents are before
// the documents that link to them.
func writeStylesheet(w *sink.Sink, pub *config.Publish) error {
	if !pub.Stylesheet {
		return nil
	}
	return writeSideFile(w, StylesheetPath, func(bw *bufio.Writer) error {
		_, err := bw.WriteString(stylesheet)
		return err
	})
}

// writeViewer publishes the document browser (package viewer), when pub
// asks for it, before the documents it shows.
func writeViewer(w *sink.Sink, pub *config.Publish) error {
	if !pub.Viewer {
		return nil
	}
	for _, f := range viewer.Files() {
		err := writeSideFile(w, f.Path, func(bw *bufio.Writer) error {
			_, err := bw.Write(f.Data)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// stylesheetHref returns the href of the stylesheet instruction of the
// document written at path by a build of cfg, or "" for none. The href is relative, so that
// the documents render wherever the output is served (under any base URL,
// or from rsgen serve on another address): browsers apply only stylesheets
// of the document's own origin. Documents kept in the state folder (closed
// Change Lists) lie one folder below it at their output path.
func stylesheetHref(cfg *config.Config, path string) string {
	if !cfg.Publish.Stylesheet {
		return ""
	}
	rel, err := filepath.Rel(cfg.Out, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		if rel, err = filepath.Rel(cfg.State, path); err != nil || strings.HasPrefix(rel, "..") {
			return ""
		}
		_, rel, _ = strings.Cut(filepath.ToSlash(rel), "/")
	}
	return relativeHref(filepath.ToSlash(rel), StylesheetPath)
}

// relativeHref returns the relative reference from the document at output
// path from to the file at output path to.
func relativeHref(from, to string) string {
	fromDir := strings.Split(from, "/")
	fromDir = fromDir[:len(fromDir)-1]
	target := strings.Split(to, "/")
	common := 0
	for common < len(fromDir) && common < len(target)-1 && fromDir[common] == target[common] {
		common++
	}
	return strings.Repeat("../", len(fromDir)-common) + strings.Join(target[common:], "/")
}
