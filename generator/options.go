package generator

import (
	"time"

	"github.com/rsgen/rsgen/sink"
	"github.com/rsgen/rsgen/snapshot"
)

// Options configures one build beyond the configuration.
type Options struct {
	// Now is the build's time. The caller takes it from --now,
	// SOURCE_DATE_EPOCH or the clock; the generator never reads a clock
	// for anything it publishes.
	Now time.Time
	// Verify re-reads every file instead of trusting unchanged stat.
	Verify bool
	// ConfigFile is the configuration file, left out of the scan when it
	// lies inside the source.
	ConfigFile string
	// Notify, when set, receives progress and warnings as they happen. It
	// may be called from several goroutines at once.
	Notify func(Note)

	// StateFromOutput rebuilds the state from the output folder even when
	// it loads (see recover.go); a missing or corrupt state is rebuilt
	// from the output anyway.
	StateFromOutput bool
	// Wait waits for another build holding the state's lock instead of
	// failing at once.
	Wait bool
	// SkipUnreadable turns files and folders that cannot be read for lack
	// of permission into warnings instead of a failed build.
	SkipUnreadable bool
	// Force lets a first build publish into a non-empty output folder
	// that holds no rsgen build.
	Force bool
	// Rebase confirms a new base URL: the Source starts afresh there (see
	// continuity.go).
	Rebase bool
	// RemoveSets confirms that the sets the state published and the
	// configuration no longer has are removed with their documents.
	RemoveSets bool
	// ListUnlisted fills Summary.UnlistedPaths (rsgen status --explain).
	ListUnlisted bool
	// ListEvents fills Summary.Events of a first build too (see Summary).
	ListEvents bool
	// Exclude names more folders left out of the scan when they lie in the
	// source: a development build's own output and state live inside the
	// production state folder, which it leaves out.
	Exclude []string

	// limits overrides the per-document limits in tests.
	limits limits
}

// spillAfter is how many records a scan holds in memory before it spills
// them into the state folder (snapshot.ScanOptions.SpillAfter); 0 is
// snapshot's default. The tests spill after one record, so that each of
// their builds takes the path of a large one.
var spillAfter int

// limits are the most entries and bytes one document may hold.
type limits struct {
	entries int
	bytes   int64
}

// NoteKind says what a Note reports.
type NoteKind int

// The notes a build sends.
const (
	NoteWarning NoteKind = iota + 1 // something left out or adjusted
	NoteHashed                      // a file was read
	NoteWritten                     // a document or resource was written
	NoteFound                       // a source file was found; Read: it will be read
	NoteWalked                      // every source file is found; reading may go on
	// NoteInfo reports something the user should know that is not a
	// problem, such as a state rebuilt from the output.
	NoteInfo
)

// Note reports one thing a build did.
type Note struct {
	Kind  NoteKind
	Code  string // NoteWarning: what kind of problem, for grouping (the Warn constants)
	Path  string
	Bytes int64 // NoteFound: -1 when the size is known only once the file is read
	Msg   string
	Read  bool // NoteFound: the file is read by this build (NoteHashed follows)
}

// Summary is the outcome of a build or a plan.
type Summary struct {
	Now                       time.Time
	Files                     int
	Created, Updated, Deleted int
	Hashed                    int
	HashedBytes               int64
	Skipped                   int
	// LeftOut counts the files and folders left out because they cannot
	// be published (a URI too long for a list).
	LeftOut          int
	ResourcesPlaced  int
	ResourcesRemoved int
	// Outputs counts the files the build wrote beside the resources, by
	// kind: Outputs[sink.Document] are the ResourceSync documents.
	Outputs [sink.NumKinds]sink.Counts
	// Unlisted counts the files published in no set: placed in the
	// output, but advertised by no document; with Options.ListUnlisted,
	// UnlistedPaths names them.
	Unlisted      int
	UnlistedPaths []string
	// Sets are the counts of each set.
	Sets []SetSummary
	// ScanTime is how long the scan took (wall clock, for reports only).
	ScanTime time.Duration
	// Events are the change events of this build, in walk order. Those of
	// a first build, whose Resource List is the baseline and whose events
	// no Change List publishes, are there only when Options.ListEvents
	// asks: at a million files, they hold a million records.
	Events []snapshot.Event
}

// SetSummary counts the resources of one set and this build's changes to
// them.
type SetSummary struct {
	Name                      string
	Resources                 int
	Created, Updated, Deleted int
}

// The codes of warnings, by which they are grouped for people.
const (
	WarnSymlink    = snapshot.SkipSymlink    // a symbolic link not followed: follow_symlinks is off
	WarnSpecial    = snapshot.SkipSpecial    // a FIFO, socket or device skipped
	WarnUnreadable = snapshot.SkipUnreadable // a file or folder skipped for lack of permission
	WarnURITooLong = "uri-too-long"          // a file left out: its URI is too long for a list
	WarnDotfiles   = "dotfiles"              // dotfiles left out at the top of the source
	WarnHTMLHead   = "html-head"             // html_link found no <head> to put the link in
	WarnJSONPatch  = "json-patch"            // an update of a JSON resource that gets no patch
	WarnLost       = "lost"                  // something that cannot be made again was lost
	WarnClock      = "clock"                 // the build time runs backwards
	WarnState      = "state"                 // the state was rebuilt or could not be
	WarnHosting    = "hosting"               // a hosting file cannot say everything
	WarnSet        = "set"                   // a set that publishes nothing
	WarnBaseURL    = "base-url"              // a base URL Destinations will not find

	// WarnSymlinkRefused is a symbolic link that follow_symlinks does not
	// follow: it points outside the source, loops or is broken.
	WarnSymlinkRefused = snapshot.SkipSymlinkRefused
	// WarnUnreadableKept is a file, or a folder of files, that cannot be
	// read, whose last published version is kept (--skip-unreadable).
	WarnUnreadableKept = snapshot.KeptUnreadable
)

// notes collects the notes of a stage that decides before anything is
// done (the plan), sent once it has decided.
type notes []Note

// warn adds a warning of the given code (a Warn constant).
func (n *notes) warn(code, path, msg string) {
	*n = append(*n, Note{Kind: NoteWarning, Code: code, Path: path, Msg: msg})
}
