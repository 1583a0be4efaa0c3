package config

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/notify"
	"github.com/rsgen/rsgen/rs"
)

// FileName is the configuration file rsgen looks for in the working folder.
const FileName = "rsgen.toml"

// Config is a complete rsgen configuration.
type Config struct {
	// Source is the folder of files to publish.
	Source string `toml:"source"`
	// Out is the folder the site is written to; it is hostable as it is.
	Out string `toml:"out"`
	// State is the folder of rsgen's state snapshot; never published.
	State string `toml:"state"`
	// BaseURL is the URL at which Out is served.
	BaseURL string `toml:"base_url"`
	// CopyResources places the resources in Out beside the documents
	// (hard-linked when possible). When false, ResourceBaseURL says where
	// the resources are served instead.
	CopyResources   bool   `toml:"copy_resources"`
	ResourceBaseURL string `toml:"resource_base_url"`
	// SpecVersion is "1.1" (default) or "1.0" for older destinations.
	SpecVersion SpecVersion `toml:"spec_version"`
	// Hashes are the published digest algorithms: md5, sha-1, sha-256.
	Hashes []rs.HashAlgorithm `toml:"hashes"`
	// Lastmod is "content" (when rsgen first saw the current content) or
	// "mtime" (the file's modification time).
	Lastmod LastmodSource `toml:"lastmod"`
	// DescribedBy is the URL of information about the Source, linked from
	// the Source Description.
	DescribedBy string `toml:"describedby"`
	// Exclude holds glob patterns of source paths never published.
	Exclude []string `toml:"exclude"`
	// IncludeDotfiles holds glob patterns of dotfiles and dot-folders that
	// are published even though dotfiles are excluded by default.
	IncludeDotfiles []string `toml:"include_dotfiles"`
	// FollowSymlinks follows symbolic links whose targets stay inside the
	// source folder; links pointing outside are skipped with a warning.
	FollowSymlinks bool `toml:"follow_symlinks"`
	// ChangeList configures Change List rotation.
	ChangeList ChangeList `toml:"changelist"`
	// Dumps configures Resource Dumps and Change Dumps.
	Dumps Dumps `toml:"dumps"`
	// Archives configures the archives of earlier documents.
	Archives Archives `toml:"archives"`
	// Sets are the sets of resources, one Capability List each.
	Sets []Set `toml:"set"`
	// Publish configures the hosting files and the discovery helpers.
	Publish Publish `toml:"publish"`
	Deploy  Deploy  `toml:"deploy"`
	// Notification configures push notifications over WebSub.
	Notification Notification `toml:"notification"`

	// Dir is the folder relative paths were resolved against.
	Dir string `toml:"-"`

	origin     origin          // the file the configuration came from, to locate errors
	overridden map[string]bool // keys whose file value a flag replaced
}

// origin is the text of a configuration file.
type origin struct {
	file string
	data []byte
}

// ChangeList configures when the open Change List is closed.
type ChangeList struct {
	// Rotate is the longest time a Change List stays open, e.g. "24h";
	// "0s" closes lists only at the size limits.
	Rotate Duration `toml:"rotate"`
	// Index publishes each set's Change List Index (changelist.xml) and
	// points the Capability List at it. Off, the Capability List points at
	// the open Change List itself, for clients that read a Change List
	// there and cannot read an index, and the closed lists are reachable
	// only through the Change List Archive, which must then be on.
	Index bool `toml:"index"`
}

// Dumps configures the ZIP packages of Resource Dumps (§11) and Change
// Dumps (§13).
type Dumps struct {
	// ResourceDump publishes every set's resources as ZIP packages.
	ResourceDump bool `toml:"resource_dump"`
	// ChangeDump publishes, for each build with changes, a ZIP package of
	// the resources it created or updated.
	ChangeDump bool `toml:"change_dump"`
	// PackageSize is the largest a Resource Dump package grows, e.g.
	// "1GiB"; a single larger file gets a package of its own.
	PackageSize ByteSize `toml:"package_size"`
	// Compression is "auto" (store already-compressed media types such as
	// images, PDF and ZIP; deflate the rest), "store" or "deflate".
	Compression Compression `toml:"compression"`
}

