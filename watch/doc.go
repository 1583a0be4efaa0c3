// Package watch tells rsgen's development loop when to rebuild. It watches
// a source tree with fsnotify and turns the stream of file events into a
// few Triggers; what changed is for the rebuild's scan to find out.
//
// # An event is only a wake-up signal
//
// Events are not trusted to describe the change: they arrive late, out of
// order, coalesced or not at all (the kernel's queue overflows), and an
// editor's save is a burst of writes, renames and deletions of temporary
// files. So an event only marks the tree dirty, and every rebuild runs the
// same full scan, diff and generate as a one-off build. That is cheap,
// because the scan trusts the stat of unchanged files, and it is always
// right: nothing an event missed can be missed by the scan.
//
// # Debounce with a maximum wait
//
// The first event of a batch arms a single timer for the debounce (300ms by
// default); each further event pushes it back by the debounce again, but
// never past the maximum wait (3s) from the first event, so a steady stream
// of writes still rebuilds every few seconds. When the timer fires a
// Trigger is offered on Triggers. Events that arrive before it is received
// merge into it (the rebuild that follows scans after them); the next batch
// starts when it is received. Copying ten thousand files in therefore costs
// a handful of rebuilds, not ten thousand.
//
// # What is watched
//
// fsnotify is not recursive: New adds every folder below the root, and a
// Create event of a folder adds that folder and everything already below
// it; files created in it before its watch was added are found by the scan
// all the same. A removed or renamed folder's watches are dropped (inotify
// would go on reporting a moved folder under its old name); its new name
// comes as a Create and is added afresh. The skipped folders (the output
// and the state) are never watched, and events on editors' temporary and
// backup files (see IgnoredName) and chmod-only events are dropped. The
// configuration file is watched through its folder, since editors replace
// files by renaming over them; its changes set Trigger.Config.
//
// # Failures
//
// An overflow of the kernel's event queue, or any other watch error, is
// reported through Options.Warn, the folder tree is read again to add the
// folders that appeared unseen, and a Trigger follows: a full rescan, like
// every rebuild.
// When the operating system refuses more watches (ENOSPC from inotify's
// max_user_watches, EMFILE from max_user_instances) the Watcher warns with
// ErrWatchLimit and falls back to polling: a Trigger every two seconds.
//
// # Caveats
//
// The Watcher only says when to rebuild. It never prints and never builds:
// the caller receives Triggers, runs the build and renders the outcome.
// Polling rebuilds even when nothing changed; rebuilds that find nothing
// write nothing, but cost a scan of the tree each time.
package watch
