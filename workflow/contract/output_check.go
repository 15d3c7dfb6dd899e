package contract

import (
	"fmt"
	"slices"
	"strings"
)

// OutputRules configure [OutputCheck].
type OutputRules struct {
	// Required fields must be present and non-empty. Default none.
	Required []string `json:"required"`
	// Types maps a top-level field to its JSON type: string, number,
	// integer, boolean, array or object. A field absent from the output is
	// checked only if it is required. Default none.
	Types map[string]string `json:"types"`
	// Forbidden lists fixed fallback values ("No content generated", 0...)
	// that must not appear as a field's value or as an array item, at any
	// depth. Strings match after trimming space. Default none.
	Forbidden []any `json:"forbidden"`
}

// Problem is one reason an output was rejected.
type Problem struct {
	// Field is the dotted path of the field ("x_posts", "posts[0].text");
	// "$" is the output itself.
	Field   string `json:"field"`
	Message string `json:"message"`
}

// OutputResult is the output of an output_check node.
type OutputResult struct {
	OK bool `json:"ok"`
	// Problems is never null in JSON. Order: required fields as listed in
	// the rules, then types by field, then placeholders by field.
	Problems []Problem `json:"problems"`
	// Value is the checked object (decoded from text when the output was
	// text), so a passing check can hand on structured data.
	Value map[string]any `json:"-"`
}

// placeholderWords are strings models leave where content should be.
var placeholderWords = []string{"todo", "tbd", "placeholder", "lorem ipsum"}

// OutputCheck rejects an output with missing, empty, mistyped or
// placeholder fields. value is a JSON object, or text holding one (found as
// [Check] finds JSON in prose).
//
// Empty means null, a blank string, an empty array or an empty object.
// Placeholders are checked in every field at any depth, required or not:
//   - a string equal to its own key name ("title": "title"), or to TODO,
//     TBD, placeholder or lorem ipsum (any case);
//   - an array whose items are all strings equal to its key name
//     ("x_posts": ["x_posts"]), the echo of a template a model did not fill;
//   - a value, or an array item, equal to one of rules.Forbidden.
//
// Type names in rules other than the six JSON ones are reported as problems
// so that a typo in the node config does not silently disable a check.
func OutputCheck(value any, rules OutputRules) OutputResult {
	res := OutputResult{Problems: []Problem{}}
	add := func(field, format string, args ...any) {
		res.Problems = append(res.Problems, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}

	var v any
	var err error
	if text, ok := textInput(value); ok {
		v, err = extractJSON(text, kindObject)
		if err != nil {
			add("$", "output is text with no JSON object in it; the agent must return a JSON object")
			return res
		}
	} else if v, err = jsonValue(value); err != nil {
		add("$", "output is not JSON: %v", err)
		return res
	}
	obj, ok := v.(map[string]any)
	if !ok {
		add("$", "output is %s, want a JSON object", jsonType(v))
		return res
	}
	res.Value = obj

	for _, f := range rules.Required {
		fv, present := obj[f]
		switch {
		case !present:
			add(f, "required field is missing")
		case isEmpty(fv, true):
			add(f, "required field is empty (%s)", describe(fv))
		}
	}

	for _, f := range sortedKeys(rules.Types) {
		want := rules.Types[f]
		if !slices.Contains([]string{"string", "number", "integer", "boolean", "array", "object"}, want) {
			add(f, "unknown type %q in the rules; use string, number, integer, boolean, array or object", want)
			continue
		}
		fv, present := obj[f]
		if !present || (fv == nil && slices.Contains(rules.Required, f)) {
			continue // reported as missing or empty above, or optional
		}
		if !allows([]string{want}, fv) {
			add(f, "is %s, want %s", describe(fv), want)
		}
	}

	var forbidden []any
	for _, fb := range rules.Forbidden {
		if c, err := jsonValue(fb); err == nil {
			forbidden = append(forbidden, c)
		}
	}
	placeholders(obj, "", forbidden, add)

	res.OK = len(res.Problems) == 0
	return res
}

// placeholders reports placeholder values in obj, recursively.
func placeholders(obj map[string]any, path string, forbidden []any, add func(field, format string, args ...any)) {
	for _, k := range sortedKeys(obj) {
		checkValue(obj[k], k, joinKey(path, k), forbidden, add)
	}
}

// checkValue checks v, the value of key (or an item of its array).
func checkValue(v any, key, path string, forbidden []any, add func(field, format string, args ...any)) {
	if isForbidden(v, forbidden) {
		add(path, "holds the fixed fallback value %s", describe(v))
		return
	}
	switch v := v.(type) {
	case string:
		if isPlaceholder(v, key) {
			add(path, "holds the placeholder %q instead of content", v)
		}
	case []any:
		if len(v) > 0 && allItemsAre(v, key) {
			add(path, "every item is the field name %q: the template was echoed instead of filled", key)
			return
		}
		for i, item := range v {
			ipath := joinIndex(path, i)
			switch item := item.(type) {
			case map[string]any:
				placeholders(item, ipath, forbidden, add)
			case []any:
				checkValue(item, key, ipath, forbidden, add)
			default:
				if isForbidden(item, forbidden) {
					add(ipath, "holds the fixed fallback value %s", describe(item))
				} else if s, ok := item.(string); ok && isPlaceholderWord(s) {
					add(ipath, "holds the placeholder %q instead of content", s)
				}
			}
		}
	case map[string]any:
		placeholders(v, path, forbidden, add)
	}
}

func allItemsAre(items []any, key string) bool {
	for _, it := range items {
		s, ok := it.(string)
		if !ok || !strings.EqualFold(strings.TrimSpace(s), key) {
			return false
		}
	}
	return true
}

func isPlaceholder(s, key string) bool {
	return strings.EqualFold(strings.TrimSpace(s), key) || isPlaceholderWord(s)
}

func isPlaceholderWord(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	return slices.Contains(placeholderWords, s)
}

func isForbidden(v any, forbidden []any) bool {
	for _, fb := range forbidden {
		if s, ok := v.(string); ok {
			if fs, ok := fb.(string); ok && strings.TrimSpace(s) == strings.TrimSpace(fs) {
				return true
			}
			continue
		}
		if jsonEqual(v, fb) {
			return true
		}
	}
	return false
}

// describe shows a value briefly in a problem message.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if strings.TrimSpace(v) == "" {
			return "a blank string"
		}
		if r := []rune(v); len(r) > 40 {
			v = string(r[:40]) + "…"
		}
		return fmt.Sprintf("the string %q", v)
	case []any:
		if len(v) == 0 {
			return "an empty array"
		}
		return fmt.Sprintf("an array of %d items", len(v))
	case map[string]any:
		if len(v) == 0 {
			return "an empty object"
		}
		return "an object"
	}
	return fmt.Sprintf("the %s %v", jsonType(v), v)
}