// Publish configures what rsgen writes beside the documents for the hosts
// that serve them, and for people and crawlers that find them.
type Publish struct {
	// Targets are the hosts to write configuration for (see Targets).
	Targets []Target `toml:"targets"`
	// Stylesheet publishes an XSL stylesheet and references it from every
	// document, so that a browser with XSLT shows a table. Off by default:
	// Chromium warns about XSLT on every such page and is removing it; the
	// document browser (Viewer) needs none.
	Stylesheet bool `toml:"stylesheet"`
	// Viewer publishes the document browser at resourcesync/index.html:
	// a page that shows every document of the Source in a browser.
	Viewer bool `toml:"viewer"`
	// Robots writes a robots.txt with a Sitemap line per Resource List.
	Robots bool `toml:"robots"`
	// HTMLLink injects <link rel="resourcesync"> into the <head> of the
	// HTML resources of each set.
	HTMLLink bool `toml:"html_link"`
	// Resources is how copy_resources places the resources in the output:
	// hard links where it can ("link", the default), copies, or clones
	// ("reflink", copies where the file system cannot clone).
	Resources Placement `toml:"resources"`
	// ShortCache is how long hosts may cache the documents that change
	// (Source Description, Capability Lists, Resource Lists, open Change
	// Lists).
	ShortCache Duration `toml:"short_cache"`
}

// publishKeys are the keys of [publish], for suggestions.
var publishKeys = []string{"targets", "stylesheet", "viewer", "robots", "html_link", "resources", "short_cache"}

// HasTarget reports whether target is among the configured targets.
func (p *Publish) HasTarget(target Target) bool { return slices.Contains(p.Targets, target) }

// Set is one set of resources.
type Set struct {
	Name        string   `toml:"name"`
	Path        string   `toml:"path"`
	Include     []string `toml:"include"`
	Exclude     []string `toml:"exclude"`
	DescribedBy string   `toml:"describedby"`
	// ResourceDump and ChangeDump override [dumps] for this set.
	ResourceDump *bool `toml:"resource_dump"`
	ChangeDump   *bool `toml:"change_dump"`
	// ChangeNotification and FrameworkNotification override
	// [notification] change and framework for this set.
	ChangeNotification    *bool `toml:"change_notification"`
	FrameworkNotification *bool `toml:"framework_notification"`
	// SetLinks are the set's link rules (links.go).
	SetLinks
}

// WantsResourceDump reports whether the set publishes a Resource Dump.
func (s *Set) WantsResourceDump(d *Dumps) bool {
	if s.ResourceDump != nil {
		return *s.ResourceDump
	}
	return d.ResourceDump
}

// WantsChangeDump reports whether the set publishes a Change Dump.
func (s *Set) WantsChangeDump(d *Dumps) bool {
	if s.ChangeDump != nil {
		return *s.ChangeDump
	}
	return d.ChangeDump
}

// ByteSize is a number of bytes written as a string with a unit: "512MiB",
// "1GiB", "2GB", "100kB". Every size rsgen reads, in the configuration and
// on the command line, is parsed here.
type ByteSize int64

var byteUnits = map[string]int64{
	"": 1, "B": 1, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15, "EB": 1e18,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50, "EiB": 1 << 60,
}

// maxByteSize is the largest size a ByteSize holds, 8 EiB less a byte.
var maxByteSize = new(big.Rat).SetInt64(math.MaxInt64)

