package checker

import "fmt"

// reporter collects the findings about one document.
type reporter struct {
	url      string
	file     string
	findings []Finding
}

// add records a finding of rule at line with the rule's severity.
func (r *reporter) add(line int, rule, format string, args ...any) {
	r.addSeverity(ruleFor(rule).Severity, line, rule, format, args...)
}

// addSeverity records a finding with an explicit severity, for the rules
// whose severity depends on the context.
func (r *reporter) addSeverity(sev Severity, line int, rule, format string, args ...any) {
	ru := ruleFor(rule)
	r.findings = append(r.findings, Finding{
		URL:      r.url,
		File:     r.file,
		Line:     line,
		Severity: sev,
		Rule:     rule,
		Message:  fmt.Sprintf(format, args...),
		Section:  ru.Section,
	})
}

// addSection records a finding of rule citing section instead of the rule's
// own, for rules that several sections state for different documents.
func (r *reporter) addSection(section string, line int, rule, format string, args ...any) {
	r.add(line, rule, format, args...)
	r.findings[len(r.findings)-1].Section = section
}
