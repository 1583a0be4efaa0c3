package checker

import (
	"fmt"
	"sort"
)

// Severity says whether a finding breaks a MUST of the specification (Error)
// or only a SHOULD (Warning).
type Severity int

// The two severities. The zero value is not a valid severity.
const (
	Error Severity = iota + 1
	Warning
)

// String returns "error" or "warning".
func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// MarshalText makes a Severity appear as its name in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Finding is one conformance problem.
type Finding struct {
	// URL is the document the finding is about, as the Source names it.
	URL string `json:"url"`
	// File is the local file that holds the document, when there is one.
	File string `json:"file,omitempty"`
	// Line is the 1-based line of the element at fault, 0 when the finding
	// is about the document as a whole.
	Line     int      `json:"line,omitempty"`
	Severity Severity `json:"severity"`
	// Rule is the short id of the rule, one of those Rules returns.
	Rule    string `json:"rule"`
	Message string `json:"message"`
	// Section is the section of ResourceSync 1.1 the rule comes from, such
	// as "§12.1", or "" for rules about how the Source is served.
	Section string `json:"section,omitempty"`
}

// String renders the finding as "WHERE:LINE: severity: message (§x) [rule]".
func (f Finding) String() string {
	where := f.URL
	if f.File != "" {
		where = f.File
	}
	if f.Line > 0 {
		where = fmt.Sprintf("%s:%d", where, f.Line)
	}
	msg := f.Message
	if f.Section != "" {
		msg += " (" + f.Section + ")"
	}
	return fmt.Sprintf("%s: %s: %s [%s]", where, f.Severity, msg, f.Rule)
}

// Report is the result of a check.
type Report struct {
	// Documents is the number of ResourceSync documents read, and
	// Packages the number of dump packages, whose manifests are not
	// counted as documents: the counts of rsgen build.
	Documents int       `json:"documents"`
	Packages  int       `json:"packages"`
	Findings  []Finding `json:"findings"`
}

// Count returns the number of findings of severity s.
func (r *Report) Count(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// OK reports whether the report has no errors and, when strict is set, no
// warnings either.
func (r *Report) OK(strict bool) bool {
	return r.Count(Error) == 0 && (!strict || r.Count(Warning) == 0)
}

// sortFindings orders findings by document, line, rule and message, so that
// reports are deterministic whatever the order of the walk.
func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.URL != b.URL {
			return a.URL < b.URL
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Message < b.Message
	})
}