// UnmarshalText reads a size such as "1GiB" or "1.5MB", exactly (a
// fraction of a byte is dropped), and refuses one that is not a size, is
// less than a byte, or is larger than a ByteSize holds.
func (b *ByteSize) UnmarshalText(text []byte) error {
	s := strings.TrimSpace(string(text))
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(s)
	}
	n, isNumber := new(big.Rat).SetString(s[:i])
	unit, ok := byteUnits[strings.TrimSpace(s[i:])]
	if i == 0 || !isNumber || !ok {
		return fmt.Errorf("not a size (use a string such as \"1GiB\" or \"500MB\"): %q", text)
	}
	n.Mul(n, new(big.Rat).SetInt64(unit))
	switch {
	case n.Cmp(big.NewRat(1, 1)) < 0:
		return fmt.Errorf("not a size of at least one byte: %q", text)
	case n.Cmp(maxByteSize) > 0:
		return fmt.Errorf("too large: %q (the largest size is 8EiB less a byte)", text)
	}
	*b = ByteSize(new(big.Int).Quo(n.Num(), n.Denom()).Int64())
	return nil
}

// MarshalText writes the size in the largest binary unit that divides it,
// as UnmarshalText reads it.
func (b ByteSize) MarshalText() ([]byte, error) {
	for _, unit := range []string{"EiB", "PiB", "TiB", "GiB", "MiB", "KiB"} {
		if n := byteUnits[unit]; b != 0 && int64(b)%n == 0 {
			return []byte(strconv.FormatInt(int64(b)/n, 10) + unit), nil
		}
	}
	return []byte(strconv.FormatInt(int64(b), 10)), nil
}

// Duration is a time.Duration written as a string ("24h", "300ms", "30d").
type Duration struct{ time.Duration }

// UnmarshalText reads a duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := parseDuration(string(b))
	if err != nil {
		if strings.HasPrefix(string(b), "-") {
			return fmt.Errorf("duration must not be negative: %q", b)
		}
		return fmt.Errorf("not a duration (use a string such as \"24h\" or \"30d\"): %q", b)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration as a string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// DefaultSetName is the name of the one set used when none is configured.
const DefaultSetName = "default"

// Default returns the configuration used where the file and the flags are
// silent. Paths are relative to the configuration file's folder.
func Default() Config {
	return Config{
		Source:          "site",
		Out:             "public",
		State:           ".rsgen",
		CopyResources:   true,
		SpecVersion:     Spec11,
		Hashes:          []rs.HashAlgorithm{rs.SHA256},
		Lastmod:         LastmodContent,
		IncludeDotfiles: []string{".well-known"},
		ChangeList:      ChangeList{Rotate: Duration{24 * time.Hour}, Index: true},
		Publish:         Publish{Viewer: true, Resources: PlaceLink, ShortCache: Duration{5 * time.Minute}},
		Dumps:           Dumps{PackageSize: 1 << 30, Compression: CompressAuto},
		Archives:        Archives{SnapshotEvery: Duration{30 * 24 * time.Hour}},
		Notification:    Notification{Change: true, Ping: notify.PingResourceSync},
	}
}

// Error is a configuration error, located in the file when it comes from
// one. The CLI exits with the usage code on it.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	case e.File != "":
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return e.Msg
}

// Load reads the configuration file at path over the defaults and resolves
// relative paths against the file's folder. It does not validate; call
// Validate after applying flags.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return Config{}, &Error{File: path, Msg: "cannot read the configuration file: " + err.Error()}
	}
	cfg, err := Parse(bytes.NewReader(data), path)
	if err != nil {
		return Config{}, err
	}
	abs, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	cfg.Dir = abs
	return cfg, nil
}

// Parse decodes a configuration from r over the defaults, rejecting unknown
// keys, and checks its values. name is used in error messages.
func Parse(r io.Reader, name string) (Config, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", name, err)
	}
	cfg := Default()
	cfg.origin = origin{file: name, data: data}
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&cfg)
	if err != nil {
		return Config{}, decodeError(name, data, err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		key := undecoded[0]
		return Config{}, &Error{File: name, Line: keyLine(data, key, -1), Msg: fmt.Sprintf("unknown key %q%s", key.String(), suggest(key))}
	}
	if err := cfg.checkValues(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

var typeErrorPattern = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

func decodeError(name string, data []byte, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		msg := pe.Message
		if pe.LastKey != "" {
			msg = pe.LastKey + ": " + msg
		}
		return &Error{File: name, Line: pe.Position.Line, Msg: msg}
	}
	// Type mismatches come as plain errors: "toml: line N (last key "k"): msg".
	if m := typeErrorPattern.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: name, Line: line, Msg: m[2] + ": " + plainTypeError(m[3], valueOn(data, line))}
	}
	return &Error{File: name, Msg: strings.TrimPrefix(err.Error(), "toml: ")}
}

