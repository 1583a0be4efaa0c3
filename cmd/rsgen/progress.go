package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rsgen/rsgen/generator"
)

// Progress of a build, rendered from the generator's notes (the generator
// never prints). On a terminal one status line is redrawn in place; to a
// file or a pipe (CI logs) a plain line is printed now and then, and only
// once a build has run that long, so that quick builds print nothing extra.
// Warnings are gathered and printed once the build is done, one line per
// kind of problem (see printWarnings); --quiet prints none.

// progressMode says how progress is shown.
type progressMode int

const (
	progressNone     progressMode = iota // no progress shown
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

	mu       sync.Mutex
	start    time.Time
	last     time.Time // last rendering
	drawn    bool      // a status line is on the terminal
	found    int       // files found by the scan
	queued   int       // files to read
	queuedB  int64     // their bytes
	unsized  int       // files to read whose size is learnt by reading them
	read     int       // files read
	readB    int64     // their bytes
	nWritten int       // output files written
	// written lists their paths when listWritten asks (build --json):
	// a first build that keeps versions writes two files per resource.
	written     []string
	listWritten bool
	walked      bool // every file is found: the totals are final
	warnings    []noteJSON
	quiet       bool // --quiet: no informational notes, no warnings
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
	p := &progress{w: w, mode: mode, now: time.Now, quiet: quiet}
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
	case generator.NoteWalked:
		p.walked = true
	case generator.NoteHashed:
		p.read++
		p.readB += n.Bytes
	case generator.NoteWritten:
		p.nWritten++
		if p.listWritten {
			p.written = append(p.written, n.Path)
		}
	case generator.NoteWarning:
		p.warnings = append(p.warnings, noteJSON{Code: n.Code, Path: n.Path, Message: n.Msg})
		return
	case generator.NoteInfo:
		if !p.quiet {
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

// warningList returns the warnings gathered so far.
func (p *progress) warningList() []noteJSON {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.warnings)
}

// groupedWarnings renders the warnings gathered, one line per kind in the
// order each kind first came: the warnings themselves when they are few,
// a count, examples and what to do when they are many.
func groupedWarnings(warnings []noteJSON) []string {
	var codes []string
	byCode := map[string][]noteJSON{}
	for _, w := range warnings {
		if byCode[w.Code] == nil {
			codes = append(codes, w.Code)
		}
		byCode[w.Code] = append(byCode[w.Code], w)
	}
	var lines []string
	for _, code := range codes {
		ws := byCode[code]
		if len(ws) <= 3 || code == "" || manyWarnings[code] == "" {
			for _, w := range ws {
				lines = append(lines, formatWarning(w))
			}
			continue
		}
		examples := make([]string, 0, 3)
		for _, w := range ws[:min(3, len(ws))] {
			examples = append(examples, w.Path)
		}
		more := ""
		if len(ws) > 3 {
			more = ", ..."
		}
		lines = append(lines, fmt.Sprintf("rsgen: warning: %s: %s%s", fmt.Sprintf(manyWarnings[code], len(ws)), strings.Join(examples, ", "), more))
	}
	return lines
}

// manyWarnings say, per kind, what many warnings of that kind mean.
var manyWarnings = map[string]string{
	generator.WarnSymlink:        "%d symbolic links not followed (set follow_symlinks = true to follow those that stay inside the source; rsgen status --explain lists them)",
	generator.WarnSymlinkRefused: "%d symbolic links not followed: they point outside the source, loop or are broken, and follow_symlinks follows only links that stay inside it (rsgen status --explain lists them with their targets)",
	generator.WarnSpecial:        "%d FIFOs, sockets or devices skipped (rsgen status --explain lists them)",
	generator.WarnUnreadable:     "%d unreadable files or folders left out (rsgen status --explain lists them)",
	generator.WarnUnreadableKept: "%d unreadable files or folders keep their last published versions (rsgen status --explain lists them)",
	generator.WarnURITooLong:     "%d files left out: their URIs would be longer than the 2048 characters a <loc> may have",
	generator.WarnHTMLHead:       "%d HTML pages without a <head> start tag, published without their <link rel=\"resourcesync\">",
	generator.WarnJSONPatch:      "%d updates of JSON files get no JSON Patch (a version is not valid JSON)",
	generator.WarnLost:           "%d files that cannot be made again are lost or damaged in both the state and the output folder",
}

func formatWarning(w noteJSON) string {
	if w.Path != "" {
		return fmt.Sprintf("rsgen: warning: %s: %s", w.Path, w.Message)
	}
	return "rsgen: warning: " + w.Message
}

// printWarnings prints the warnings gathered, grouped, unless quiet.
func (p *progress) printWarnings() {
	if p.quiet {
		return
	}
	for _, line := range groupedWarnings(p.warningList()) {
		fmt.Fprintln(p.w, line)
	}
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
// out of those to read, the reading rate and, once the walk has found
// every file, the time left. Files new to the state
// are not stat'ed before they are read (a first build's), so while any
// is queued the bytes to read are unknown and the time left is estimated
// from the files.
func (p *progress) status(now time.Time) string {
	elapsed := now.Sub(p.start)
	var b strings.Builder
	fmt.Fprintf(&b, "scanned %s; read %d/%s, %s", plural(p.found, "file"), p.read, plural(p.queued, "file"), formatBytes(p.readB))
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
		// Only once the walk has found every file are the totals final:
		// before, an estimate would count only what is found so far.
		if left >= 1 && p.walked {
			fmt.Fprintf(&b, ", %s left", time.Duration(left*float64(time.Second)).Round(time.Second))
		}
	}
	if p.nWritten > 0 {
		fmt.Fprintf(&b, "; %s written", plural(p.nWritten, "file"))
	}
	return b.String()
}

// finish clears the status line and prints the warnings; the caller
// prints the summary.
func (p *progress) finish() {
	p.mu.Lock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
	p.mu.Unlock()
	p.printWarnings()
}

// noteJSON is a warning in the --json summary.
type noteJSON struct {
	Code    string `json:"code,omitempty"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}
