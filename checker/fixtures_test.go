package checker

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// fixture is a broken document of testdata/docs and what it must produce.
type fixture struct {
	path   string
	rule   string
	line   int
	schema bool // xmllint must reject it too
	limits Limits
}

var wantComment = regexp.MustCompile(`<!-- want: (\S+) (\d+)((?: \S+)*) -->`)

func loadFixtures(t testing.TB) []fixture {
	t.Helper()
	paths, err := filepath.Glob("testdata/docs/*.xml")
	if err != nil {
		t.Fatal(err)
	}
	var out []fixture
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m := wantComment.FindSubmatch(data)
		if m == nil {
			t.Fatalf("%s: no want comment", p)
		}
		f := fixture{path: p, rule: string(m[1])}
		f.line, _ = strconv.Atoi(string(m[2]))
		for _, opt := range strings.Fields(string(m[3])) {
			switch {
			case opt == "schema":
				f.schema = true
			case strings.HasPrefix(opt, "depth="):
				f.limits.MaxDepth, _ = strconv.Atoi(strings.TrimPrefix(opt, "depth="))
			default:
				t.Fatalf("%s: unknown option %q", p, opt)
			}
		}
		if strings.TrimSuffix(filepath.Base(p), ".xml") != f.rule {
			t.Fatalf("%s: wants rule %s; name fixtures after their rule", p, f.rule)
		}
		out = append(out, f)
	}
	return out
}

// TestFixtures checks that each broken document produces exactly one
// finding: its rule, on its line, with the rule's severity.
func TestFixtures(t *testing.T) {
	fixtures := loadFixtures(t)
	if len(fixtures) < 40 {
		t.Errorf("only %d fixtures; want at least 40", len(fixtures))
	}
	for _, fx := range fixtures {
		t.Run(fx.rule, func(t *testing.T) {
			data, err := os.ReadFile(fx.path)
			if err != nil {
				t.Fatal(err)
			}
			_, findings := ReadDocument(bytes.NewReader(data), fx.path, fx.limits)
			if len(findings) != 1 {
				t.Fatalf("got %d findings, want 1 %s:\n%s", len(findings), fx.rule, findingLines(findings))
			}
			f := findings[0]
			if f.Rule != fx.rule || f.Line != fx.line {
				t.Errorf("got %s, want rule %s on line %d", f, fx.rule, fx.line)
			}
			if want := ruleFor(fx.rule).Severity; f.Severity != want && fx.rule != "up-missing" {
				t.Errorf("severity %s, want %s", f.Severity, want)
			}
		})
	}
}

func findingLines(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("\t" + f.String() + "\n")
	}
	return b.String()
}

// TestSpecExamples checks that the 30 examples of the specification have no
// errors when checked as lone documents.
func TestSpecExamples(t *testing.T) {
	paths, err := filepath.Glob("../testdata/spec-examples/*.xml")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 30 {
		t.Fatalf("found %d spec examples, want 30", len(paths))
	}
	for _, p := range paths {
		rep, err := CheckFile(t.Context(), p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if n := rep.Count(Error); n > 0 {
			t.Errorf("%s: %d errors:\n%s", p, n, findingLines(rep.Findings))
		}
	}
}

// TestEveryDocumentRuleHasAFixture keeps the corpus complete: every rule
// that a lone document can break has its fixture.
func TestEveryDocumentRuleHasAFixture(t *testing.T) {
	have := map[string]bool{}
	for _, fx := range loadFixtures(t) {
		have[fx.rule] = true
	}
	generated := setOf("limit-bytes", "limit-entries") // see limits_test.go
	for _, r := range documentRules() {
		if !have[r] && !generated[r] {
			t.Errorf("rule %s has no fixture in testdata/docs", r)
		}
	}
}

// documentRules lists the rules of the per-document checks: those up to
// package-md in the rule table.
func documentRules() []string {
	var out []string
	for _, r := range ruleTable {
		out = append(out, r.ID)
		if r.ID == "package-md" {
			break
		}
	}
	return out
}

// TestXmllintAgrees cross-checks the schema-level fixtures with xmllint and
// the ResourceSync 1.1 schema: both must reject them, and both must accept
// the spec examples.
func TestXmllintAgrees(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("RSGEN_REQUIRE_XMLLINT") == "1" {
			t.Fatal("xmllint is required (RSGEN_REQUIRE_XMLLINT=1) but not installed")
		}
		t.Skip("xmllint not installed; set RSGEN_REQUIRE_XMLLINT=1 to make this an error")
	}
	schema := filepath.Join("..", "testdata", "schemas", "rs11", "rs-all.xsd")
	n := 0
	for _, fx := range loadFixtures(t) {
		if !fx.schema {
			continue
		}
		n++
		err := exec.Command(xmllint, "--noout", "--nonet", "--schema", schema, fx.path).Run()
		if err == nil {
			t.Errorf("%s: xmllint accepts it, but the checker reports %s", fx.path, fx.rule)
		} else if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("run xmllint: %v", err)
		}
	}
	if n < 15 {
		t.Errorf("only %d schema-level fixtures", n)
	}
	examples, _ := filepath.Glob("../testdata/spec-examples/*.xml")
	for _, p := range examples {
		if out, err := exec.Command(xmllint, "--noout", "--nonet", "--schema", schema, p).CombinedOutput(); err != nil {
			t.Errorf("%s: xmllint rejects a spec example: %s", p, out)
		}
	}
}
