package config

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/rsgen/rsgen/layout"
)

// Deploy configures `rsgen deploy`: where the output is published.
type Deploy struct {
	// To is where to publish: "s3://bucket" or "s3://bucket/prefix", or a
	// web server's document root, "file:///var/www/site" or a folder
	// (relative to the configuration file's folder).
	To string `toml:"to"`
	// Endpoint is the URL of an S3-compatible service; empty takes the
	// AWS SDK's own (AWS_ENDPOINT_URL, the profile, else AWS).
	Endpoint string `toml:"endpoint"`
	// Region overrides AWS_REGION and the profile's.
	Region string `toml:"region"`
	// MaxDeletes fails a deploy that would delete more objects than this,
	// before it writes anything; unset, there is no limit.
	MaxDeletes *int `toml:"max_deletes"`
	// DeleteGrace keeps an object that left the output this long before
	// deleting it, so that caches expire first ("1h"; "0s" deletes at once).
	DeleteGrace Duration `toml:"delete_grace"`
}

// deployKeys are the keys of [deploy], for suggestions.
var deployKeys = []string{"to", "endpoint", "region", "max_deletes", "delete_grace"}

// DeployTarget is where a deploy publishes: a bucket (Bucket is set) or a
// folder (Dir, absolute).
type DeployTarget struct {
	Bucket, Prefix string
	Dir            string
}

// String gives the target as a URL.
func (t DeployTarget) String() string {
	if t.Bucket != "" {
		return "s3://" + path.Join(t.Bucket, t.Prefix)
	}
	return "file://" + t.Dir
}

var bucketPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$`)

// ParseDeployTarget reads a target: "s3://bucket/prefix", "file:///path",
// or a path, made absolute against dir when relative.
func ParseDeployTarget(s, dir string) (DeployTarget, error) {
	if rest, ok := strings.CutPrefix(s, "s3://"); ok {
		bucket, prefix, _ := strings.Cut(rest, "/")
		if at := strings.LastIndexByte(bucket, '@'); at >= 0 {
			return DeployTarget{}, fmt.Errorf("%q: %w", "s3://"+path.Join(bucket[at+1:], prefix), ErrCredentials)
		}
		if !bucketPattern.MatchString(bucket) {
			return DeployTarget{}, fmt.Errorf("%q: %q is not a bucket name", s, bucket)
		}
		prefix = strings.Trim(prefix, "/")
		if prefix != "" && (path.Clean(prefix) != prefix || prefix == ".." || strings.HasPrefix(prefix, "../")) {
			return DeployTarget{}, fmt.Errorf("%q: the prefix %q must be a clean folder path", s, prefix)
		}
		return DeployTarget{Bucket: bucket, Prefix: prefix}, nil
	}
	p := s
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err == nil && u.User != nil {
			u.User = nil
			return DeployTarget{}, fmt.Errorf("%q: %w", u.String(), ErrCredentials)
		}
		if err != nil || u.Scheme != "file" || u.Host != "" && u.Host != "localhost" || u.RawQuery != "" || u.Fragment != "" {
			return DeployTarget{}, fmt.Errorf("%q: deploy to s3://bucket/prefix, file:///path/to/folder or a folder", s)
		}
		p = u.Path
	}
	if p == "" {
		return DeployTarget{}, fmt.Errorf("%q: no folder", s)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return DeployTarget{Dir: filepath.Clean(p)}, nil
}

// DeployTo checks [deploy] of a validated configuration and returns its
// target, or with to (a --to flag, relative to the working folder wd)
// instead of [deploy] to. A folder must not be, contain, or be inside the
// source, output or state folder. Errors about the file's values name its
// line.
func (c *Config) DeployTo(to, wd string) (DeployTarget, error) {
	d := &c.Deploy
	if d.Endpoint != "" {
		if err := CheckEndpoint(d.Endpoint); err != nil {
			return DeployTarget{}, c.keyError("deploy.endpoint", -1, "%v", err)
		}
	}
	if d.MaxDeletes != nil {
		if err := CheckMaxDeletes(*d.MaxDeletes); err != nil {
			return DeployTarget{}, c.keyError("deploy.max_deletes", -1, "%v", err)
		}
	}
	var t DeployTarget
	var err error
	switch {
	case to != "":
		if t, err = ParseDeployTarget(to, wd); err != nil {
			return DeployTarget{}, &Error{Msg: "--to " + err.Error()}
		}
	case d.To != "":
		if t, err = ParseDeployTarget(d.To, c.Dir); err != nil {
			return DeployTarget{}, c.keyError("deploy.to", -1, "%v", err)
		}
	default:
		return DeployTarget{}, &Error{Msg: "no target: give --to s3://bucket/prefix or --to file:///path, or set to in [deploy]"}
	}
	if t.Dir != "" {
		real := realPath(t.Dir)
		for _, f := range []struct{ name, dir string }{{"source", c.Source}, {"output", c.Out}, {"state", c.State}} {
			if other := realPath(f.dir); layout.Within(real, other) || layout.Within(other, real) {
				return DeployTarget{}, &Error{Msg: fmt.Sprintf("deploy target %s must not be, contain or be inside the %s folder %s", t.Dir, f.name, f.dir)}
			}
		}
	}
	return t, nil
}

// CheckMaxDeletes checks a limit of deletes, from the file or the command
// line, which say it in the same words: no limit is no value.
func CheckMaxDeletes(n int) error {
	if n < 0 {
		return errors.New("must not be negative (for no limit, leave it out)")
	}
	return nil
}

// ErrCredentials refuses a URL that holds credentials, which rsgen would
// print in its messages and summaries: it never says the URL.
var ErrCredentials = errors.New("the URL holds credentials (user:password@), which rsgen takes from no URL, " +
	"lest it print them: give S3 credentials to the AWS SDK (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile, a role)")

// CheckEndpoint checks an S3 endpoint: an absolute http or https URL,
// without credentials.
func CheckEndpoint(s string) error {
	if strings.Contains(s, "@") {
		return ErrCredentials // whatever else is wrong with it: it is not said
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http:// or https:// URL", s)
	}
	return nil
}
