package generator

// An RFC 6902 JSON Patch between two versions of a JSON resource, for the
// patch links of §14.4. The patch works on values, not bytes: applied to
// the previous version it gives a document equal, as JSON, to the current
// one; its formatting is the Destination's to choose.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// patchOp is one operation of a JSON Patch.
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// jsonPatch returns the JSON Patch that turns the JSON document prev into
// next. Numbers keep their text, so that no precision is lost.
func jsonPatch(prev, next []byte) ([]byte, error) {
	a, err := decodeJSON(prev)
	if err != nil {
		return nil, fmt.Errorf("previous version: %w", err)
	}
	b, err := decodeJSON(next)
	if err != nil {
		return nil, fmt.Errorf("current version: %w", err)
	}
	ops := diffJSON(nil, "", a, b)
	var buf bytes.Buffer
	buf.WriteString("[")
	for i, op := range ops {
		if i > 0 {
			buf.WriteString(",")
		}
		buf.WriteString("\n  ")
		line, err := marshalOp(op)
		if err != nil {
			return nil, err
		}
		buf.Write(line)
	}
	buf.WriteString("\n]\n")
	return buf.Bytes(), nil
}

// marshalOp writes an operation; a null value is written, not omitted,
// for the operations that take one.
func marshalOp(op patchOp) ([]byte, error) {
	if op.Op != "remove" && op.Value == nil {
		return fmt.Appendf(nil, `{"op":%q,"path":%s,"value":null}`, op.Op, strconv.Quote(op.Path)), nil
	}
	return json.Marshal(op)
}

func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

// diffJSON appends to ops the operations that turn a into b at path.
func diffJSON(ops []patchOp, path string, a, b any) []patchOp {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		for _, k := range sortedKeys(av) {
			if _, kept := bv[k]; !kept {
				ops = append(ops, patchOp{Op: "remove", Path: path + "/" + escapePointer(k)})
			}
		}
		for _, k := range sortedKeys(bv) {
			p := path + "/" + escapePointer(k)
			if old, had := av[k]; had {
				ops = diffJSON(ops, p, old, bv[k])
			} else {
				ops = append(ops, patchOp{Op: "add", Path: p, Value: bv[k]})
			}
		}
		return ops
	case []any:
		bv, ok := b.([]any)
		if !ok {
			break
		}
		common := min(len(av), len(bv))
		for i := range common {
			ops = diffJSON(ops, path+"/"+strconv.Itoa(i), av[i], bv[i])
		}
		for i := len(av) - 1; i >= common; i-- {
			ops = append(ops, patchOp{Op: "remove", Path: path + "/" + strconv.Itoa(i)})
		}
		for _, v := range bv[common:] {
			ops = append(ops, patchOp{Op: "add", Path: path + "/-", Value: v})
		}
		return ops
	default:
		// Scalars: numbers compare by their text, so a number written
		// differently is replaced, which is harmless.
		if a == b {
			return ops
		}
	}
	return append(ops, patchOp{Op: "replace", Path: path, Value: b})
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// escapePointer escapes a key as a JSON Pointer reference token (RFC 6901).
func escapePointer(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}
