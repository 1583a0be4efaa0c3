package destination

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/rsgen/rsgen/layout"
)

// tempPrefix starts the names of the files a sync writes before it
// renames them into place, beside their place so that the rename stays
// in one folder. Every one is renamed or removed before the sync ends; a
// killed sync's are removed by the next. No resource may take a name
// that starts with layout.TempPrefix.
const tempPrefix = layout.TempPrefix + "sync-"

// Limits of the names a Linux file system holds: a name of at most 255
// bytes, a path of at most 4096 with its terminating NUL.
const (
	maxNameBytes = 255
	maxPathBytes = 4095
)

// errOtherHost is returned for a resource on another host than the
// Source's, which is skipped unless Options.OtherHosts.
var errOtherHost = errors.New("on another host")

// RefusedError reports a resource whose URI cannot be mirrored as a file
// of DIR: it is never written anywhere else.
type RefusedError struct {
	Loc    string
	Reason string
}

func (e *RefusedError) Error() string { return fmt.Sprintf("%s: not mirrored: %s", e.Loc, e.Reason) }

// mapper turns the URI of a resource into its path in DIR: the URI's
// path under the Source's base URL, percent-decoded byte for byte, or,
// with otherHosts, HOST/path for a resource on another host.
type mapper struct {
	base       *url.URL
	otherHosts bool
}

func newMapper(base string, otherHosts bool) (*mapper, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("base URL %q: %w", base, err)
	}
	return &mapper{base: u, otherHosts: otherHosts}, nil
}

// path returns the path in DIR of the resource at loc, errOtherHost, or a
// *RefusedError saying why it cannot be mirrored.
func (m *mapper) path(loc string) (string, error) {
	refuse := func(reason string) (string, error) { return "", &RefusedError{Loc: loc, Reason: reason} }
	u, err := url.Parse(loc)
	switch {
	case err != nil:
		return refuse("not a URI: " + errors.Unwrap(err).Error())
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return refuse("not an absolute http:// or https:// URI")
	case u.User != nil:
		return refuse("it carries user information")
	case strings.ContainsAny(loc, "?#"):
		return refuse("a URI with a query or a fragment names no file")
	}
	var rel string
	switch {
	case sameOrigin(u, m.base) && strings.HasPrefix(u.Path, m.base.Path):
		rel = u.Path[len(m.base.Path):]
	case !m.otherHosts:
		return "", errOtherHost
	default:
		host := strings.ToLower(u.Host)
		if strings.Trim(host, "abcdefghijklmnopqrstuvwxyz0123456789.-:[]") != "" || strings.Trim(host, ".") == "" {
			return refuse(fmt.Sprintf("the host %q cannot name a folder", u.Host))
		}
		rel = host + u.Path
	}
	if reason := unfitPath(rel); reason != "" {
		return refuse(reason)
	}
	return rel, nil
}

// unfitPath says why the decoded path rel cannot be a file of DIR, or "".
func unfitPath(rel string) string {
	switch {
	case rel == "" || strings.HasSuffix(rel, "/"):
		return "it names a folder, not a file"
	case strings.IndexByte(rel, 0) >= 0:
		return "its path decodes to a NUL byte, which no file name can hold"
	case !layout.Clean(rel):
		return fmt.Sprintf("its path %q decodes to empty, \".\" or \"..\" segments (a way out of DIR)", rel)
	case len(rel) > maxPathBytes:
		return fmt.Sprintf("its path is %d bytes long; the file system holds at most %d", len(rel), maxPathBytes)
	}
	for seg := range strings.SplitSeq(rel, "/") {
		switch {
		case len(seg) > maxNameBytes:
			return fmt.Sprintf("its name %.40q… is %d bytes long; the file system holds at most %d", seg, len(seg), maxNameBytes)
		case strings.HasPrefix(seg, layout.TempPrefix):
			return fmt.Sprintf("%q starts with %s, the names of rsgen's temporary files", seg, layout.TempPrefix)
		}
	}
	return ""
}

// sameOrigin reports whether a and b have the same scheme, host and port.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(hostPort(a), hostPort(b))
}

// hostPort returns u's host with its port, the scheme's default made
// explicit.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if strings.EqualFold(u.Scheme, "https") {
		return u.Host + ":443"
	}
	return u.Host + ":80"
}
