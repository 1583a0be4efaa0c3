package notify

import (
	"net/http"
	"strings"

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

// ParseLinkHeader reads Link header values (RFC 8288) into the targets
// of each relation type: `<URI>; rel="a b", <URI>; rel=c`. A URI is
// delimited by <>, so that a comma in it does not split it.
func ParseLinkHeader(values []string) map[string][]string {
	out := map[string][]string{}
	for _, v := range values {
		for v != "" {
			start := strings.IndexByte(v, '<')
			end := strings.IndexByte(v, '>')
			if start < 0 || end < start {
				break
			}
			target := v[start+1 : end]
			params, rest := splitLinkParams(v[end+1:])
			for _, rel := range strings.Fields(params["rel"]) {
				out[strings.ToLower(rel)] = append(out[strings.ToLower(rel)], target)
			}
			v = rest
		}
	}
	return out
}

// splitLinkParams reads the parameters of one link value, up to the comma
// that ends it outside quotes, and returns them with the rest.
func splitLinkParams(s string) (map[string]string, string) {
	params := map[string]string{}
	quoted := false
	end := len(s)
	for i := 0; i < len(s) && end == len(s); i++ {
		switch {
		case s[i] == '"':
			quoted = !quoted
		case s[i] == ',' && !quoted:
			end = i
		}
	}
	for p := range strings.SplitSeq(s[:end], ";") {
		name, value, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok {
			params[strings.ToLower(strings.TrimSpace(name))] = strings.Trim(strings.TrimSpace(value), `"`)
		}
	}
	if end < len(s) {
		return params, s[end+1:]
	}
	return params, ""
}
