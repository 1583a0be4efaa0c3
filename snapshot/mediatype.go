package snapshot

import (
	"mime"
	"net/http"
	"path"
	"strings"
)

// mediaTypes maps file extensions to media types. rsgen uses its own table,
// not the system's mime.types, so that the same tree gives the same
// documents on every machine.
var mediaTypes = map[string]string{
	".html": "text/html", ".htm": "text/html", ".xhtml": "application/xhtml+xml",
	".css": "text/css", ".js": "text/javascript", ".mjs": "text/javascript",
	".txt": "text/plain", ".text": "text/plain", ".md": "text/markdown",
	".csv": "text/csv", ".tsv": "text/tab-separated-values",
	".xml": "application/xml", ".xsl": "application/xslt+xml", ".rdf": "application/rdf+xml",
	".json": "application/json", ".jsonld": "application/ld+json", ".geojson": "application/geo+json",
	".ttl": "text/turtle", ".nt": "application/n-triples", ".nq": "application/n-quads", ".trig": "application/trig",
	".pdf": "application/pdf", ".epub": "application/epub+zip", ".rtf": "application/rtf",
	".zip": "application/zip", ".gz": "application/gzip", ".tgz": "application/gzip",
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
}

// TypeByName returns the media type of a file by its extension, or "".
func TypeByName(name string) string {
	return mediaTypes[strings.ToLower(path.Ext(name))]
}

// sniffType returns the media type of content beginning with head, without
// parameters.
func sniffType(head []byte) string {
	t, _, err := mime.ParseMediaType(http.DetectContentType(head))
	if err != nil {
		return "application/octet-stream"
	}
	return t
}
