package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// RawCall is a tool call as a model produced it. Arguments is either a
// JSON string holding a JSON object (the OpenAI wire format) or the object
// itself.
type RawCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Call is a validated call: a known, visible tool and arguments that
// match its schema.
type Call struct {
	ID   string
	Name string
	Args map[string]any
	Tool *Tool
	// Key identifies the call for the loop guardrails: the tool and its
	// arguments in canonical JSON.
	Key string
}

// maxArgumentBytes bounds the arguments of one call.
const maxArgumentBytes = 1 << 20

// Validate checks raw against the visible tools (gate 1). It returns the
// call, or a refusal result saying what was wrong. Truncated or
// unparseable arguments are never executed, and nothing is guessed.
func Validate(visible []*Tool, raw RawCall) (*Call, *Result) {
	refuse := func(rule, format string, args ...any) (*Call, *Result) {
		r := refused(GateValidation, rule, fmt.Sprintf(format, args...))
		r.CallID, r.Tool = raw.ID, raw.Name
		r.Effect = EffectNone
		return nil, &r
	}
	i := slices.IndexFunc(visible, func(t *Tool) bool { return t.Name == raw.Name })
	if i < 0 {
		return refuse("validation.unknown-tool", "unknown tool %q; the available tools are: %s",
			raw.Name, strings.Join(Names(visible), ", "))
	}
	t := visible[i]
	if len(raw.Arguments) > maxArgumentBytes {
		return refuse("validation.too-large", "the arguments are over %d bytes; nothing ran", maxArgumentBytes)
	}
	args, err := decodeArguments(raw.Arguments)
	if err != nil {
		return refuse("validation.arguments", "the arguments of %s are not a complete JSON object (%v); nothing ran", raw.Name, err)
	}
	if err := checkSchema(t.Schema, args); err != nil {
		return refuse("validation.schema", "invalid arguments for %s: %v; nothing ran", raw.Name, err)
	}
	key, _ := json.Marshal(args) // maps marshal with sorted keys
	return &Call{ID: raw.ID, Name: t.Name, Args: args, Tool: t, Key: t.Name + " " + string(key)}, nil
}

// decodeArguments decodes the arguments into an object. A JSON string is
// decoded once more (OpenAI sends the arguments as a string). Numbers stay
// json.Number until the schema check converts them.
func decodeArguments(b json.RawMessage) (map[string]any, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, fmt.Errorf("no arguments")
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("reading the arguments string: %w", err)
		}
		b = bytes.TrimSpace([]byte(s))
		if len(b) == 0 {
			// An empty string is how some models say "no arguments".
			b = []byte("{}")
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the object")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("arguments must be a JSON object, not %s", jsonKind(v))
	}
	return m, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	}
	return "an object"
}

// checkSchema checks args against an object schema and converts numbers:
// required properties, no unknown properties, property types. A string is
// accepted for a number property only when the property says
// "x-coerce-number": true. It rewrites args in place (numbers become int
// or float64).
func checkSchema(schema map[string]any, args map[string]any) error {
	props, _ := schema["properties"].(map[string]any)
	for _, name := range stringList(schema["required"]) {
		if _, ok := args[name]; !ok {
			return fmt.Errorf("missing required property %q", name)
		}
	}
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		p, ok := props[k].(map[string]any)
		if !ok {
			return fmt.Errorf("unknown property %q (known: %s)", k, strings.Join(sortedKeys(props), ", "))
		}
		v, err := checkValue(k, p, args[k])
		if err != nil {
			return err
		}
		args[k] = v
	}
	return nil
}

func checkValue(name string, p map[string]any, v any) (any, error) {
	typ, _ := p["type"].(string)
	coerce, _ := p["x-coerce-number"].(bool)
	switch typ {
	case "string":
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%q must be a string, not %s", name, jsonKind(v))
		}
		if enum := stringList(p["enum"]); len(enum) > 0 && !slices.Contains(enum, s) {
			return nil, fmt.Errorf("%q must be one of %s", name, strings.Join(enum, ", "))
		}
		return s, nil
	case "boolean":
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("%q must be a boolean, not %s", name, jsonKind(v))
		}
		return b, nil
	case "integer", "number":
		var n json.Number
		switch x := v.(type) {
		case json.Number:
			n = x
		case float64:
			n = json.Number(strconv.FormatFloat(x, 'f', -1, 64))
		case int:
			n = json.Number(strconv.Itoa(x))
		case string:
			if !coerce {
				return nil, fmt.Errorf("%q must be a number, not a string", name)
			}
			n = json.Number(strings.TrimSpace(x))
		default:
			return nil, fmt.Errorf("%q must be a number, not %s", name, jsonKind(v))
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%q: %q is not a number", name, string(n))
		}
		if min, ok := p["minimum"].(float64); ok && f < min {
			return nil, fmt.Errorf("%q must be at least %v", name, min)
		}
		if max, ok := p["maximum"].(float64); ok && f > max {
			return nil, fmt.Errorf("%q must be at most %v", name, max)
		}
		if typ == "integer" {
			if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
				return nil, fmt.Errorf("%q must be an integer", name)
			}
			return int(f), nil
		}
		return f, nil
	case "array":
		xs, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%q must be an array, not %s", name, jsonKind(v))
		}
		item, _ := p["items"].(map[string]any)
		for i, x := range xs {
			if item == nil {
				continue
			}
			y, err := checkValue(fmt.Sprintf("%s[%d]", name, i), item, x)
			if err != nil {
				return nil, err
			}
			xs[i] = y
		}
		return xs, nil
	}
	return v, nil
}

func stringList(v any) []string {
	switch x := v.(type) {
	case []string:
		return x
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Argument accessors for handlers; Validate has already checked types.
func argString(a map[string]any, k string) string { s, _ := a[k].(string); return s }
func argBool(a map[string]any, k string) bool     { b, _ := a[k].(bool); return b }
func argInt(a map[string]any, k string) (int, bool) {
	n, ok := a[k].(int)
	return n, ok
}
