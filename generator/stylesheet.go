package generator

import (
	"bufio"
	_ "embed"
	"strings"

	"github.com/rsgen/rsgen/layout"
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

// writeStylesheet publishes the stylesheet. It is written before the
// documents that reference it, as documents are before the documents that
// link to them.
func (b *builder) writeStylesheet() error {
	if !b.cfg.Publish.Stylesheet {
		return nil
	}
	return b.writeSideFile(StylesheetPath, func(w *bufio.Writer) error {
		_, err := w.WriteString(stylesheet)
		return err
	})
}

// writeViewer publishes the document browser (package viewer), before the
// documents it shows.
func (b *builder) writeViewer() error {
	if !b.cfg.Publish.Viewer {
		return nil
	}
	for _, f := range viewer.Files() {
		err := b.writeSideFile(f.Path, func(w *bufio.Writer) error {
			_, err := w.Write(f.Data)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
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