var incompatible = regexp.MustCompile(`^incompatible types: TOML value has type (\w+); destination has type (\w+)$`)

// plainTypeError says in plain words what the TOML decoder calls
// incompatible types: what the key wants, and the value it got.
func plainTypeError(msg, value string) string {
	m := incompatible.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	want := map[string]string{
		"boolean": "true or false",
		"slice":   `a list, such as ["a", "b"]`,
		"string":  "a string in quotes",
		"int64":   "a whole number",
		"int":     "a whole number",
		"struct":  "a table",
		"map":     "a table",
	}[m[2]]
	if want == "" {
		return msg
	}
	if value == "" {
		return "expected " + want + ", got a " + m[1]
	}
	return "expected " + want + ", got " + value
}

// valueOn returns the value assigned on a line of the file, as written.
func valueOn(data []byte, line int) string {
	lines := strings.Split(string(data), "\n")
	if line < 1 || line > len(lines) {
		return ""
	}
	_, v, ok := strings.Cut(lines[line-1], "=")
	if !ok {
		return ""
	}
	return strings.TrimSpace(v)
}

// keyLine finds the line on which the last element of key is assigned, in
// the table the key belongs to: in the occurrence-th (from 0) of an array
// of tables, or in any of them when occurrence is -1. It returns 0 when it
// cannot tell.
func keyLine(data []byte, key []string, occurrence int) int {
	if len(key) == 0 {
		return 0
	}
	table := strings.Join(key[:len(key)-1], ".")
	last := key[len(key)-1]
	assign := regexp.MustCompile(`^\s*"?` + regexp.QuoteMeta(last) + `"?\s*=`)
	header := regexp.MustCompile(`^\s*\[\[?\s*([^\]]+?)\s*\]\]?`)
	current, seen := "", -1
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if m := header.FindStringSubmatch(line); m != nil {
			current = m[1]
			if current == table {
				seen++
			}
			continue
		}
		if current == table && (occurrence < 0 || seen == occurrence) && assign.MatchString(line) {
			return n
		}
	}
	return headerLine(data, key, occurrence)
}

// headerLine finds the line of the table header [key] (or the
// occurrence-th [[key]]) when the key names a table rather than a value,
// or the table holding a key that is missing from it (a set without a
// name). It returns 0 when there is none.
func headerLine(data []byte, key []string, occurrence int) int {
	header := regexp.MustCompile(`^\s*\[\[?\s*([^\]]+?)\s*\]\]?`)
	whole, parent := strings.Join(key, "."), strings.Join(key[:len(key)-1], ".")
	seen := -1
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		m := header.FindStringSubmatch(sc.Text())
		switch {
		case m == nil:
		case m[1] == whole:
			return n
		case m[1] == parent && parent != "":
			if seen++; occurrence >= 0 && seen == occurrence {
				return n
			}
		}
	}
	return 0
}

// suggest names the closest valid key to an unknown one.
func suggest(key toml.Key) string {
	valid := topKeys
	switch {
	case len(key) > 2 && key[0] == "set":
		valid = linkSubKeys[key[1]]
	case len(key) > 1 && key[0] == "set":
		valid = append(setKeys, setLinkKeys...)
	case len(key) > 1 && key[0] == "archives":
		valid = archiveKeys
	case len(key) > 1 && key[0] == "changelist":
		valid = []string{"rotate", "index"}
	case len(key) > 1 && key[0] == "dumps":
		valid = []string{"resource_dump", "change_dump", "package_size", "compression"}
	case len(key) > 1 && key[0] == "publish":
		valid = publishKeys
	case len(key) > 1 && key[0] == "deploy":
		valid = deployKeys
	case len(key) > 1 && key[0] == "notification":
		valid = notificationKeys
	}
	return Closest(key[len(key)-1], valid)
}

