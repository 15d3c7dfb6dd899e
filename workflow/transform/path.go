package transform

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// segment is one step of a path: an object key or an array index.
type segment struct {
	key     string
	index   int
	isIndex bool
}

func (s segment) String() string {
	if s.isIndex {
		return "[" + strconv.Itoa(s.index) + "]"
	}
	if s.key == "" || strings.ContainsAny(s.key, `.[]"' `) {
		return "[" + strconv.Quote(s.key) + "]"
	}
	return "." + s.key
}

// Extract returns the value at path inside v. It is the json_path mode's
// language, a small subset of JSONPath that selects one value:
//
//	$                 the whole value ("" too)
//	$.items[0].title  keys after '.', array indexes in brackets
//	items[0].title    the leading "$." is optional
//	$.items[-1]       a negative index counts from the end
//	$["a.b"]['c d']   quoted keys, for names with '.', '[', spaces
//
// Wildcards, slices, filters and recursive descent are not supported: a
// node output is one value, and a missing step is an error that names it
// (wrapping ErrReference) rather than an empty result that a later node
// would mistake for data.
func Extract(v any, path string) (any, error) {
	segs, err := parsePath(path)
	if err != nil {
		return nil, err
	}
	return walk(v, segs, "$")
}

// parsePath splits path into segments; it reports the first malformed
// character with its byte offset.
func parsePath(path string) ([]segment, error) {
	p := strings.TrimSpace(path)
	if p == "$" || p == "" {
		return nil, nil
	}
	p = strings.TrimPrefix(p, "$")
	var segs []segment
	i := 0
	bad := func(msg string) error {
		return fmt.Errorf("invalid path %q at character %d: %s (write a path such as $.items[0].title)", path, len(path)-len(p)+i+1, msg)
	}
	first := !strings.HasPrefix(strings.TrimSpace(path), "$")
	for i < len(p) {
		switch c := p[i]; {
		case c == '.' || first && c != '[':
			if c == '.' {
				i++
			}
			first = false
			j := i
			for j < len(p) && p[j] != '.' && p[j] != '[' {
				j++
			}
			if j == i {
				return nil, bad("empty key")
			}
			key := p[i:j]
			if strings.ContainsAny(key, " \t\n]\"'") {
				return nil, bad(fmt.Sprintf("key %q needs brackets and quotes, as [%q]", key, key))
			}
			segs = append(segs, segment{key: key})
			i = j
		case c == '[':
			first = false
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				return nil, bad("'[' without ']'")
			}
			if q := p[i+1]; q == '"' || q == '\'' {
				// The closing quote may be followed by ']' inside the key.
				close := strings.IndexByte(p[i+2:], q)
				if close < 0 {
					return nil, bad("unterminated quoted key")
				}
				key := p[i+2 : i+2+close]
				rest := strings.TrimLeft(p[i+2+close+1:], " ")
				if !strings.HasPrefix(rest, "]") {
					return nil, bad("want ']' after a quoted key")
				}
				segs = append(segs, segment{key: key})
				i = len(p) - len(rest) + 1
				continue
			}
			inner := strings.TrimSpace(p[i+1 : i+end])
			n, err := strconv.Atoi(inner)
			if err != nil {
				return nil, bad(fmt.Sprintf("%q is not an index; quote keys, as [%q]", inner, inner))
			}
			segs = append(segs, segment{index: n, isIndex: true})
			i += end + 1
		default:
			return nil, bad(fmt.Sprintf("unexpected %q", c))
		}
	}
	return segs, nil
}

// walk follows segs from v; at is the path walked so far, for errors.
func walk(v any, segs []segment, at string) (any, error) {
	for _, s := range segs {
		switch x := v.(type) {
		case map[string]any:
			if s.isIndex {
				return nil, fmt.Errorf("%s is an object, not an array: use a key instead of %s: %w", at, s, ErrReference)
			}
			e, ok := x[s.key]
			if !ok {
				return nil, fmt.Errorf("%s has no key %q (keys: %s): %w", at, s.key, keyList(x), ErrReference)
			}
			v = e
		case []any:
			if !s.isIndex {
				return nil, fmt.Errorf("%s is an array, not an object: use an index such as [0] instead of %s: %w", at, s, ErrReference)
			}
			i := s.index
			if i < 0 {
				i += len(x)
			}
			if i < 0 || i >= len(x) {
				return nil, fmt.Errorf("%s%s: index out of range (the array has %d items): %w", at, s, len(x), ErrReference)
			}
			v = x[i]
		default:
			return nil, fmt.Errorf("%s is %s, which has no %s: %w", at, kindOf(v), s, ErrReference)
		}
		at += s.String()
	}
	return v, nil
}

func keyList(m map[string]any) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	const max = 10
	if len(keys) > max {
		return strings.Join(keys[:max], ", ") + fmt.Sprintf(" and %d more", len(keys)-max)
	}
	return strings.Join(keys, ", ")
}

// kindOf names v's JSON type for errors.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case float64, json.Number, int, int64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}
