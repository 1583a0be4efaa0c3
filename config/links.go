package config

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rsgen/rsgen/layout"
)

// Archives configures the four archive capabilities of the ResourceSync
// Archives extension: documents that list earlier Resource Lists, Resource
// Dumps, Change Lists and Change Dumps.
type Archives struct {
	// ChangeLists publishes a Change List Archive of the closed Change
	// Lists (changelist-archive).
	ChangeLists bool `toml:"change_lists"`
	// ChangeDumps publishes a Change Dump Archive of the closed Change
	// Dumps (changedump-archive), in sets that publish a Change Dump.
	ChangeDumps bool `toml:"change_dumps"`
	// ResourceLists keeps the Resource List every SnapshotEvery under a
	// timestamped name and lists it in a Resource List Archive.
	ResourceLists bool `toml:"resource_lists"`
	// ResourceDumps does the same for the Resource Dump, in sets that
	// publish one.
	ResourceDumps bool `toml:"resource_dumps"`
	// SnapshotEvery is the least time between two archived Resource Lists
	// (and Resource Dumps) of a set.
	SnapshotEvery Duration `toml:"snapshot_every"`
	// Keep is how long, or how many, archived documents are kept.
	Keep Retention `toml:"keep"`
}

// Enabled reports whether any archive is published.
func (a *Archives) Enabled() bool {
	return a.ChangeLists || a.ChangeDumps || a.ResourceLists || a.ResourceDumps
}

// Retention is how long archived documents are kept: a duration ("365d",
// "720h"), a count of documents per archive (12), or forever (the zero
// value, written "forever" or 0).
type Retention struct {
	Age   time.Duration
	Count int
}

// Forever reports whether nothing is ever removed.
func (r Retention) Forever() bool { return r.Age == 0 && r.Count == 0 }

// UnmarshalTOML reads a duration string or a count.
func (r *Retention) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case int64:
		if v < 0 {
			return fmt.Errorf("a count of archived documents must not be negative: %d", v)
		}
		*r = Retention{Count: int(v)}
		return nil
	case string:
		if v == "forever" {
			*r = Retention{}
			return nil
		}
		d, err := parseDuration(v)
		if err != nil {
			return fmt.Errorf("not a retention (use a duration such as \"365d\", a count such as 12, or \"forever\"): %q", v)
		}
		*r = Retention{Age: d}
		return nil
	}
	return fmt.Errorf("not a retention (use a duration such as \"365d\", a count such as 12, or \"forever\"): %v", v)
}

// MarshalText writes the retention as it is configured.
func (r Retention) MarshalText() ([]byte, error) {
	switch {
	case r.Count > 0:
		return []byte(strconv.Itoa(r.Count)), nil
	case r.Age > 0:
		return []byte(r.Age.String()), nil
	}
	return []byte("forever"), nil
}

var daysPattern = regexp.MustCompile(`^(\d+)d$`)

