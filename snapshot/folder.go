package snapshot

import "path/filepath"

// The state folder
//
// Everything rsgen keeps between builds lives in one folder (state, by
// default .rsgen next to the configuration), never published. These are
// its names; every package that reads or writes the folder takes them
// from here.
const (
	// FileName is the state file: the snapshot of the last build.
	FileName = "state"
	// RunFile records that a build ran without saving the state, and
	// when (see SaveRun).
	RunFile = "run"
	// LockFile is held by the build that runs on the folder, and names its
	// process (see generator's lock).
	LockFile = "lock"
	// PublishingFile records, while a build renames its files into place,
	// what it adds and deletes, until its state is saved.
	PublishingFile = "publishing"
	// OutputMarker records the output folder a first build adopted.
	OutputMarker = "output"
	// ArchiveDir keeps, at their output paths, the files no later build
	// could make again (closed and archived documents, packages,
	// versions), with their checksums in the state.
	ArchiveDir = "closed"
	// DevDir holds the development site of rsgen watch --serve: its
	// output (DevDir/public) and its own state (DevDir/state).
	DevDir = "dev"
	// DeployDir holds what rsgen deploy knows of its targets.
	DeployDir = "deploy"
	// OutboxDir holds the notifications the builds wrote and no hub has
	// taken yet (package notify's Outbox).
	OutboxDir = "outbox"
)

// ArchivePath returns the file that keeps, in the archive of the state
// folder dir (ArchiveDir), the output file at the slash-separated path rel.
func ArchivePath(dir, rel string) string {
	return filepath.Join(dir, ArchiveDir, filepath.FromSlash(rel))
}
