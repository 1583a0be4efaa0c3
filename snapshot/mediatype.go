package snapshot

import (
	"mime"
	"net/http"
)

// sniffType returns the media type of content beginning with head, without
// parameters.
func sniffType(head []byte) string {
	t, _, err := mime.ParseMediaType(http.DetectContentType(head))
	if err != nil {
		return "application/octet-stream"
	}
	return t
}