// Closest returns a hint naming the word of valid closest to word, such as
// ` (did you mean "base_url"?)`, or "" when none is close. The CLI uses it
// for commands too.
func Closest(word string, valid []string) string {
	best, bestDist := "", 3
	for _, v := range valid {
		if d := editDistance(word, v); d < bestDist {
			best, bestDist = v, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

var (
	topKeys = []string{"source", "out", "state", "base_url", "copy_resources", "resource_base_url",
		"spec_version", "hashes", "lastmod", "describedby", "exclude", "include_dotfiles", "follow_symlinks", "changelist", "dumps", "archives", "set", "publish", "deploy", "notification"}
	setKeys = []string{"name", "path", "include", "exclude", "describedby", "resource_dump", "change_dump", "change_notification", "framework_notification"}
)

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// Override records that a flag replaced the file's value of key, so that
// an error about the key is not blamed on the file's line.
func (c *Config) Override(key string) {
	if c.overridden == nil {
		c.overridden = map[string]bool{}
	}
	c.overridden[key] = true
}

// keyError returns an Error about the value of key (dotted), located in
// the configuration file when the value comes from there. set is the index of the
// [[set]] table the key belongs to, or -1.
func (c *Config) keyError(key string, set int, format string, args ...any) error {
	e := &Error{Msg: key + ": " + fmt.Sprintf(format, args...)}
	if c.origin.file != "" && !c.overridden[key] {
		if line := keyLine(c.origin.data, strings.Split(key, "."), set); line > 0 {
			e.File, e.Line = c.origin.file, line
		}
	}
	return e
}

var setNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// checkPlacement checks [publish] resources, which says how copy_resources
// places the resources: a copy or a clone is refused without it, since
// nothing would be placed.
func (c *Config) checkPlacement() error {
	if !slices.Contains(Placements, c.Publish.Resources) {
		names := make([]string, len(Placements))
		for i, p := range Placements {
			names[i] = string(p)
		}
		return c.keyError("publish.resources", -1, "must be \"link\", \"copy\" or \"reflink\", not %q%s", c.Publish.Resources, Closest(string(c.Publish.Resources), names))
	}
	if !c.CopyResources && c.Publish.Resources != PlaceLink {
		return c.keyError("publish.resources", -1, "resources = %q says how to place the resources in the output, and copy_resources = false places none: remove one of the two", c.Publish.Resources)
	}
	return nil
}

// checkValues checks the values that do not depend on flags.
func (c *Config) checkValues() error {
	if c.SpecVersion != Spec11 && c.SpecVersion != Spec10 {
		return c.keyError("spec_version", -1, "must be \"1.1\" or \"1.0\", not %q", c.SpecVersion)
	}
	if len(c.Hashes) == 0 {
		return c.keyError("hashes", -1, "must name at least one of %s", rs.HashNames())
	}
	for i, h := range c.Hashes {
		if h >= rs.NumHashAlgorithms {
			return c.keyError("hashes", -1, "unknown algorithm %d (use %s)", h, rs.HashNames())
		}
		if slices.Contains(c.Hashes[:i], h) {
			return c.keyError("hashes", -1, "%q is named twice", h)
		}
	}
	if !slices.Contains([]Compression{CompressAuto, CompressStore, CompressDeflate}, c.Dumps.Compression) {
		return c.keyError("dumps.compression", -1, "must be \"auto\", \"store\" or \"deflate\", not %q", c.Dumps.Compression)
	}
	if c.Lastmod != LastmodContent && c.Lastmod != LastmodMtime {
		return c.keyError("lastmod", -1, "must be \"content\" or \"mtime\", not %q", c.Lastmod)
	}
	if c.Lastmod == LastmodMtime && c.SpecVersion == Spec10 {
		return c.keyError("lastmod", -1, "lastmod = \"mtime\" cannot be combined with spec_version = \"1.0\": 1.0 Change Lists carry the change time in lastmod, which must equal the lastmod of the Resource List; use lastmod = \"content\"")
	}
	for key, patterns := range map[string][]string{"exclude": c.Exclude, "include_dotfiles": c.IncludeDotfiles} {
		for _, p := range patterns {
			if err := layout.CheckGlob(p); err != nil {
				return c.keyError(key, -1, "%v", err)
			}
		}
	}
	for _, t := range c.Publish.Targets {
		if t == "s3" { // a target of earlier versions
			return c.keyError("publish.targets", -1, "the s3 target is retired: publish with rsgen deploy --to s3://BUCKET/PREFIX, which uploads in the right order and sets Content-Type and Cache-Control itself")
		}
		if !slices.Contains(Targets, t) {
			names := make([]string, len(Targets))
			for i, t := range Targets {
				names[i] = string(t)
			}
			return c.keyError("publish.targets", -1, "unknown target %q (use %s)%s", t, strings.Join(names, ", "), Closest(string(t), names))
		}
	}
	if err := c.checkPlacement(); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, s := range c.Sets {
		if s.Name == "" {
			return c.keyError("set.name", i, "set %d has no name: give it one, such as name = \"articles\" (lowercase letters, digits, '.', '_' or '-', starting with a letter or digit)", i+1)
		}
		if !setNamePattern.MatchString(s.Name) {
			return c.keyError("set.name", i, "set %d: name %q must be lowercase letters, digits, '.', '_' or '-', starting with a letter or digit", i+1, s.Name)
		}
		if seen[s.Name] {
			return c.keyError("set.name", i, "set name %q is used twice", s.Name)
		}
		seen[s.Name] = true
		for key, patterns := range map[string][]string{"set.include": s.Include, "set.exclude": s.Exclude} {
			for _, p := range patterns {
				if err := layout.CheckGlob(p); err != nil {
					return c.keyError(key, i, "set %d: %v", i+1, err)
				}
			}
		}
		if s.Path != "" && (filepath.IsAbs(s.Path) || strings.HasPrefix(filepath.Clean(s.Path), "..")) {
			return c.keyError("set.path", i, "set %q: path %q must be relative to the source folder", s.Name, s.Path)
		}
		if err := c.checkLinkValues(i, &c.Sets[i]); err != nil {
			return err
		}
	}
	if (c.Archives.ResourceLists || c.Archives.ResourceDumps) && c.Archives.SnapshotEvery.Duration <= 0 {
		return c.keyError("archives.snapshot_every", -1, "must be a positive duration such as \"720h\" when resource_lists or resource_dumps is on")
	}
	if !c.ChangeList.Index && !c.Archives.ChangeLists {
		return c.keyError("changelist.index", -1, "false needs [archives] change_lists = true: without the Change List Index, the closed Change Lists are reachable only through the Change List Archive")
	}
	return c.checkNotification()
}

// Validate checks the whole configuration after flags were applied and
// resolves relative paths against Dir.
func (c *Config) Validate() error {
	if err := c.checkValues(); err != nil {
		return err
	}
	if err := c.checkURLs(); err != nil {
		return err
	}
	for _, p := range []*string{&c.Source, &c.Out, &c.State} {
		if !filepath.IsAbs(*p) {
			*p = filepath.Join(c.Dir, *p)
		}
		*p = filepath.Clean(*p)
	}
	return c.checkFolders()
}

func (c *Config) checkURLs() error {
	if c.BaseURL == "" {
		e := &Error{Msg: "base_url is not set (set it in rsgen.toml or pass --base-url)"}
		if line := commentedLine(c.origin.data, "base_url"); c.origin.file != "" && line > 0 {
			e.File, e.Line = c.origin.file, line
			e.Msg = "base_url is not set: uncomment this line and set it to the URL where the output folder will be served (or pass --base-url)"
		}
		return e
	}
	if _, err := layout.ParseBaseURL(c.BaseURL); err != nil {
		return c.keyError("base_url", -1, "%v", err)
	}
	if !c.CopyResources && c.ResourceBaseURL == "" {
		return c.keyError("copy_resources", -1, "resource_base_url must be set when copy_resources = false")
	}
	if c.ResourceBaseURL != "" {
		if _, err := layout.ParseBaseURL(c.ResourceBaseURL); err != nil {
			return c.keyError("resource_base_url", -1, "%v", err)
		}
	}
	if c.DescribedBy != "" {
		if err := layout.CheckAbsoluteURL(c.DescribedBy); err != nil {
			return c.keyError("describedby", -1, "%v", err)
		}
	}
	for i, s := range c.Sets {
		if s.DescribedBy != "" {
			if err := layout.CheckAbsoluteURL(s.DescribedBy); err != nil {
				return c.keyError("set.describedby", i, "set %d: %v", i+1, err)
			}
		}
		if err := c.checkLinkURLs(i, &c.Sets[i]); err != nil {
			return err
		}
	}
	return nil
}

// commentedLine returns the line on which key is assigned in a comment,
// as rsgen init writes base_url, or 0.
func commentedLine(data []byte, key string) int {
	re := regexp.MustCompile(`^\s*#\s*` + regexp.QuoteMeta(key) + `\s*=`)
	for n, line := range strings.Split(string(data), "\n") {
		if re.MatchString(line) {
			return n + 1
		}
	}
	return 0
}

// CheckSource refuses, after Validate, a source folder that is not there
// or not a folder, naming the line that sets it: the commands that build
// call it.
func (c *Config) CheckSource() error {
	info, err := os.Stat(c.Source)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return c.keyError("source", -1, "the source folder %s does not exist: create it, or set source to the folder of files to publish", c.Source)
	case err == nil && !info.IsDir():
		return c.keyError("source", -1, "the source %s is not a folder", c.Source)
	}
	return nil
}

// checkFolders refuses an output folder that would publish into, or over,
// the source, and a state folder that would be published or would hold
// the source. Folders are compared by their real paths, so that a symbolic
// link (out pointing at the source, say) cannot hide an overlap.
func (c *Config) checkFolders() error {
	src, out, state := realPath(c.Source), realPath(c.Out), realPath(c.State)
	if layout.Within(out, src) || layout.Within(src, out) {
		return &Error{Msg: fmt.Sprintf("output folder %s must not be, contain or be inside the source folder %s%s", c.Out, c.Source, resolvedNote(c.Out, out, c.Source, src))}
	}
	if layout.Within(state, out) || layout.Within(out, state) {
		return &Error{Msg: fmt.Sprintf("state folder %s must not be, contain or be inside the output folder %s: it would be published%s", c.State, c.Out, resolvedNote(c.State, state, c.Out, out))}
	}
	if layout.Within(src, state) {
		return &Error{Msg: fmt.Sprintf("state folder %s must not be or contain the source folder %s%s", c.State, c.Source, resolvedNote(c.State, state, c.Source, src))}
	}
	return nil
}

// realPath returns the absolute path p with every symbolic link of its
// longest existing prefix resolved; the rest, not yet created, is kept.
func realPath(p string) string {
	rest := ""
	for dir := p; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if filepath.Dir(dir) == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// resolvedNote says where symbolic links led, when they did.
func resolvedNote(a, realA, b, realB string) string {
	if a == realA && b == realB {
		return ""
	}
	return fmt.Sprintf(" (through symbolic links: %s is %s, %s is %s)", a, realA, b, realB)
}

// SetsOrDefault returns the configured sets, or the one set that covers the
// whole source tree when none is configured.
func (c *Config) SetsOrDefault() []Set {
	if len(c.Sets) == 0 {
		return []Set{{Name: DefaultSetName}}
	}
	return c.Sets
}
