package config

// The settings that take one of a few words are typed, so that the code
// that acts on them compares constants, never strings: a misspelt constant
// does not compile, where a misspelt string silently takes the other branch.

// SpecVersion is the ResourceSync version the documents are written for.
type SpecVersion string

const (
	Spec11 SpecVersion = "1.1" // the default
	// Spec10 writes documents ResourceSync 1.0 Destinations accept: no
	// datetime attribute, the change time in lastmod.
	Spec10 SpecVersion = "1.0"
)

// LastmodSource says where a resource's lastmod comes from.
type LastmodSource string

const (
	// LastmodContent is when rsgen first saw the current content.
	LastmodContent LastmodSource = "content"
	// LastmodMtime is the file's modification time.
	LastmodMtime LastmodSource = "mtime"
)

// Compression says how dump packages store their bitstreams.
type Compression string

const (
	// CompressAuto stores media that are compressed already and deflates
	// the rest.
	CompressAuto    Compression = "auto"
	CompressStore   Compression = "store"
	CompressDeflate Compression = "deflate"
)

// Alternates says how files that share a stem in one folder are linked.
type Alternates string

const (
	AlternatesOff Alternates = ""
	// AlternatesLink links each to the others (rel="alternate").
	AlternatesLink Alternates = "alternate"
	// AlternatesCanonical links each to the stem's generic URI
	// (rel="canonical"), for hosts that negotiate content.
	AlternatesCanonical Alternates = "canonical"
)

// Target is a host that [publish] targets writes configuration for.
type Target string

const (
	TargetGitHubPages     Target = "github-pages"
	TargetNetlify         Target = "netlify"
	TargetCloudflarePages Target = "cloudflare-pages"
	TargetNginx           Target = "nginx"
	TargetApache          Target = "apache"
)

// Targets lists the hosting targets [publish] targets accepts.
var Targets = []Target{TargetGitHubPages, TargetNetlify, TargetCloudflarePages, TargetNginx, TargetApache}

// Placement says how resources are placed in the output folder
// (copy_resources = true places them; [publish] resources says how).
type Placement string

const (
	// PlaceLink hard-links each resource to its source file where the two
	// share a file system, and copies it otherwise: no second copy on
	// disk, but a source file rewritten in place changes the output with
	// it, before any build.
	PlaceLink Placement = "link"
	// PlaceCopy copies each resource: the output changes only with a
	// build, at the cost of a second copy on disk.
	PlaceCopy Placement = "copy"
	// PlaceReflink clones each resource where the file system can (Btrfs,
	// XFS, bcachefs, recent ZFS): a copy that shares its blocks until one
	// side changes. Elsewhere it copies.
	PlaceReflink Placement = "reflink"
)

// Placements lists the placements [publish] resources accepts.
var Placements = []Placement{PlaceLink, PlaceCopy, PlaceReflink}
