package checker

import (
	"errors"
	"sync"
)

// tally collects what a check finds: the findings, the documents and
// packages read, and the first fetch error. A check's content verification
// reports from several goroutines, hence the mutex.
type tally struct {
	mu       sync.Mutex
	findings []Finding
	// docs and packages count the documents and packages read, each URL
	// once (a package is listed by its dump and by the dump's archive).
	docs, packages int
	counted        map[string]bool
	firstErr       error // the first fetch error, returned when nothing was read
	limitHit       bool
}

// report adds a finding about the document at w.
func (w *tally) report(pos where, rule, format string, args ...any) {
	w.add(finding(pos, rule, format, args...))
}

// reportSection adds a finding that cites section instead of the rule's
// own, for rules that several sections state for different documents.
func (w *tally) reportSection(pos where, section, rule, format string, args ...any) {
	f := finding(pos, rule, format, args...)
	f.Section = section
	w.add(f)
}

// rootReport adds a finding about a URL that has no referring document.
func (w *tally) rootReport(rule, u, format string, args ...any) {
	w.report(where{url: u}, rule, format, args...)
}

func (w *tally) add(fs ...Finding) {
	w.mu.Lock()
	w.findings = append(w.findings, fs...)
	w.mu.Unlock()
}

// fetchFailed reports why u, a link found at from, could not be fetched
// or read to the end. The limits of the check are reported once; a
// stopped check (interrupt, --max-time) is reported by finish.
func (w *tally) fetchFailed(u string, from where, err error) {
	limit := errors.Is(err, errRequestLimit) || errors.Is(err, errByteLimit)
	w.mu.Lock()
	if w.firstErr == nil {
		w.firstErr = err
	}
	first := limit && !w.limitHit
	w.limitHit = w.limitHit || limit
	w.mu.Unlock()
	var timeout *timeoutError
	var redirect *redirectError
	var broken *zipError
	switch {
	case limit:
		if first {
			flag := "--max-requests"
			if errors.Is(err, errByteLimit) {
				flag = "--max-bytes"
			}
			w.report(from, "http-limit", "stopped at %s: %v; the check is incomplete (%s raises the limit)", u, err, flag)
		}
	case stopped(err):
	case errors.As(err, &timeout):
		w.report(from, "http-timeout", "%v", timeout)
	case errors.As(err, &redirect):
		w.report(from, "redirect-external", "%v", redirect)
	case errors.As(err, &broken):
		w.report(from, "zip-invalid", "%v", broken)
	case errors.Is(err, ErrNotFound):
		w.report(from, "document-missing", "%s does not exist", u)
	case errors.Is(err, ErrNotRegular):
		w.report(from, "document-missing", "%s cannot be read: %v", u, err)
	default:
		w.report(from, "http-fetch", "%v", err)
	}
}

// documentFailed is fetchFailed for a document of the Source (or a
// package): one that a redirect to another host kept from being read is an
// error, since nothing it lists was checked either.
func (w *tally) documentFailed(u string, from where, err error) {
	var redirect *redirectError
	if !errors.As(err, &redirect) {
		w.fetchFailed(u, from, err)
		return
	}
	f := finding(from, "redirect-external", "%v: %s was not checked, nor anything it lists", redirect, u)
	f.Severity = Error
	w.add(f)
}

// count adds one to n for the document or package at u, unless it was
// counted already.
func (w *tally) count(n *int, u string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.counted == nil {
		w.counted = map[string]bool{}
	}
	if !w.counted[u] {
		w.counted[u] = true
		*n++
	}
}
