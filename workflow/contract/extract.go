package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// kindAny, kindObject and kindArray tell extractJSON which JSON value a
// caller expects, so that "see [1]" in prose is not taken for the payload
// when the schema wants an object.
const (
	kindAny = iota
	kindObject
	kindArray
)

// maxCandidates bounds how many opening brackets extractJSON tries as the
// start of a JSON value. Each try is linear in the input, so without a bound
// a long prose full of brackets would cost quadratic time.
const maxCandidates = 256

// errNoJSON reports text that holds no parseable JSON value.
var errNoJSON = errors.New("no JSON value found in the text: expected a JSON document, a ```json code fence or a {...}/[...] block")

// extractJSON finds the JSON value an LLM meant to return in text. It tries,
// in order: the whole text (which wins whatever its kind), the content of
// ```json fences, the content of other ``` fences, and each balanced {...}
// or [...] substring among the first maxCandidates opening brackets. The
// first candidate that parses and has the wanted kind wins; if none has the
// wanted kind, the first candidate that parsed is returned, so the caller
// can report the wrong type instead of "no JSON".
func extractJSON(text string, want int) (any, error) {
	var first any
	found := false
	// try reports whether the search is over.
	try := func(s string) bool {
		v, err := decodeJSON(s)
		if err != nil {
			return false
		}
		if matchesKind(v, want) {
			first, found = v, true
			return true
		}
		if !found {
			first, found = v, true
		}
		return false
	}

	// The whole text being JSON settles it, whatever its kind.
	if v, err := decodeJSON(text); err == nil {
		return v, nil
	}
	fences := codeFences(text)
	for _, f := range fences {
		if f.json && try(f.body) {
			return first, nil
		}
	}
	for _, f := range fences {
		if !f.json && try(f.body) {
			return first, nil
		}
	}
	// Balanced brackets: a candidate that parses is skipped whole, so the
	// array inside a wrong-kind object is never taken for the payload.
	tries := 0
	for i := 0; i < len(text) && tries < maxCandidates; i++ {
		c := text[i]
		if c != '{' && c != '[' {
			continue
		}
		tries++
		end := matchBracket(text, i)
		if end < 0 {
			continue
		}
		v, err := decodeJSON(text[i : end+1])
		if err != nil {
			continue
		}
		if matchesKind(v, want) {
			return v, nil
		}
		if !found {
			first, found = v, true
		}
		i = end
	}
	if found {
		return first, nil
	}
	return nil, errNoJSON
}

func matchesKind(v any, want int) bool {
	switch want {
	case kindObject:
		_, ok := v.(map[string]any)
		return ok
	case kindArray:
		_, ok := v.([]any)
		return ok
	}
	return true
}

// decodeJSON parses exactly one JSON value. Numbers stay json.Number so that
// large integers (IDs, counts) survive a round trip unchanged.
func decodeJSON(s string) (any, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errNoJSON
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the JSON value")
	}
	return v, nil
}

type fence struct {
	body string
	json bool // info string is "json" (any case)
}

// codeFences returns the bodies of the Markdown ``` fences in text, in order.
// An unterminated last fence runs to the end of the text: models that hit
// their token limit often stop before the closing fence.
func codeFences(text string) []fence {
	var out []fence
	rest := text
	for {
		start := strings.Index(rest, "```")
		if start < 0 {
			return out
		}
		rest = rest[start+3:]
		info, body, ok := strings.Cut(rest, "\n")
		if !ok {
			// "```{...}```" on one line: no info string.
			info, body = "", rest
		}
		isJSON := strings.EqualFold(strings.TrimSpace(info), "json")
		if !isJSON && strings.ContainsAny(strings.TrimSpace(info), "{[") {
			// The "info string" is the payload itself.
			info, body = "", rest
		}
		end := strings.Index(body, "```")
		if end < 0 {
			out = append(out, fence{body: body, json: isJSON})
			return out
		}
		out = append(out, fence{body: body[:end], json: isJSON})
		rest = body[end+3:]
	}
}

// matchBracket returns the index of the bracket closing the one at text[open],
// skipping brackets inside JSON strings, or -1.
func matchBracket(text string, open int) int {
	var stack []byte
	inString, escaped := false, false
	for i := open; i < len(text); i++ {
		c := text[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{':
			stack = append(stack, '}')
		case '[':
			stack = append(stack, ']')
		case '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return -1
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return i
			}
		}
	}
	return -1
}

// jsonValue returns a deep copy of v made only of JSON types: nil, bool,
// string, json.Number, float64, the Go integer types, []any and
// map[string]any. Other values (structs, typed slices and maps) go through
// encoding/json. The copy is what lets Check and Normalize repair data
// without touching the caller's value.
func jsonValue(v any) (any, error) {
	switch v := v.(type) {
	case nil, bool, string, json.Number,
		int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return v, nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("number %v is not valid JSON", v)
		}
		return v, nil
	case float32:
		return jsonValue(float64(v))
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			c, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			c, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case json.RawMessage:
		return decodeJSON(string(v))
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// mustCopy deep-copies a value that jsonValue already accepted once.
func mustCopy(v any) any {
	c, err := jsonValue(v)
	if err != nil {
		return v
	}
	return c
}

// jsonType names the JSON type of a value produced by jsonValue.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number, float64, float32,
		int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return "invalid"
	}
}

// isInteger reports whether a JSON number has no fractional part, as JSON
// Schema defines "integer" (3.0 is an integer).
func isInteger(v any) bool {
	switch v := v.(type) {
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return true
	case float64:
		return v == math.Trunc(v)
	case float32:
		return float64(v) == math.Trunc(float64(v))
	case json.Number:
		if _, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return true
		}
		f, err := strconv.ParseFloat(string(v), 64)
		return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
	}
	return false
}

// numberValue returns a JSON number as float64 for comparisons.
func numberValue(v any) (float64, bool) {
	switch v := v.(type) {
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	case float64:
		return v, true
	case float32:
		return float64(v), true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint()), true
	}
	return 0, false
}

// textInput turns raw values that carry text ([]byte, json.RawMessage is
// handled by jsonValue) into a string.
func textInput(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case []byte:
		return string(v), true
	}
	return "", false
}
