package layout

import (
	"path"
	"slices"
	"strings"
)

// The media types of the files rsgen generates. Each also stands in the
// extension table, so that every output gets its type from one place.
const (
	TypeXML     = "application/xml"             // every ResourceSync document
	TypeZIP     = "application/zip"             // dump packages
	TypeTimeMap = "application/link-format"     // TimeMaps (RFC 7089 §5)
	TypePatch   = "application/json-patch+json" // JSON Patches (RFC 6902)
	TypeXSL     = "application/xslt+xml"        // the document stylesheet
	TypeHTML    = "text/html"
)

// mediaTypes maps file extensions to media types. It is the only table of
// media types in rsgen: the type attribute of the lists, the Content-Type
// of rsgen serve and of every hosting file come from it. rsgen uses its own
// table, not the system's mime.types, so that the same tree gives the same
// documents and headers on every machine.
var mediaTypes = map[string]string{
	".html": TypeHTML, ".htm": TypeHTML, ".xhtml": "application/xhtml+xml",
	".css": "text/css", ".js": "text/javascript", ".mjs": "text/javascript",
	".txt": "text/plain", ".text": "text/plain", ".md": "text/markdown",
	".csv": "text/csv", ".tsv": "text/tab-separated-values",
	".xml": TypeXML, ".xsl": TypeXSL, ".rdf": "application/rdf+xml",
	".json": "application/json", ".jsonld": "application/ld+json", ".geojson": "application/geo+json",
	".ttl": "text/turtle", ".nt": "application/n-triples", ".nq": "application/n-quads", ".trig": "application/trig",
	".pdf": "application/pdf", ".epub": "application/epub+zip", ".rtf": "application/rtf",
	".zip": TypeZIP, ".gz": "application/gzip", ".tgz": "application/gzip",
	".tar": "application/x-tar", ".bz2": "application/x-bzip2", ".xz": "application/x-xz", ".7z": "application/x-7z-compressed",
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".svg": "image/svg+xml", ".tif": "image/tiff", ".tiff": "image/tiff",
	".bmp": "image/bmp", ".ico": "image/x-icon", ".avif": "image/avif", ".jp2": "image/jp2",
	".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg", ".flac": "audio/flac", ".m4a": "audio/mp4",
	".mp4": "video/mp4", ".webm": "video/webm", ".mov": "video/quicktime", ".mkv": "video/x-matroska",
	".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf", ".otf": "font/otf",
	".wasm": "application/wasm", ".bib": "application/x-bibtex", ".tex": "application/x-tex",
	".ics": "text/calendar", ".vcf": "text/vcard", ".yaml": "application/yaml", ".yml": "application/yaml",
	".toml": "application/toml", ".sql": "application/sql", ".bin": "application/octet-stream",
	".doc": "application/msword", ".marc": "application/marc", ".mrc": "application/marc",
	".timemap": TypeTimeMap, ".json-patch": TypePatch,
}

// TypeByName returns the media type of a file by its extension, or "".
// Extensions are matched without regard to case.
func TypeByName(name string) string {
	return mediaTypes[strings.ToLower(path.Ext(name))]
}

// ContentType returns the media type an output file is served with, or ""
// when its name does not tell (a resource whose type was sniffed from its
// content): the Source Description, which has no extension, is XML; every
// other file is typed by its extension.
func ContentType(rel string) string {
	if rel == SourceDescription {
		return TypeXML
	}
	return TypeByName(rel)
}

// Extension is one entry of the media-type table.
type Extension struct {
	Ext  string // with its leading dot, lower case
	Type string
}

// Extensions returns the whole media-type table, sorted by extension: what
// the hosting files teach a server.
func Extensions() []Extension {
	list := make([]Extension, 0, len(mediaTypes))
	for ext, t := range mediaTypes {
		list = append(list, Extension{ext, t})
	}
	slices.SortFunc(list, func(a, b Extension) int { return strings.Compare(a.Ext, b.Ext) })
	return list
}

// TempPrefix starts the name of every temporary file rsgen creates in the
// output and state folders, so that leftovers of a killed build are
// recognisable, never published as resources, and never served.
const TempPrefix = ".rsgen-tmp-"
