package websubhub

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// maxContent bounds the content the hub takes or fetches: a ResourceSync
// document's limit (50 MB) and some slack.
const maxContent = 51 << 20

// servePublish answers a publication ping: the topic is in hub.topic or
// hub.url (hubs differ, so publishers send both, and each may be given
// more than once). The hub fetches each topic after answering.
func (h *Hub) servePublish(w http.ResponseWriter, form url.Values) {
	topics := map[string]bool{}
	for _, name := range []string{"hub.topic", "hub.url"} {
		for _, t := range form[name] {
			if msg := checkURL(name, t); msg != "" {
				httpError(w, http.StatusBadRequest, msg)
				return
			}
			topics[t] = true
		}
	}
	if len(topics) == 0 {
		httpError(w, http.StatusBadRequest, "a publication names its topic in hub.topic or hub.url")
		return
	}
	w.WriteHeader(http.StatusAccepted)
	for t := range topics {
		h.log.add(Event{Kind: Published, Topic: t})
		h.goBackground(func() { h.fetchAndDistribute(t) })
	}
}

// fetchAndDistribute fetches the topic and distributes what it answered,
// with its Content-Type.
func (h *Hub) fetchAndDistribute(topic string) {
	msg, status, err := h.fetch(topic)
	if err != nil {
		h.log.add(Event{Kind: FetchFailed, Topic: topic, Status: status, Err: err})
		return
	}
	h.distribute(topic, msg)
}

func (h *Hub) fetch(topic string) (message, int, error) {
	req, err := http.NewRequestWithContext(h.ctx, http.MethodGet, topic, nil)
	if err != nil {
		return message{}, 0, err
	}
	resp, err := h.opts.Client.Do(req)
	if err != nil {
		return message{}, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return message{}, resp.StatusCode, errors.New("the topic did not answer 200")
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxContent))
	return message{contentType: resp.Header.Get("Content-Type"), body: body}, resp.StatusCode, err
}

// serveDirect answers the ResourceSync notification specifications'
// submission: the payload is the body, its topic the Link header's
// rel="self". It is distributed as it came, with its Content-Type.
func (h *Hub) serveDirect(w http.ResponseWriter, r *http.Request) {
	links := parseLinks(r.Header.Values("Link"))
	topic := links["self"]
	if msg := checkURL(`the Link header's rel="self"`, topic); msg != "" {
		httpError(w, http.StatusBadRequest, msg)
		return
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		httpError(w, http.StatusBadRequest, "the payload has no Content-Type")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxContent))
	if err != nil {
		httpError(w, http.StatusBadRequest, "the payload cannot be read: "+err.Error())
		return
	}
	if len(body) == 0 {
		httpError(w, http.StatusBadRequest, "the payload is empty")
		return
	}
	w.WriteHeader(http.StatusAccepted)
	h.log.add(Event{Kind: Published, Topic: topic})
	h.distribute(topic, message{contentType: ct, body: body})
}

// linkValue matches one link-value of a Link header (RFC 8288): the
// target, then its parameters up to the next link-value.
var linkValue = regexp.MustCompile(`<([^>]*)>((?:\s*;\s*[^;,]+)*)`)

// relParam matches a rel parameter, quoted or not.
var relParam = regexp.MustCompile(`(?i);\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))`)

// parseLinks returns the target of each relation named in the Link header
// values (the first, for a relation named twice).
func parseLinks(values []string) map[string]string {
	links := map[string]string{}
	for _, v := range values {
		for _, m := range linkValue.FindAllStringSubmatch(v, -1) {
			rm := relParam.FindStringSubmatch(m[2])
			if rm == nil {
				continue
			}
			for _, rel := range strings.Fields(rm[1] + rm[2]) {
				rel = strings.ToLower(rel)
				if _, seen := links[rel]; !seen {
					links[rel] = m[1]
				}
			}
		}
	}
	return links
}
