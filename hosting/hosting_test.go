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
