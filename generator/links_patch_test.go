package generator_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rsgen/rsgen/config"
)

// TestPublishedPatches applies every JSON Patch a Change List links to to
// the previous version of its resource, found through the resource's
// TimeMap, and checks that it gives the current version: equal as JSON to
// the bytes the entry's hash describes. It also checks the patch link's
// hash and length against the patch itself.
func TestPublishedPatches(t *testing.T) {
	s := newSite(t, testBaseURL, func(c *config.Config) {
		c.Sets = []config.Set{{Name: "data", SetLinks: config.SetLinks{KeepVersions: true, Patches: true}}}
	})
	versions := []string{
		`{"a": 1, "list": [1, 2, 3], "obj": {"x/y": "slash", "t~": true}}`,
		`{"a": 1.50, "list": [1, 3], "obj": {"x/y": "slash, changed"}, "new": [null, {"k": []}]}`,
		`[1, "now an array", {"big": 12345678901234567890123}]`,
		`[1, "now an array", {"big": 12345678901234567890124}, {"more": {}}]`,
		`"a string"`,
	}
	for i, v := range versions {
		s.write("doc.json", v)
		s.write("other.json", fmt.Sprintf(`{"n": %d}`, i))
		s.build(t0.Add(time.Duration(i) * time.Hour))
	}
	applied := 0
	idx := s.doc("resourcesync/data/changelist.xml")
	for _, l := range idx.Entries {
		_, cl := s.docAt(l.Loc)
		for _, e := range cl.Entries {
			var patch, memento, timemap string
			var patchLink link
			for _, ln := range e.Links {
				switch ln.Rel {
				case "http://www.openarchives.org/rs/terms/patch":
					patch, patchLink = ln.Href, ln
				case "memento":
					memento = ln.Href
				case "timemap":
					timemap = ln.Href
				}
			}
			if e.MD().Change != "updated" {
				if patch != "" {
					t.Errorf("%s: a %s entry links to a patch", e.Loc, e.MD().Change)
				}
				continue
			}
			if patch == "" || memento == "" || timemap == "" {
				t.Errorf("%s: update without patch, memento or timemap links: %+v", e.Loc, e.Links)
				continue
			}
			current := s.outFile(locPath(t, s.Cfg.BaseURL, memento))
			if sha256Hex(current) != sha256Of(e.MD()) {
				t.Errorf("%s: the memento is not the version the entry describes", e.Loc)
			}
			previous := s.outFile(locPath(t, s.Cfg.BaseURL, previousMemento(t, s.outFile(locPath(t, s.Cfg.BaseURL, timemap)), memento)))
			patchBytes := s.outFile(locPath(t, s.Cfg.BaseURL, patch))
			if patchLink.Type != "application/json-patch+json" || patchLink.Length != strconv.Itoa(len(patchBytes)) ||
				sha256Of(md{Hash: patchLink.Hash}) != sha256Hex(patchBytes) {
				t.Errorf("%s: patch link %+v does not describe the %d bytes of the patch", e.Loc, patchLink, len(patchBytes))
			}
			got, err := applyPatch(previous, patchBytes)
			if err != nil {
				t.Errorf("%s: applying %s: %v\n%s", e.Loc, patch, err, patchBytes)
				continue
			}
			if !jsonEqual(t, got, current) {
				t.Errorf("%s: patch gives %s, want %s", e.Loc, got, current)
			}
			applied++
		}
	}
	if applied != 2*(len(versions)-1) {
		t.Errorf("applied %d patches, want %d", applied, 2*(len(versions)-1))
	}
}

var timeMapEntry = regexp.MustCompile(`<([^>]*)>;rel="([^"]*)"`)

// previousMemento returns, from a TimeMap, the memento before the given
// one.
func previousMemento(t *testing.T, timemap []byte, memento string) string {
	t.Helper()
	prev := ""
	for _, m := range timeMapEntry.FindAllStringSubmatch(string(timemap), -1) {
		if !strings.Contains(" "+m[2]+" ", " memento ") {
			continue
		}
		if m[1] == memento {
			if prev == "" {
				t.Fatalf("%s is the first memento of\n%s", memento, timemap)
			}
			return prev
		}
		prev = m[1]
	}
	t.Fatalf("%s is not in the TimeMap\n%s", memento, timemap)
	return ""
}

