package hosting

import (
	"bufio"
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/layout"
)

// FuzzHostingFiles writes the nginx snippet, the .htaccess and the
// _headers file for a base path and a file name of any bytes, and parses
// them back as their servers would: whatever the names hold, each file has
// exactly the directives rsgen meant to write, each path comes back intact,
// and no byte of a name starts a line, a directive or a command of its own.
func FuzzHostingFiles(f *testing.F) {
	for _, seed := range [][2]string{
		{"/", "a.txt"},
		{"/pub/", "a b#1.txt"},
		{"/x\n/", "f\"; return 200 \"pwned"},
		{"/\nlocation / {\n", "a\nb}\n\"c\\"},
		{"/a\r\x00/", "\x01\x1b$(touch x)`id`.txt"},
		{"/ä/", "} location ^~ / { return 302 x; #"},
		{"/#|!%^/", "all#|!%^delims"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, basePath, name string) {
		if !strings.HasPrefix(basePath, "/") || !strings.HasSuffix(basePath, "/") || name == "" || strings.HasSuffix(name, "/") {
			return
		}
		plan := &Plan{BasePath: basePath, ShortCache: 5 * time.Minute, Hidden: []string{layout.NginxFile, layout.HtaccessFile}, Cloudflare: true,
			Rules: []Rule{
				{Path: name, Links: []string{"https://example.org/resourcesync/s/capabilitylist.xml"}},
				{Path: name + "/", Cache: CacheImmutable},
				{Path: "resourcesync/s/resourcelist.xml", ContentType: "application/xml", Cache: CacheShort},
			}}
		nginx := render(t, func(w *bufio.Writer) error { return writeNginx(w, plan, func(string, string) {}) })
		checkNginx(t, nginx, plan)
		htaccess := render(t, func(w *bufio.Writer) error { return writeHtaccess(w, plan, func(string, string) {}) })
		checkLines(t, ".htaccess", htaccess, htaccessLine)
		headers := render(t, func(w *bufio.Writer) error { return writeHeaders(w, plan, func(string, string) {}) })
		checkLines(t, "_headers", headers, headersLine)
	})
}

func render(t *testing.T, write func(*bufio.Writer) error) string {
	t.Helper()
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	if err := write(w); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	return buf.String()
}

// The lines an .htaccess and a _headers file may hold.
var (
	htaccessLine = regexp.MustCompile(`^(#[^\n]*|AddType [a-z0-9.+-]+/[a-z0-9.+-]+ \.[a-z0-9-]+|<If "%\{REQUEST_URI\} =~ m([#|!%^])\^[^\x00-\x1f\x7f]*">|    ForceType [a-z]+/[a-z+-]+|    Header set Cache-Control "[a-z0-9=, -]+"|    Header add Link "<[!-~]+>; rel=\\"resourcesync\\""|    Redirect 404|</If>)$`)
	headersLine  = regexp.MustCompile(`^(#[^\n]*|/[!-~]*|  Content-Type: [a-z]+/[a-z+-]+|  Cache-Control: [a-z0-9=, -]+|  Link: <[!-~]+>; rel="resourcesync")$`)
)

// checkLines checks that every line of a file matches the grammar re.
func checkLines(t *testing.T, name, text string, re *regexp.Regexp) {
	t.Helper()
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if line != "" && !re.MatchString(line) {
			t.Fatalf("%s line %d is not one rsgen writes: %q\n%s", name, i+1, line, text)
		}
	}
}

// nginxToken is one token of an nginx configuration file: a word (quoted
// strings unescaped as nginx does), or one of "{", "}", ";".
type nginxToken struct {
	text   string
	quoted bool
}

// tokenizeNginx splits an nginx configuration file the way nginx's
// ngx_conf_read_token does, dropping comments.
func tokenizeNginx(t *testing.T, s string) []nginxToken {
	t.Helper()
	var toks []nginxToken
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '{' || c == '}' || c == ';':
			toks = append(toks, nginxToken{text: string(c)})
			i++
		case c == '"':
			var sb strings.Builder
			for i++; ; i++ {
				if i >= len(s) {
					t.Fatalf("unterminated string in\n%s", s)
				}
				if s[i] == '"' {
					i++
					break
				}
				if s[i] == '\\' && i+1 < len(s) {
					i++
					switch s[i] {
					case 'n':
						sb.WriteByte('\n')
					case 'r':
						sb.WriteByte('\r')
					case 't':
						sb.WriteByte('\t')
					case '"', '\'', '\\':
						sb.WriteByte(s[i])
					default:
						sb.WriteByte('\\')
						sb.WriteByte(s[i])
					}
					continue
				}
				sb.WriteByte(s[i])
			}
			toks = append(toks, nginxToken{text: sb.String(), quoted: true})
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r{};\"", rune(s[j])) {
				j++
			}
			toks = append(toks, nginxToken{text: s[i:j]})
			i = j
		}
	}
	return toks
}

// checkNginx parses the snippet into its directives and checks them: a
// types block, default_type, then locations whose paths are the plan's,
// holding only the directives rsgen writes.
func checkNginx(t *testing.T, text string, plan *Plan) {
	t.Helper()
	toks := tokenizeNginx(t, text)
	want := map[string]bool{}
	for _, r := range plan.Rules {
		want[plan.BasePath+r.Path] = true
	}
	for _, f := range plan.Hidden {
		want[plan.BasePath+f] = true
	}
	want[plan.BasePath+layout.DeployMetaDir+"/"] = true
	next := func() nginxToken {
		if len(toks) == 0 {
			t.Fatalf("nginx snippet ends early:\n%s", text)
		}
		tok := toks[0]
		toks = toks[1:]
		return tok
	}
	expect := func(s string) {
		if tok := next(); tok.text != s || tok.quoted {
			t.Fatalf("nginx snippet: %q where %q belongs:\n%s", tok.text, s, text)
		}
	}
	// statement reads words up to ";" and returns them.
	statement := func(first nginxToken) []nginxToken {
		words := []nginxToken{first}
		for tok := next(); tok.text != ";" || tok.quoted; tok = next() {
			if !tok.quoted && (tok.text == "{" || tok.text == "}") {
				t.Fatalf("nginx snippet: %q inside a statement:\n%s", tok.text, text)
			}
			words = append(words, tok)
		}
		return words
	}
	seen := map[string]bool{}
	for len(toks) > 0 {
		switch tok := next(); tok.text {
		case "types":
			expect("{")
			for tok := next(); tok.text != "}"; tok = next() {
				statement(tok)
			}
		case "default_type":
			statement(tok)
		case "location":
			if op := next(); op.text != "=" && op.text != "^~" {
				t.Fatalf("nginx snippet: location %q:\n%s", op.text, text)
			}
			p := next()
			if !p.quoted || !want[p.text] {
				t.Fatalf("nginx snippet: location %q is no path of the plan (%v):\n%s", p.text, want, text)
			}
			seen[p.text] = true
			expect("{")
			for tok := next(); tok.text != "}" || tok.quoted; tok = next() {
				switch tok.text {
				case "types":
					expect("{")
					expect("}")
				case "default_type", "add_header", "return":
					statement(tok)
				default:
					t.Fatalf("nginx snippet: directive %q in a location:\n%s", tok.text, text)
				}
			}
		default:
			t.Fatalf("nginx snippet: directive %q at the top:\n%s", tok.text, text)
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("nginx snippet has locations %v, want %v:\n%s", seen, want, text)
	}
}
