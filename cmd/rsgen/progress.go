package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/rsgen/rsgen/generator"
)

// Progress of a build, rendered from the generator's notes (the generator
// never prints). On a terminal one status line is redrawn in place; to a
// file or a pipe (CI logs) a plain line is printed now and then, and only
// once a build has run that long, so that quick builds print nothing extra.
// Warnings go through the same writer, above the status line.

// progressMode says how progress is shown.
type progressMode int

const (
	progressNone     progressMode = iota // --quiet: warnings only
	progressTerminal                     // a status line redrawn in place
	progressLines                        // plain periodic lines
)

// Intervals between renderings: a terminal line is cheap to redraw; a log
// line is not worth printing more often than this.
const (
	terminalEvery = 150 * time.Millisecond
	linesEvery    = 10 * time.Second
)

// progress counts what a build reports and renders it.
type progress struct {
	w     io.Writer
	mode  progressMode
	every time.Duration
	now   func() time.Time // the clock, injected for tests

	mu        sync.Mutex
	start     time.Time
	last      time.Time // last rendering
	drawn     bool      // a status line is on the terminal
	found     int       // files found by the scan
	queued    int       // files to read
	queuedB   int64     // their bytes
	unsized   int       // files to read whose size is learnt by reading them
	read      int       // files read
	readB     int64     // their bytes
	written   []string  // output paths written
	warnings  []noteJSON
	infoQuiet bool // --quiet also silences informational notes
}

// progressFor chooses how a command shows progress: not at all with
// --quiet, else by whether stderr is a terminal.
func progressFor(cio cliIO, quiet bool) *progress {
	mode := progressLines
	switch {
	case quiet:
		mode = progressNone
	case cio.isTerminal != nil && cio.isTerminal(cio.stderr):
		mode = progressTerminal
	}
	return newProgress(cio.stderr, mode, quiet)
}

// newProgress returns the progress display for a build's notes on w.
func newProgress(w io.Writer, mode progressMode, quiet bool) *progress {
	p := &progress{w: w, mode: mode, now: time.Now, infoQuiet: quiet}
	p.every = linesEvery
	if mode == progressTerminal {
		p.every = terminalEvery
	}
	p.start = p.now()
	p.last = p.start
	return p
}

// notify receives one note; the generator may call it from several
// goroutines at once.
func (p *progress) notify(n generator.Note) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch n.Kind {
	case generator.NoteFound:
		p.found++
		if n.Read {
			p.queued++
			if n.Bytes < 0 {
				p.unsized++
			} else {
				p.queuedB += n.Bytes
			}
		}
	case generator.NoteHashed:
		p.read++
		p.readB += n.Bytes
	case generator.NoteWritten:
		p.written = append(p.written, n.Path)
	case generator.NoteWarning:
		p.warnings = append(p.warnings, noteJSON{Path: n.Path, Message: n.Msg})
		p.printAbove(formatWarning(n))
		return
	case generator.NoteInfo:
		if !p.infoQuiet {
			p.printAbove("rsgen: " + n.Msg)
		}
		return
	}
	if p.mode == progressNone {
		return
	}
	if now := p.now(); now.Sub(p.last) >= p.every {
		p.last = now
		p.render(now)
	}
}

func formatWarning(n generator.Note) string {
	if n.Path != "" {
		return fmt.Sprintf("rsgen: warning: %s: %s", n.Path, n.Msg)
	}
	return "rsgen: warning: " + n.Msg
}

// printAbove prints a line, keeping the status line below it.
func (p *progress) printAbove(line string) {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
	fmt.Fprintln(p.w, line)
}

// render shows the counts at time now.
func (p *progress) render(now time.Time) {
	line := p.status(now)
	if p.mode == progressTerminal {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.drawn = true
		return
	}
	fmt.Fprintf(p.w, "rsgen: progress: %s\n", line)
}

// status describes the build so far: files found, files and bytes read
// out of those to read, the reading rate and, once it is known, the time
// left. The scan finds files while it reads others, so the totals may
// still grow; the estimate assumes they will not. Files new to the state
// are not stat'ed before they are read (a first build's), so while any
// is queued the bytes to read are unknown and the time left is estimated
// from the files.
func (p *progress) status(now time.Time) string {
	elapsed := now.Sub(p.start)
	var b strings.Builder
	fmt.Fprintf(&b, "scanned %d files; read %d/%d files, %s", p.found, p.read, p.queued, formatBytes(p.readB))
	if p.unsized == 0 {
		fmt.Fprintf(&b, "/%s", formatBytes(p.queuedB))
	}
	if secs := elapsed.Seconds(); secs > 0 && p.readB > 0 {
		rate := float64(p.readB) / secs
		fmt.Fprintf(&b, " at %s/s", formatBytes(int64(rate)))
		left := float64(p.queuedB-p.readB) / rate
		if p.unsized > 0 {
			left = float64(p.queued-p.read) / (float64(p.read) / secs)
		}
		if left > 0 {
			fmt.Fprintf(&b, ", %s left", time.Duration(left*float64(time.Second)).Round(time.Second))
		}
	}
	if len(p.written) > 0 {
		fmt.Fprintf(&b, "; %d files written", len(p.written))
	}
	return b.String()
}

// finish clears the status line; the caller prints the summary.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// noteJSON is a warning in the --json summary.
type noteJSON struct {
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}
