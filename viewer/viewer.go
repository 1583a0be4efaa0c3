package viewer

import (
	"embed"
	"io/fs"
	"path"

	"github.com/rsgen/rsgen/layout"
)

//go:embed assets
var assets embed.FS

// Index is the output path of the viewer's page: the human entry point of
// a Source.
const Index = layout.ViewerPage

// assetDir is the output folder of the viewer's script and stylesheet. Set
// names start with a letter or digit, so no set's folder can take it.
const assetDir = layout.DocumentsDir + "/_viewer"

// File is one file of the viewer, at its output path.
type File struct {
	Path string
	Data []byte
}

// Files returns the files of the viewer, the page first.
func Files() []File {
	files := []File{{Path: Index, Data: mustRead("assets/index.html")}}
	entries, err := fs.ReadDir(assets, "assets")
	if err != nil {
		panic(err) // embedded at build time
	}
	for _, e := range entries {
		if e.Name() != "index.html" {
			files = append(files, File{Path: path.Join(assetDir, e.Name()), Data: mustRead("assets/" + e.Name())})
		}
	}
	return files
}

func mustRead(name string) []byte {
	data, err := assets.ReadFile(name)
	if err != nil {
		panic(err) // embedded at build time
	}
	return data
}
