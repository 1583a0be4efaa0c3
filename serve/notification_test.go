package serve_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
	"github.com/rsgen/rsgen/notify"
)

// TestTopicHeaders: a notification topic that a Capability List
// advertises answers HEAD and GET with 200, application/xml, no-cache and
// the Link headers naming itself and its hub (notify.TopicHeaders), with
// nothing before the first notification and then the newest; a document
// that is no topic has no such Link.
func TestTopicHeaders(t *testing.T) {
	const hub = "https://hub.example.org/"
	fx := newFixture(t, func(c *config.Config) { c.Notification.Hub = hub })
	topic := "resourcesync/texts/notification/change.xml"
	want := notify.TopicHeaders(base+topic, hub)
	check := func(wantBody string) {
		t.Helper()
		for _, method := range []string{"HEAD", "GET"} {
			resp := fx.do(method + " /" + topic)
			got := body(t, resp)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != want.Get("Content-Type") ||
				resp.Header.Get("Link") != want.Get("Link") || resp.Header.Get("Cache-Control") != "no-cache" {
				t.Errorf("%s /%s: %s, Content-Type %q, Link %q, Cache-Control %q; want 200 and %v", method, topic, resp.Status,
					resp.Header.Get("Content-Type"), resp.Header.Get("Link"), resp.Header.Get("Cache-Control"), want)
			}
			if method == "GET" && got != wantBody {
				t.Errorf("GET /%s: %q, want %q", topic, got, wantBody)
			}
		}
	}
	check("")
	fx.write("texts/b.txt", "new")
	fx.build(t0.Add(time.Hour))
	published, err := os.ReadFile(filepath.Join(fx.cfg.Out, filepath.FromSlash(topic)))
	if err != nil || !strings.Contains(string(published), "texts/b.txt") {
		t.Fatalf("the topic does not hold the notification of texts/b.txt: %v\n%s", err, published)
	}
	check(string(published))
	if resp := fx.do("GET /resourcesync/texts/capabilitylist.xml"); resp.Header.Get("Link") != "" {
		t.Errorf("a document that is no topic has Link %q", resp.Header.Get("Link"))
	}
}
