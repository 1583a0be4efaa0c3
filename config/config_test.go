package config

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestExampleIsTheRepositoryExample(t *testing.T) {
	root, err := os.ReadFile("../rsgen.toml.example")
	if err != nil {
		t.Fatal(err)
	}
	if string(root) != Example {
		t.Error("rsgen.toml.example differs from config/example.toml, which rsgen init writes; copy one over the other")
	}
}

func TestExampleParsesToTheDefaults(t *testing.T) {
	cfg, err := Parse(strings.NewReader(Example), "example.toml")
	if err != nil {
		t.Fatal(err)
	}
	def := Default() // base_url is commented out: the first build asks for it
	if cfg.Source != def.Source || cfg.Out != def.Out || cfg.State != def.State || cfg.BaseURL != def.BaseURL ||
		cfg.CopyResources != def.CopyResources || cfg.SpecVersion != def.SpecVersion || cfg.Lastmod != def.Lastmod ||
		cfg.ChangeList != def.ChangeList || !slices.Equal(cfg.Hashes, def.Hashes) {
		t.Errorf("the example does not parse to the defaults")
	}
}

func TestParseErrorsNameTheLine(t *testing.T) {
	cases := []struct {
		name, toml, want string
	}{
		{"unknown key", "source = \"s\"\nbase_ulr = \"x\"\n", `x.toml:2: unknown key "base_ulr" (did you mean "base_url"?)`},
		{"unknown set key", "[[set]]\nname = \"a\"\npaht = \"x\"\n", `x.toml:3: unknown key "set.paht" (did you mean "path"?)`},
		{"unknown table key", "[changelist]\nrotat = \"1h\"\n", `x.toml:2: unknown key "changelist.rotat" (did you mean "rotate"?)`},
		{"bad hash", "\nhashes = [\"sha-512\"]\n", `x.toml:2: hashes: unknown algorithm "sha-512"`},
		{"bad spec", "spec_version = \"2\"\n", `x.toml:1: spec_version: must be "1.1" or "1.0"`},
		{"bad lastmod", "lastmod = \"ctime\"\n", `x.toml:1: lastmod: must be "content" or "mtime"`},
		{"bad duration", "[changelist]\nrotate = 5\n", `x.toml:2:`},
		{"bad duration string", "[changelist]\nrotate = \"daily\"\n", `not a duration`},
		{"wrong type", "copy_resources = \"yes\"\n", `x.toml:1:`},
		{"syntax", "source = \n", `x.toml:1:`},
		{"bad set name", "[[set]]\nname = \"Has Space\"\n", `x.toml:2: set.name:`},
		{"duplicate set", "[[set]]\nname = \"a\"\n[[set]]\nname = \"a\"\n", `used twice`},
		{"set path escapes", "[[set]]\nname = \"a\"\npath = \"../x\"\n", `x.toml:3: set.path:`},
		{"bad glob", "exclude = [\"[x\"]\n", `x.toml:1: exclude: bad pattern`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(c.toml), "x.toml")
			if err == nil {
				t.Fatal("no error")
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Errorf("error %v is not a *config.Error", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
		})
	}
}

func TestLoadResolvesPathsAgainstTheFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "conf", "rsgen.toml")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	body := "source = \"site\"\nout = \"../public\"\nbase_url = \"https://x.example/\"\n[changelist]\nrotate = \"168h\"\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if cfg.Source != filepath.Join(dir, "conf", "site") || cfg.Out != filepath.Join(dir, "public") || cfg.State != filepath.Join(dir, "conf", ".rsgen") {
		t.Errorf("paths not resolved against the file's folder: %s %s %s", cfg.Source, cfg.Out, cfg.State)
	}
	if cfg.ChangeList.Rotate.Duration != 168*time.Hour {
		t.Errorf("rotate = %v", cfg.ChangeList.Rotate)
	}
}