func decodeNumbers(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	va, errA := decodeNumbers(a)
	vb, errB := decodeNumbers(b)
	if errA != nil || errB != nil {
		t.Fatalf("not JSON: %v, %v", errA, errB)
	}
	return reflect.DeepEqual(va, vb)
}

// applyPatch applies an RFC 6902 JSON Patch (add, remove, replace) to doc,
// independently of the generator's diff.
func applyPatch(doc, patch []byte) ([]byte, error) {
	root, err := decodeNumbers(doc)
	if err != nil {
		return nil, err
	}
	var ops []struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(patch, &ops); err != nil {
		return nil, err
	}
	for _, op := range ops {
		var value any
		if op.Op != "remove" {
			if op.Value == nil {
				return nil, fmt.Errorf("%s %s without a value", op.Op, op.Path)
			}
			if value, err = decodeNumbers(op.Value); err != nil {
				return nil, err
			}
		}
		if root, err = applyOp(root, op.Op, pointer(op.Path), value); err != nil {
			return nil, fmt.Errorf("%s %s: %w", op.Op, op.Path, err)
		}
	}
	return json.Marshal(root)
}

// pointer splits a JSON Pointer into unescaped reference tokens.
func pointer(p string) []string {
	if p == "" {
		return nil
	}
	tokens := strings.Split(p[1:], "/")
	for i, tok := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
	}
	return tokens
}

func applyOp(doc any, op string, path []string, value any) (any, error) {
	if len(path) == 0 {
		if op == "remove" {
			return nil, fmt.Errorf("cannot remove the root")
		}
		return value, nil
	}
	key, rest := path[0], path[1:]
	switch d := doc.(type) {
	case map[string]any:
		if len(rest) > 0 {
			child, ok := d[key]
			if !ok {
				return nil, fmt.Errorf("no member %q", key)
			}
			v, err := applyOp(child, op, rest, value)
			d[key] = v
			return d, err
		}
		_, has := d[key]
		switch {
		case op == "remove" && has:
			delete(d, key)
		case op == "replace" && has, op == "add":
			d[key] = value
		default:
			return nil, fmt.Errorf("no member %q", key)
		}
		return d, nil
	case []any:
		if key == "-" && op == "add" && len(rest) == 0 {
			return append(d, value), nil
		}
		i, err := strconv.Atoi(key)
		if err != nil || i < 0 || i > len(d) || i == len(d) && op != "add" {
			return nil, fmt.Errorf("bad index %q", key)
		}
		if len(rest) > 0 {
			v, err := applyOp(d[i], op, rest, value)
			d[i] = v
			return d, err
		}
		switch op {
		case "remove":
			return append(d[:i], d[i+1:]...), nil
		case "replace":
			d[i] = value
			return d, nil
		}
		return append(d[:i], append([]any{value}, d[i:]...)...), nil
	}
	return nil, fmt.Errorf("%q: not a container", key)
}

// TestUnpatchableUpdateWarnsOnce: an update of a JSON resource from or to
// a version that is not valid JSON gets no patch, with one warning, from
// the build that found the update; the later builds, which meet the same
// two versions, say nothing more (Go's src/ holds an empty JSON file, and
// every build after its edit warned again).
func TestUnpatchableUpdateWarnsOnce(t *testing.T) {
	s := newSite(t, testBaseURL, func(c *config.Config) {
		c.ChangeList.Rotate = config.Duration{Duration: time.Hour}
		c.Sets = []config.Set{{Name: "data", SetLinks: config.SetLinks{KeepVersions: true, Patches: true}}}
	})
	s.write("bar.json", "")
	s.build(t0)
	s.write("bar.json", `{"a": 1}`)
	s.buildExpecting(t0.Add(time.Minute), "bar.json: no JSON Patch for this update")
	s.build(t0.Add(2 * time.Minute)) // the update is still in the open Change List
	s.build(t0.Add(2 * time.Hour))   // which closes
	s.build(t0.Add(3 * time.Hour))
}
