package config

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestParseDeployTarget(t *testing.T) {
	for _, c := range []struct {
		in   string
		want DeployTarget
		err  string
	}{
		{in: "s3://bucket", want: DeployTarget{Bucket: "bucket"}},
		{in: "s3://my.bucket/site/v1/", want: DeployTarget{Bucket: "my.bucket", Prefix: "site/v1"}},
		{in: "file:///var/www/site", want: DeployTarget{Dir: "/var/www/site"}},
		{in: "file://localhost/var/www", want: DeployTarget{Dir: "/var/www"}},
		{in: "/srv/www/", want: DeployTarget{Dir: "/srv/www"}},
		{in: "www", want: DeployTarget{Dir: "/conf/www"}},
		{in: "s3://", err: "not a bucket name"},
		{in: "s3://bu cket/x", err: "not a bucket name"},
		{in: "s3://b/a/../../x", err: "clean folder path"},
		{in: "https://example.org/x", err: "deploy to s3://"},
		{in: "file://host/x", err: "deploy to s3://"},
	} {
		got, err := ParseDeployTarget(c.in, "/conf")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v; want an error with %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

func TestDeployTo(t *testing.T) {
	dir := t.TempDir()
	load := func(text string) *Config {
		t.Helper()
		cfg, err := Parse(strings.NewReader("base_url = \"https://x.example/\"\n"+text), "x.toml")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Dir = dir
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		return &cfg
	}
	cfg := load("[deploy]\nto = \"s3://b/p\"\nendpoint = \"http://127.0.0.1:9000\"\n")
	if got, err := cfg.DeployTo("", dir); err != nil || got != (DeployTarget{Bucket: "b", Prefix: "p"}) {
		t.Errorf("from the file: %+v, %v", got, err)
	}
	if got, err := cfg.DeployTo("www", "/work"); err != nil || got.Dir != "/work/www" {
		t.Errorf("--to overrides the file, relative to the working folder: %+v, %v", got, err)
	}
	if got, err := load("[deploy]\nto = \"www\"\n").DeployTo("", "/work"); err != nil || got.Dir != filepath.Join(dir, "www") {
		t.Errorf("a folder in the file is relative to the file's: %+v, %v", got, err)
	}
	for _, c := range []struct{ text, to, want string }{
		{"[deploy]\nendpoint = \"localhost:9000\"\n", "s3://b", "x.toml:3: deploy.endpoint:"},
		{"[deploy]\nmax_deletes = -1\n", "s3://b", "x.toml:3: deploy.max_deletes: must not be negative"},
		{"[deploy]\nto = \"ftp://x\"\n", "", "x.toml:3: deploy.to:"},
		{"", "", "no target"},
		{"", "public/www", "must not be, contain or be inside the output folder"},
		{"", ".", "must not be, contain or be inside"},
	} {
		_, err := load(c.text).DeployTo(c.to, dir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q, --to %q: %v; want %q", c.text, c.to, err, c.want)
		}
	}
	if _, err := Parse(strings.NewReader("[deploy]\ntoo = \"s3://b\"\n"), "x.toml"); err == nil || !strings.Contains(err.Error(), `did you mean "to"`) {
		t.Errorf("unknown key in [deploy]: %v", err)
	}
}
