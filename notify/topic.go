package notify

import (
	"net/http"

	"github.com/rsgen/rsgen/rs"
)

// UserAgent is the User-Agent of rsgen's requests to hubs.
const UserAgent = "rsgen"

// LinkHeader returns the Link header value naming a channel's topic
// (rel="self") and hub (rel="hub"), as the Source sends it with a payload
// and as the topic URI answers with it.
func LinkHeader(topic, hub string) string {
	return "<" + topic + `>; rel="` + rs.RelSelf + `", <` + hub + `>; rel="` + rs.RelHub + `"`
}

// TopicHeaders returns the headers a topic URI answers HEAD and GET with,
// with status 200: Content-Type application/xml and the Link header of
// the channel. The body is the channel's newest payload or, before the
// first, nothing (Content-Length: 0), which the host sets.
func TopicHeaders(topic, hub string) http.Header {
	return http.Header{
		"Content-Type": {rs.NotificationMediaType},
		"Link":         {LinkHeader(topic, hub)},
	}
}
