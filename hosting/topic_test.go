package hosting

import (
	"bufio"
	"net/http"
	"strings"
	"testing"

	"github.com/rsgen/rsgen/layout"
)

// TestRuleHeaders: the headers a rule adds (a topic's Link, say) are
// written by every host file in its own syntax, quoted for it (mod_headers
// reads % as a format specifier), and a topic is revalidated on every
// request.
func TestRuleHeaders(t *testing.T) {
	link := `<https://d.example/a%20b/resourcesync/s/notification/change.xml>; rel="self", <https://hub.example/>; rel="hub"`
	plan := &Plan{BasePath: "/", Rules: []Rule{{Path: layout.ChangeNotificationTopic("s"), ContentType: "application/xml",
		Cache: CacheOf(layout.ChangeNotificationTopic("s"), false), Header: http.Header{"Link": {link}}}}}
	for file, want := range map[string]string{
		layout.HeadersFile:  "  Cache-Control: no-cache\n  Link: " + link + "\n",
		layout.NginxFile:    "    add_header Cache-Control \"no-cache\";\n    add_header Link \"" + strings.ReplaceAll(link, `"`, `\"`) + "\";\n",
		layout.HtaccessFile: "    Header set Cache-Control \"no-cache\"\n    Header set Link \"" + strings.ReplaceAll(strings.ReplaceAll(link, `"`, `\"`), "%", "%%") + "\"\n",
	} {
		var b strings.Builder
		w := bufio.NewWriter(&b)
		if err := Write(w, file, plan, func(string, string) {}); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		if !strings.Contains(b.String(), want) {
			t.Errorf("%s lacks\n%s\nin\n%s", file, want, b.String())
		}
	}
	if c := CacheOf(layout.FrameworkNotificationTopic("s"), false); CacheControl(c, 0) != "no-cache" {
		t.Errorf("a topic's Cache-Control is %q, want no-cache", CacheControl(c, 0))
	}
}
