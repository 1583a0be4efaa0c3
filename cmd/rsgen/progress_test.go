package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/deploy"
	"github.com/rsgen/rsgen/generator"
	"github.com/rsgen/rsgen/layout"
)

// feed sends a scan of two files (one read, 2 MiB of 4 MiB) and a warning
// to p, one second apart on p's clock.
func feed(p *progress, clock *time.Time) {
	step := func(n generator.Note) {
		*clock = clock.Add(time.Second)
		p.notify(n)
	}
	step(generator.Note{Kind: generator.NoteFound, Path: "a", Bytes: 4 << 20, Read: true})
	step(generator.Note{Kind: generator.NoteFound, Path: "b", Bytes: 10})
	step(generator.Note{Kind: generator.NoteWarning, Path: "c", Msg: "odd"})
	p.notify(generator.Note{Kind: generator.NoteWalked})
	step(generator.Note{Kind: generator.NoteHashed, Path: "a", Bytes: 2 << 20})
	step(generator.Note{Kind: generator.NoteWritten, Path: "resourcesync/x.xml"})
}

func newTestProgress(mode progressMode, quiet bool, out *strings.Builder) (*progress, *time.Time) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newProgress(out, mode, quiet)
	p.now = func() time.Time { return clock }
	p.start, p.last = clock, clock
	return p, &clock
}

func TestProgressOnATerminalRedrawsOneLine(t *testing.T) {
	var out strings.Builder
	p, clock := newTestProgress(progressTerminal, false, &out)
	feed(p, clock)
	p.finish()
	got := out.String()
	// The warning comes once the status line is cleared, at the end.
	if !strings.HasSuffix(got, "\r\033[Krsgen: warning: c: odd\n") {
		t.Errorf("finish did not clear the status line, then print the warning:\n%q", got)
	}
	last := got[strings.LastIndex(got[:len(got)-len("\r\033[Krsgen: warning: c: odd\n")], "\r\033[K"):]
	want := "scanned 2 files; read 1/1 file, 2.0 MiB/4.0 MiB at 409.6 KiB/s, 5s left; 1 file written"
	if !strings.Contains(last, want) {
		t.Errorf("last status line %q, want %q", last, want)
	}
}

func TestProgressToALogPrintsPlainLinesNowAndThen(t *testing.T) {
	var out strings.Builder
	p, clock := newTestProgress(progressLines, false, &out)
	feed(p, clock) // 5s: less than linesEvery, no progress line yet
	if got := out.String(); got != "" {
		t.Errorf("a short build printed %q before it finished, want nothing", got)
	}
	*clock = clock.Add(linesEvery)
	p.notify(generator.Note{Kind: generator.NoteHashed, Path: "b", Bytes: 1 << 20})
	if got := out.String(); !strings.Contains(got, "rsgen: progress: scanned 2 files; read 2/1 file") || strings.Contains(got, "\r") {
		t.Errorf("no plain progress line after %s:\n%q", linesEvery, got)
	}
}

func TestProgressQuietPrintsNothing(t *testing.T) {
	var out strings.Builder
	p, clock := newTestProgress(progressNone, true, &out)
	feed(p, clock)
	*clock = clock.Add(time.Hour)
	p.notify(generator.Note{Kind: generator.NoteInfo, Msg: "rebuilt the state"})
	p.notify(generator.Note{Kind: generator.NoteHashed, Path: "b", Bytes: 1})
	p.finish()
	if got := out.String(); got != "" {
		t.Errorf("--quiet printed %q, want nothing", got)
	}
}

// TestWarningsGroupedByKind: many warnings of one kind make one line with
// their count, examples and what to do; a kind that came once is printed
// as it came.
func TestWarningsGroupedByKind(t *testing.T) {
	var ws []noteJSON
	for i := range 78 {
		ws = append(ws, noteJSON{Code: generator.WarnSymlink, Path: fmt.Sprintf("l%02d", i), Message: "symbolic link not followed"})
	}
	ws = append(ws, noteJSON{Code: generator.WarnSet, Message: "set x publishes nothing"})
	got := groupedWarnings(ws)
	want := []string{
		"rsgen: warning: 78 symbolic links not followed (set follow_symlinks = true to follow those that stay inside the source; rsgen status --explain lists them): l00, l01, l02, ...",
		"rsgen: warning: set x publishes nothing",
	}
	if !slices.Equal(got, want) {
		t.Errorf("grouped warnings:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestProgressWithUnsizedFiles: files new to the state come without a size
// (the scan stats them as it reads them), so the bytes to read are not
// shown and the time left is estimated from the files.
func TestProgressWithUnsizedFiles(t *testing.T) {
	var out strings.Builder
	p, clock := newTestProgress(progressTerminal, false, &out)
	for _, name := range []string{"a", "b", "c", "d"} {
		p.notify(generator.Note{Kind: generator.NoteFound, Path: name, Bytes: -1, Read: true})
	}
	*clock = clock.Add(2 * time.Second)
	p.notify(generator.Note{Kind: generator.NoteHashed, Path: "a", Bytes: 1 << 20})
	if got := p.status(*clock); strings.Contains(got, "left") {
		t.Errorf("status %q estimates the time left before every file is found", got)
	}
	p.notify(generator.Note{Kind: generator.NoteWalked})
	want := "scanned 4 files; read 1/4 files, 1.0 MiB at 512.0 KiB/s, 6s left"
	if got := p.status(*clock); got != want {
		t.Errorf("status %q, want %q", got, want)
	}
}

// TestDeployProgressCountsObjectsFound: an object a resumed deploy finds
// on the store counts as done and leaves the bytes to send, so the
// progress of a step that completes an interrupted one reaches its total.
func TestDeployProgressCountsObjectsFound(t *testing.T) {
	var out strings.Builder
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &deployProgress{w: &out, mode: progressLines, every: time.Second, now: func() time.Time { return clock }, last: clock}
	p.notify(deploy.Event{Kind: deploy.EventStep, Step: layout.StepResources, Count: 3, Bytes: 3 << 10})
	for _, kind := range []deploy.EventKind{deploy.EventWritten, deploy.EventFound, deploy.EventWritten} {
		clock = clock.Add(time.Second)
		p.notify(deploy.Event{Kind: kind, Step: layout.StepResources, Path: "a", Bytes: 1 << 10})
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasSuffix(last, ": 3/3 objects, 2.0 KiB/2.0 KiB") {
		t.Errorf("the last progress line is %q; want 3/3 objects, 2.0 KiB/2.0 KiB", last)
	}
}