// parseDuration reads a Go duration, or a whole number of days ("365d").
func parseDuration(s string) (time.Duration, error) {
	if m := daysPattern.FindStringSubmatch(s); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil || n > 100000 {
			return 0, fmt.Errorf("bad number of days %q", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err == nil && d < 0 {
		err = fmt.Errorf("negative duration %q", s)
	}
	return d, err
}

// SetLinks are the rules by which a set's entries link to related
// resources (§14). Each rule is computed from the files themselves: hash,
// length, type and modified of a linked resource come from its scan.
type SetLinks struct {
	// Mirrors are other places the set's resources are served (rel
	// "duplicate", §14.2).
	Mirrors []Mirror `toml:"mirror"`
	// Metadata pairs objects with the records that describe them
	// ("describedby" and "describes", §14.5).
	Metadata []Metadata `toml:"metadata"`
	// Alternates links files that share a stem in one folder (§14.3):
	// "alternate" (each links to the others) or "canonical" (each links
	// to the generic URI, the path without its extension); "" for none.
	Alternates Alternates `toml:"alternates"`
	// Collections give collection membership ("collection", §14.7).
	Collections []Collection `toml:"collection"`
	// Via declares the set republished from an origin: the base URL at
	// which the origin serves the set's folder ("via", §14.8).
	Via string `toml:"via"`
	// KeepVersions keeps every version of the set's resources under a
	// time-specific URI with a TimeMap per resource ("memento" and
	// "timemap", §14.6).
	KeepVersions bool `toml:"keep_versions"`
	// Patches publishes, for each update of a JSON resource, a JSON Patch
	// from the previous version (§14.4). It needs KeepVersions.
	Patches bool `toml:"patches"`
}

// Mirror is one mirror of a set.
type Mirror struct {
	// BaseURL is where the mirror serves what resource_base_url (or
	// base_url) serves here: a resource's mirror URI is BaseURL followed
	// by its path.
	BaseURL string `toml:"base_url"`
	// Pri orders mirrors, 1 first; 0 leaves the attribute out.
	Pri int `toml:"pri"`
}

// Metadata pairs objects and metadata records by the part of their paths
// that the one "*" of each pattern matches.
type Metadata struct {
	Objects string `toml:"objects"`
	Records string `toml:"records"`
	// Profile is the URI of the kind of metadata (a namespace, a schema).
	Profile string `toml:"profile"`
}

// Collection is a collection the matching resources belong to.
type Collection struct {
	// Href is the URI that identifies the collection.
	Href string `toml:"href"`
	// Match are globs, relative to the set's folder; a folder matches
	// everything inside it.
	Match []string `toml:"match"`
}

var (
	archiveKeys = []string{"change_lists", "change_dumps", "resource_lists", "resource_dumps", "snapshot_every", "keep"}
	setLinkKeys = []string{"mirror", "metadata", "alternates", "collection", "via", "keep_versions", "patches"}
	linkSubKeys = map[string][]string{"mirror": {"base_url", "pri"}, "metadata": {"objects", "records", "profile"}, "collection": {"href", "match"}}
)

// checkLinkValues checks the link rules of set i.
func (c *Config) checkLinkValues(i int, s *Set) error {
	if s.Name == path.Base(layout.ViewerPage) {
		return c.keyError("set.name", i, "set name %q is reserved for rsgen's document browser", s.Name)
	}
	if slices.Contains(layout.VersionDirs, s.Name) {
		return c.keyError("set.name", i, "set name %q is reserved for rsgen's versions (%s)", s.Name, strings.Join(layout.VersionDirs, ", "))
	}
	if s.Alternates != AlternatesOff && s.Alternates != AlternatesLink && s.Alternates != AlternatesCanonical {
		return c.keyError("set.alternates", i, "set %q: must be %q or %q, not %q", s.Name, AlternatesLink, AlternatesCanonical, s.Alternates)
	}
	if s.Patches && !s.KeepVersions {
		return c.keyError("set.patches", i, "set %q: patches need keep_versions = true: a patch applies to the previous version, which keep_versions publishes", s.Name)
	}
	mirrors, metadata, collections := c.nested(i)
	for j, m := range s.Mirrors {
		if m.Pri < 0 || m.Pri > 999999 {
			return c.keyError("set.mirror.pri", mirrors+j, "set %q: mirror %d: pri must be from 1 to 999999, not %d", s.Name, j+1, m.Pri)
		}
	}
	for j, m := range s.Metadata {
		for _, p := range []struct{ key, pattern string }{{"objects", m.Objects}, {"records", m.Records}} {
			if err := checkPairPattern(p.pattern); err != nil {
				return c.keyError("set.metadata."+p.key, metadata+j, "set %q: metadata %d: %v", s.Name, j+1, err)
			}
		}
	}
	for j, col := range s.Collections {
		if len(col.Match) == 0 {
			return c.keyError("set.collection.href", collections+j, "set %q: collection %d: match must name at least one folder or pattern", s.Name, j+1)
		}
		for _, p := range col.Match {
			if err := layout.CheckGlob(p); err != nil {
				return c.keyError("set.collection.match", collections+j, "set %q: collection %d: %v", s.Name, j+1, err)
			}
		}
	}
	return nil
}

// checkPairPattern checks a metadata pattern: a glob with exactly one "*",
// which pairs an object with its record.
func checkPairPattern(p string) error {
	if p == "" {
		return fmt.Errorf("pattern is missing")
	}
	if strings.Count(p, "*") != 1 || strings.ContainsAny(p, "?[") {
		return fmt.Errorf("pattern %q must hold exactly one \"*\" and no other wildcard: the \"*\" pairs objects with records", p)
	}
	return layout.CheckGlob(p)
}

// checkLinkURLs checks the URLs of the link rules of set i.
func (c *Config) checkLinkURLs(i int, s *Set) error {
	mirrors, metadata, collections := c.nested(i)
	for j, m := range s.Mirrors {
		if _, err := layout.ParseBaseURL(m.BaseURL); err != nil {
			return c.keyError("set.mirror.base_url", mirrors+j, "set %q: mirror %d: %v", s.Name, j+1, err)
		}
	}
	for j, m := range s.Metadata {
		if m.Profile != "" {
			if err := layout.CheckAbsoluteURL(m.Profile); err != nil {
				return c.keyError("set.metadata.profile", metadata+j, "set %q: metadata %d: %v", s.Name, j+1, err)
			}
		}
	}
	for j, col := range s.Collections {
		if err := layout.CheckAbsoluteURL(col.Href); err != nil {
			return c.keyError("set.collection.href", collections+j, "set %q: collection %d: %v", s.Name, j+1, err)
		}
	}
	if s.Via != "" {
		if _, err := layout.ParseBaseURL(s.Via); err != nil {
			return c.keyError("set.via", i, "set %q: %v", s.Name, err)
		}
	}
	return nil
}

// nested returns how many [[set.mirror]], [[set.metadata]] and
// [[set.collection]] tables the sets before set i hold: keyLine counts the
// tables of one name across the whole file.
func (c *Config) nested(i int) (mirrors, metadata, collections int) {
	for _, s := range c.Sets[:i] {
		mirrors += len(s.Mirrors)
		metadata += len(s.Metadata)
		collections += len(s.Collections)
	}
	return mirrors, metadata, collections
}
