package checker

import "testing"

func TestParseDateTime(t *testing.T) {
	tests := []struct {
		in       string
		dateOK   bool
		ok, tz   bool
		wantUTCZ bool
	}{
		{"2013-01-03T09:00:00Z", false, true, true, true},
		{"2013-01-03T09:00:00.123Z", false, true, true, true},
		{"2013-01-03T10:00:00+01:00", false, true, true, false},
		{"2013-01-03T09:00:00", false, true, false, false},
		{"2013-01-03", true, true, false, false},
		{"2013-01-03", false, false, false, false},
		{"2013-02-29T00:00:00Z", false, false, false, false},
		{"2012-02-29T00:00:00Z", false, true, true, true},
		{"2013-01-03T24:00:00Z", false, false, false, false},
		{"2013-01-03T09:00Z", false, false, false, false},
		{"2013-01-03T09:00:00+15:00", false, false, false, false},
		{"2013-01-03T09:00:00.Z", false, false, false, false},
		{"12013-01-03T09:00:00Z", false, false, false, false},
		{" 2013-01-03T09:00:00Z", false, false, false, false},
	}
	for _, tt := range tests {
		dt, err := parseDateTime(tt.in, tt.dateOK)
		if (err == nil) != tt.ok {
			t.Errorf("parseDateTime(%q): err %v, want ok=%v", tt.in, err, tt.ok)
			continue
		}
		if err == nil && (dt.hasTZ != tt.tz || dt.utcZ != tt.wantUTCZ) {
			t.Errorf("parseDateTime(%q): tz %v utc %v", tt.in, dt.hasTZ, dt.utcZ)
		}
	}
}

// TestSchemaMediaType follows xmllint on the schema's pattern: XML Schema's
// \w includes symbols such as '+' but not punctuation such as '.' or ';'.
func TestSchemaMediaType(t *testing.T) {
	for in, want := range map[string]bool{
		"text/html":                true,
		"application/atom+xml":     true,
		"application/x-tiff-diff":  true,
		"application/vnd.ms-excel": false,
		"text/html; charset=utf-8": false,
		"text":                     false,
		"/html":                    false,
		"text/html/x":              false,
	} {
		if got := isSchemaMediaType(in); got != want {
			t.Errorf("isSchemaMediaType(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestURIProblem(t *testing.T) {
	for in, bad := range map[string]bool{
		"http://example.com/a%20b?x=1&y=2#f": false,
		"http://example.com/a b":             true,
		"http://example.com/é":               true,
		"http://example.com/%2":              true,
		"http://example.com/a#b#c":           true,
		"http://example.com/{x}":             true,
	} {
		if got := uriProblem(in) != ""; got != bad {
			t.Errorf("uriProblem(%q) reports %v, want %v", in, got, bad)
		}
	}
}

func TestRulesAreWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range ruleTable {
		if seen[r.ID] {
			t.Errorf("rule %s twice", r.ID)
		}
		seen[r.ID] = true
		if r.Severity != Error && r.Severity != Warning || r.Summary == "" {
			t.Errorf("rule %s is incomplete: %+v", r.ID, r)
		}
	}
}
