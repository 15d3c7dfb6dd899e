package contract

import (
	"fmt"
	"slices"
	"strings"
)

// InputKey is the field that holds plain text given to [Normalize]. It is
// "input" because a normalize node reads {{input}} by default, so the text
// stays reachable under the name the workflow author already uses.
const InputKey = "input"

// NormalizeResult is the output of a normalize node.
type NormalizeResult struct {
	// Original is the value as given (a deep copy).
	Original any `json:"original"`
	// Normalized is always a JSON object: the given object, the object parsed
	// from the given JSON string, or {"input": value} for anything else,
	// with defaults filled in.
	Normalized map[string]any `json:"normalized"`
	// DefaultsApplied lists, sorted, the fields that received a default.
	DefaultsApplied []string `json:"defaults_applied"`
}

// Normalize fills defaults into value and reports which it filled. It never
// modifies value or defaults.
//
// value may be:
//   - a JSON object (map[string]any, or any value that encodes to one);
//   - a string whose whole content, after trimming space, is a JSON object:
//     it is parsed;
//   - anything else, including plain text, a JSON array, a number or a string
//     that merely contains JSON: it is kept whole under [InputKey], so
//     {"input": "Write about Go"}. Plain text is a user's request and must
//     not be lost or reinterpreted; unlike [Check], Normalize does not hunt
//     for JSON inside prose, because a request such as "format it as
//     {title, body}" is not data.
//   - nil: it becomes an empty object, so every default applies.
//
// A field gets its default when it is missing, null, an empty or
// whitespace-only string, or an empty array. Empty objects are kept: an
// explicit {} is a value, and filling it would hide an upstream decision.
func Normalize(value any, defaults map[string]any) NormalizeResult {
	res := NormalizeResult{DefaultsApplied: []string{}}
	orig, err := jsonValue(value)
	if err != nil {
		// Not encodable as JSON (NaN, a channel...): keep its text rather
		// than drop the input.
		orig = fmt.Sprint(value)
	}
	res.Original = orig

	var obj map[string]any
	switch v := orig.(type) {
	case nil:
		obj = map[string]any{}
	case map[string]any:
		obj = mustCopy(v).(map[string]any)
	case string:
		if parsed, perr := decodeJSON(v); perr == nil {
			if m, ok := parsed.(map[string]any); ok {
				obj = m
			}
		}
	}
	if obj == nil {
		obj = map[string]any{InputKey: mustCopy(orig)}
	}

	for _, k := range sortedKeys(defaults) {
		if !isEmpty(obj[k], false) {
			continue
		}
		d, derr := jsonValue(defaults[k])
		if derr != nil {
			continue
		}
		obj[k] = d
		res.DefaultsApplied = append(res.DefaultsApplied, k)
	}
	res.Normalized = obj
	return res
}

// isEmpty reports whether v carries no content: null, a blank string, an
// empty array, and if emptyObject, an empty object.
func isEmpty(v any, emptyObject bool) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(v) == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		return emptyObject && len(v) == 0
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
