package hosting

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/rsgen/rsgen/layout"
)

func TestDropOldestClosed(t *testing.T) {
	rules := []Rule{{Path: "a", ClosedFrom: 3}, {Path: "b"}, {Path: "c", ClosedFrom: 1}, {Path: "d", ClosedFrom: 2}}
	got := dropOldestClosed(rules, 2)
	var paths []string
	for _, r := range got {
		paths = append(paths, r.Path)
	}
	if len(paths) != 2 || paths[0] != "a" || paths[1] != "b" {
		t.Errorf("kept %v, want [a b]: the two oldest closed documents go first", paths)
	}
	if got := dropOldestClosed(rules, 10); len(got) != 1 || got[0].Path != "b" {
		t.Errorf("dropping more than there are kept %v, want [b]", got)
	}
}

// TestManyRulesWarn: a plan with a rule per file warns where a host pays
// for it: Cloudflare Pages past the 100 rules it reads, Apache past
// apacheManyRules, which it tests on every request, nginx past
// nginxManyRules, which it holds in memory; a plan of few rules warns
// nowhere.
func TestManyRulesWarn(t *testing.T) {
	plan := func(n int) *Plan {
		p := &Plan{BasePath: "/", Cloudflare: true}
		for i := range n {
			p.Rules = append(p.Rules, Rule{Path: fmt.Sprintf("f%06d.json", i), Links: []string{"https://example.org/resourcesync/s/capabilitylist.xml"}})
		}
		return p
	}
	warned := func(file string, p *Plan) (msgs []string) {
		t.Helper()
		w := bufio.NewWriter(io.Discard)
		if err := Write(w, file, p, func(f, msg string) { msgs = append(msgs, f+": "+msg) }); err != nil {
			t.Fatal(err)
		}
		return msgs
	}
	many := plan(nginxManyRules + 1)
	for file, want := range map[string]string{
		layout.HeadersFile:  "Cloudflare Pages reads only the first 100",
		layout.HtaccessFile: fmt.Sprintf("%d rules, which Apache reads and tests on every request", nginxManyRules+1),
		layout.NginxFile:    fmt.Sprintf("%d locations, which nginx holds in memory", nginxManyRules+1),
		RobotsFile:          "",
	} {
		msgs := warned(file, many)
		switch {
		case want == "" && len(msgs) > 0:
			t.Errorf("%s warned: %q", file, msgs)
		case want != "" && (len(msgs) != 1 || !strings.Contains(msgs[0], want)):
			t.Errorf("%s warned %q, want one warning saying %q", file, msgs, want)
		}
		if msgs := warned(file, plan(10)); len(msgs) > 0 {
			t.Errorf("%s warned about 10 rules: %q", file, msgs)
		}
	}
	if msgs := warned(layout.NginxFile, plan(apacheManyRules+1)); len(msgs) > 0 {
		t.Errorf("nginx warned about %d rules, fewer than %d: %q", apacheManyRules+1, nginxManyRules, msgs)
	}
}

// TestFoldTypes: the type rules of an extension whose files share one
// type become one line of nginx's types and one AddType of Apache,
// whatever the case of the names; those of an extension typed in several
// ways, of a name without one, or of an extension that would be syntax,
// stay rules of their own; no other rule is folded. In nginx, a type
// rule's location repeats its folder's headers, since nginx serves it
// instead of the folder's; Apache and _headers add to them.
func TestFoldTypes(t *testing.T) {
	const capList = "https://example.org/resourcesync/s/capabilitylist.xml"
	plan := &Plan{BasePath: "/", Rules: []Rule{
		{Path: "src/", Links: []string{capList}},
		{Path: "src/README", ContentType: "text/plain"},
		{Path: "src/a.go", ContentType: "text/plain"},
		{Path: "src/b.GO", ContentType: "text/plain"},
		{Path: "src/x.dat", ContentType: "text/plain"},
		{Path: "src/y.dat", ContentType: "application/octet-stream"},
		{Path: "src/z.g;o", ContentType: "text/plain"},
		{Path: "top.go", ContentType: "text/plain", Links: []string{capList}},
	}}
	exts, rest := foldTypes(plan.Rules)
	if len(exts) != 1 || exts[0] != (layout.Extension{Ext: ".go", Type: "text/plain"}) {
		t.Errorf("folded %v, want .go as text/plain", exts)
	}
	var paths []string
	for _, r := range rest {
		paths = append(paths, r.Path)
	}
	if want := "src/ src/README src/x.dat src/y.dat src/z.g;o top.go"; strings.Join(paths, " ") != want {
		t.Errorf("rules left %q, want %q", paths, want)
	}
	written := func(file string) string {
		var sb strings.Builder
		w := bufio.NewWriter(&sb)
		if err := Write(w, file, plan, func(f, msg string) { t.Errorf("%s: %s", f, msg) }); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		return sb.String()
	}
	link := `add_header Link "<` + capList + `>; rel=\"resourcesync\"";`
	nginx := written(layout.NginxFile)
	for _, want := range []string{
		"    text/plain text txt go;\n", // after the table's own
		"location = \"/src/README\" {\n    types { }\n    default_type text/plain;\n    " + link + "\n}",
		"location = \"/src/y.dat\" {\n    types { }\n    default_type application/octet-stream;\n    " + link + "\n}",
	} {
		if !strings.Contains(nginx, want) {
			t.Errorf("%s lacks %q:\n%s", layout.NginxFile, want, nginx)
		}
	}
	htaccess := written(layout.HtaccessFile)
	for _, want := range []string{"AddType text/plain .go\n", "ForceType text/plain\n</If>\n<If \"%{REQUEST_URI} =~ m#^/src/x\\.dat$#\">"} {
		if !strings.Contains(htaccess, want) {
			t.Errorf("%s lacks %q:\n%s", layout.HtaccessFile, want, htaccess)
		}
	}
	if strings.Contains(htaccess, "a\\.go") || strings.Contains(nginx, "/src/a.go") {
		t.Error("a folded file still has a rule of its own")
	}
	if headers := written(layout.HeadersFile); !strings.Contains(headers, "/src/a.go\n  Content-Type: text/plain\n/src/b.GO\n") {
		t.Errorf("%s: each type rule stays a rule of its own there:\n%s", layout.HeadersFile, headers)
	}
}
