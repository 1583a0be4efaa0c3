package destination

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/rsgen/rsgen/layout"
	"github.com/rsgen/rsgen/rs"
)

// source is what discovery learns of a Source and the set a sync follows.
type source struct {
	base    string // the base URL resources are mirrored from, with a trailing slash
	set     string
	capList string
	// caps maps each capability the Capability List names to the URLs it
	// gives for it, in document order.
	caps map[string][]string
	// hubs maps the topic of each notification channel the Capability
	// List names to its hub: the rs:ln rel="hub" of its entry, else of
	// the list ("" when neither names one).
	hubs map[string]string
}

// setRef is a Capability List a Source Description names.
type setRef struct{ name, url string }

// discover finds the set to follow from start: a base URL (ending in
// "/"), a Source Description or a Capability List, picking the set named
// by want when the Source Description lists several.
func discover(ctx context.Context, d *docs, start, want string) (*source, error) {
	u, err := url.Parse(start)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, &UsageError{Msg: fmt.Sprintf("%q is not an http:// or https:// URL", start)}
	}
	if u.Path == "" || strings.HasSuffix(u.Path, "/") {
		base := strings.TrimSuffix(start, "/") + "/"
		if u.Path == "" {
			base = start + "/"
		}
		return fromDescription(ctx, d, base+layout.SourceDescription, base, want)
	}
	h, err := d.head(ctx, start)
	if err != nil {
		return nil, err
	}
	switch h.MD.Capability {
	case rs.CapDescription:
		return fromDescription(ctx, d, start, baseOfDescription(start), want)
	case rs.CapCapabilityList:
		if want != "" && want != start && want != setName(start) {
			return nil, &UsageError{Msg: fmt.Sprintf("--set %s: %s is the Capability List of set %s", want, start, setName(start))}
		}
		return fromCapabilityList(ctx, d, start, baseOfCapabilityList(start, h))
	}
	return nil, &UsageError{Msg: fmt.Sprintf("%s is a %s, not a Source Description or a Capability List: give the Source's base URL, its Source Description or a Capability List",
		start, describeCapability(h))}
}

func describeCapability(h *rs.Head) string {
	if h.MD.Capability == "" {
		return "document without a capability"
	}
	return h.MD.Capability
}

// fromDescription reads the Source Description at sd and follows the
// Capability List of the set wanted.
func fromDescription(ctx context.Context, d *docs, sd, base, want string) (*source, error) {
	r, f, err := d.read(ctx, sd)
	if err != nil {
		return nil, fmt.Errorf("discover the Source: %w", err)
	}
	defer f.Close()
	h, err := r.Head()
	if err == nil && h.MD.Capability != rs.CapDescription {
		err = fmt.Errorf("its capability is %q, not %q", h.MD.Capability, rs.CapDescription)
	}
	var sets []setRef
	if err == nil {
		err = r.Entries(func(e *rs.Entry) error {
			if e.MD.Capability == rs.CapCapabilityList {
				sets = append(sets, setRef{name: setName(e.Loc), url: e.Loc})
			}
			return nil
		})
	}
	if err != nil {
		return nil, fmt.Errorf("read the Source Description %s: %w", sd, err)
	}
	ref, err := pickSet(sd, sets, want)
	if err != nil {
		return nil, err
	}
	return fromCapabilityList(ctx, d, ref.url, base)
}

// pickSet chooses the set wanted among sets, or the only one.
func pickSet(sd string, sets []setRef, want string) (setRef, error) {
	if len(sets) == 0 {
		return setRef{}, fmt.Errorf("the Source Description %s lists no Capability List", sd)
	}
	for _, s := range sets {
		if want != "" && (s.name == want || s.url == want) {
			return s, nil
		}
	}
	var list strings.Builder
	for _, s := range sets {
		fmt.Fprintf(&list, "\n  %s  %s", s.name, s.url)
	}
	switch {
	case want != "":
		return setRef{}, &UsageError{Msg: fmt.Sprintf("--set %s: the Source has no such set; its sets:%s", want, list.String())}
	case len(sets) > 1:
		return setRef{}, &UsageError{Msg: fmt.Sprintf("the Source has %d sets: pick one with --set NAME:%s", len(sets), list.String())}
	}
	return sets[0], nil
}

// fromCapabilityList reads the Capability List at u.
func fromCapabilityList(ctx context.Context, d *docs, u, base string) (*source, error) {
	r, f, err := d.read(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("read the Capability List: %w", err)
	}
	defer f.Close()
	src := &source{base: base, set: setName(u), capList: u, caps: map[string][]string{}, hubs: map[string]string{}}
	h, err := r.Head()
	if err == nil && h.MD.Capability != rs.CapCapabilityList {
		err = fmt.Errorf("its capability is %q, not %q", h.MD.Capability, rs.CapCapabilityList)
	}
	if err == nil {
		err = r.Entries(func(e *rs.Entry) error {
			if c := e.MD.Capability; c != "" {
				src.caps[c] = append(src.caps[c], e.Loc)
			}
			if c := e.MD.Capability; c == rs.CapChangeNotification || c == rs.CapFrameworkNotification {
				src.hubs[e.Loc] = cmp.Or(hubOf(e.Links), hubOf(h.Links))
			}
			return nil
		})
	}
	if err != nil {
		return nil, fmt.Errorf("read the Capability List %s: %w", u, err)
	}
	return src, nil
}

// hubOf returns the href of the first rs:ln rel="hub" of links.
func hubOf(links []rs.Link) string {
	for _, l := range links {
		if l.Rel == rs.RelHub {
			return l.Href
		}
	}
	return ""
}

// setName names the set of the Capability List at u: its folder when the
// list is a capabilitylist.xml (rsgen's resourcesync/NAME/), else its file
// name without .xml.
func setName(u string) string {
	p := u
	if pu, err := url.Parse(u); err == nil {
		p = pu.Path
	}
	dir, file := path.Split(p)
	if file == "capabilitylist.xml" && strings.Trim(dir, "/") != "" {
		return path.Base(dir)
	}
	return strings.TrimSuffix(file, ".xml")
}

// baseOfDescription returns the base URL of the Source whose Source
// Description is at sd: what precedes /.well-known/resourcesync, else
// the top of its host.
func baseOfDescription(sd string) string {
	if base, ok := strings.CutSuffix(sd, layout.SourceDescription); ok && strings.HasSuffix(base, "/") {
		return base
	}
	return origin(sd)
}

// baseOfCapabilityList returns the base URL of the Source of the
// Capability List at u: that of the Source Description its up link
// names, else the top of its host.
func baseOfCapabilityList(u string, h *rs.Head) string {
	for _, l := range h.Links {
		if l.Rel == rs.RelUp {
			if base, ok := strings.CutSuffix(l.Href, layout.SourceDescription); ok && strings.HasSuffix(base, "/") {
				return base
			}
		}
	}
	return origin(u)
}

// origin returns scheme://host/ of u.
func origin(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Scheme + "://" + p.Host + "/"
}
