package checker

import (
	"errors"
	"time"
)

// dateTime is a parsed W3C Datetime.
type dateTime struct {
	t      time.Time
	hasTZ  bool // a time zone designator is present
	utcZ   bool // the designator is "Z"
	hasTim bool // a time of day is present (not a bare date)
}

var errDateTime = errors.New("not a W3C Datetime of the form YYYY-MM-DDThh:mm:ss[.s]Z")

// parseDateTime parses the intersection of W3C Datetime and xsd:dateTime:
// YYYY-MM-DDThh:mm:ss with optional fraction and time zone. With dateOK it
// also accepts a complete date YYYY-MM-DD (xsd:date, for lastmod), with an
// optional time zone.
func parseDateTime(s string, dateOK bool) (dateTime, error) {
	p := dtParser{s: s}
	year := p.num(4)
	month := p.lit('-', 2)
	day := p.lit('-', 2)
	var dt dateTime
	hour, minute, sec, nsec := 0, 0, 0, 0
	if p.peek('T') {
		dt.hasTim = true
		hour = p.lit('T', 2)
		minute = p.lit(':', 2)
		sec = p.lit(':', 2)
		nsec = p.fraction()
	} else if !dateOK {
		p.bad = true
	}
	loc := p.zone(&dt)
	if p.bad || p.i != len(s) || !validDate(year, month, day) || hour > 23 || minute > 59 || sec > 59 {
		return dateTime{}, errDateTime
	}
	dt.t = time.Date(year, time.Month(month), day, hour, minute, sec, nsec, loc)
	return dt, nil
}

type dtParser struct {
	s   string
	i   int
	bad bool
}

// num reads exactly n digits.
func (p *dtParser) num(n int) int {
	v := 0
	for k := 0; k < n; k++ {
		if p.i >= len(p.s) || p.s[p.i] < '0' || p.s[p.i] > '9' {
			p.bad = true
			return 0
		}
		v = v*10 + int(p.s[p.i]-'0')
		p.i++
	}
	return v
}

// lit reads the byte c and then n digits.
func (p *dtParser) lit(c byte, n int) int {
	if !p.peek(c) {
		p.bad = true
		return 0
	}
	p.i++
	return p.num(n)
}

func (p *dtParser) peek(c byte) bool { return p.i < len(p.s) && p.s[p.i] == c }

// fraction reads an optional ".digits" and returns it in nanoseconds.
func (p *dtParser) fraction() int {
	if !p.peek('.') {
		return 0
	}
	p.i++
	start, ns, scale := p.i, 0, 100000000
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		ns += int(p.s[p.i]-'0') * scale
		scale /= 10
		p.i++
	}
	if p.i == start {
		p.bad = true
	}
	return ns
}

// zone reads an optional time zone designator.
func (p *dtParser) zone(dt *dateTime) *time.Location {
	switch {
	case p.peek('Z'):
		p.i++
		dt.hasTZ, dt.utcZ = true, true
		return time.UTC
	case p.peek('+') || p.peek('-'):
		sign := 1
		if p.s[p.i] == '-' {
			sign = -1
		}
		p.i++
		h := p.num(2)
		m := p.lit(':', 2)
		if h > 14 || m > 59 || (h == 14 && m > 0) {
			p.bad = true
		}
		dt.hasTZ = true
		return time.FixedZone("", sign*(h*3600+m*60))
	}
	return time.UTC
}

func validDate(y, m, d int) bool {
	if y < 1 || m < 1 || m > 12 || d < 1 {
		return false
	}
	return d <= time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// period is a span of time with optional ends, as from and until give it.
type period struct {
	from, until *dateTime // nil: not given
}

// excess describes where inner leaves outer, a period of the document
// called name, or returns "" when it does not, as far as the given ends
// tell.
func (outer period) excess(inner period, name string) string {
	switch {
	case inner.from != nil && outer.from != nil && inner.from.t.Before(outer.from.t):
		return "from " + formatTime(inner.from) + " is before the " + name + "'s from " + formatTime(outer.from)
	case inner.from != nil && outer.until != nil && inner.from.t.After(outer.until.t):
		return "from " + formatTime(inner.from) + " is after the " + name + "'s until " + formatTime(outer.until)
	case inner.until != nil && outer.until != nil && inner.until.t.After(outer.until.t):
		return "until " + formatTime(inner.until) + " is after the " + name + "'s until " + formatTime(outer.until)
	}
	return ""
}

func formatTime(dt *dateTime) string { return dt.t.UTC().Format(time.RFC3339Nano) }