func TestValidate(t *testing.T) {
	valid := func() Config {
		c := Default()
		c.Dir = "/work"
		c.BaseURL = "https://x.example/"
		return c
	}
	cases := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"no base url", func(c *Config) { c.BaseURL = "" }, "base_url is not set"},
		{"relative base url", func(c *Config) { c.BaseURL = "data.example.org" }, "base_url:"},
		{"out is source", func(c *Config) { c.Out = c.Source }, "must not be, contain or be inside"},
		{"out inside source", func(c *Config) { c.Out = "site/public" }, "must not be, contain or be inside"},
		{"out contains source", func(c *Config) { c.Out = "." }, "must not be, contain or be inside"},
		{"state inside out", func(c *Config) { c.State = "public/.rsgen" }, "would be published"},
		{"no resource base", func(c *Config) { c.CopyResources = false }, "resource_base_url must be set"},
		{"bad describedby", func(c *Config) { c.DescribedBy = "about.html" }, "describedby:"},
		{"base url port 0", func(c *Config) { c.BaseURL = "http://x.example:0/" }, "base_url: \"http://x.example:0/\": port 0 is not a TCP port"},
		{"base url port too large", func(c *Config) { c.BaseURL = "http://x.example:99999999/" }, "port 99999999 is not a TCP port"},
		{"describedby port", func(c *Config) { c.DescribedBy = "https://x.example:65536/about" }, "describedby: \"https://x.example:65536/about\": port 65536"},
		{"no change list index, no archive", func(c *Config) { c.ChangeList.Index = false }, "changelist.index: false needs [archives] change_lists = true"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := valid()
			c.mutate(&cfg)
			err := cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Validate() = %v, want %q", err, c.want)
			}
		})
	}
	cfg := valid()
	if err := cfg.Validate(); err != nil {
		t.Errorf("valid config refused: %v", err)
	}
	cfg = valid()
	cfg.ChangeList.Index, cfg.Archives.ChangeLists = false, true
	if err := cfg.Validate(); err != nil {
		t.Errorf("index = false with the Change List Archive refused: %v", err)
	}
}

func TestPublishTargetsAreChecked(t *testing.T) {
	_, err := Parse(strings.NewReader("base_url = \"https://x.example/\"\n[publish]\ntargets = [\"netlfy\"]\n"), "rsgen.toml")
	if err == nil || !strings.Contains(err.Error(), `rsgen.toml:3: publish.targets: unknown target "netlfy"`) ||
		!strings.Contains(err.Error(), `did you mean "netlify"?`) {
		t.Fatalf("error %v, want the line, the target and the closest valid one", err)
	}
	_, err = Parse(strings.NewReader("[publish]\nhtml_links = true\n"), "rsgen.toml")
	if err == nil || !strings.Contains(err.Error(), `did you mean "html_link"?`) {
		t.Fatalf("error %v, want a suggestion of html_link", err)
	}
}

// TestByteSize: sizes are read exactly, in every unit, and one too large
// for a ByteSize is refused, whatever its unit, instead of wrapping around.
func TestByteSize(t *testing.T) {
	for in, want := range map[string]ByteSize{
		"1": 1, "1.5KiB": 1536, "2GB": 2e9, "7EiB": 7 << 60, "1PB": 1e15, "9223372036854775807": math.MaxInt64, "1.0000001kB": 1000,
	} {
		var b ByteSize
		if err := b.UnmarshalText([]byte(in)); err != nil || b != want {
			t.Errorf("%q: %d, %v; want %d", in, b, err, want)
		}
	}
	for in, want := range map[string]string{
		"99999999999999999999GiB": "too large", "9EiB": "too large", "8EiB": "too large", "9223372036854775808": "too large",
		"0": "at least one byte", "0.5": "at least one byte", "lots": "not a size", "-1": "not a size", "1.2.3MB": "not a size", "1ZiB": "not a size",
	} {
		var b ByteSize
		if err := b.UnmarshalText([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %d, %v; want an error saying %q", in, b, err, want)
		}
	}
}
