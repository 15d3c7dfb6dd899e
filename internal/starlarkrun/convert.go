package starlarkrun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"go.starlark.net/starlark"
)

// maxDepth bounds the nesting of a result: encoding/json's own bound on
// what it decodes, so the parent can read every result the child writes,
// and a list that contains itself ends in an error instead of a stack
// overflow.
const maxDepth = 10000

// decodeGlobals turns the JSON object of the globals into Starlark
// values: see Run for the mapping.
func decodeGlobals(gjson []byte) (starlark.StringDict, error) {
	dec := json.NewDecoder(bytes.NewReader(gjson))
	dec.UseNumber()
	var globals map[string]any
	if err := dec.Decode(&globals); err != nil {
		return nil, fmt.Errorf("decode the globals: %w", err)
	}
	out := make(starlark.StringDict, len(globals))
	for name, v := range globals {
		sv, err := toStarlark(v)
		if err != nil {
			return nil, fmt.Errorf("global %s: %w", name, err)
		}
		out[name] = sv
	}
	return out, nil
}

// toStarlark converts JSON data decoded with UseNumber. Numbers without a
// fraction or an exponent become int (of any size), as Python's
// json.loads makes them, so range(input["n"]) works; dict keys come in
// sorted order, so iterating a dict gives the same order on every run.
func toStarlark(v any) (starlark.Value, error) {
	switch x := v.(type) {
	case nil:
		return starlark.None, nil
	case bool:
		return starlark.Bool(x), nil
	case string:
		return starlark.String(x), nil
	case json.Number:
		return number(string(x))
	case float64: // data that did not come through UseNumber
		return starlark.Float(x), nil
	case []any:
		elems := make([]starlark.Value, len(x))
		for i, e := range x {
			sv, err := toStarlark(e)
			if err != nil {
				return nil, err
			}
			elems[i] = sv
		}
		return starlark.NewList(elems), nil
	case map[string]any:
		d := starlark.NewDict(len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			sv, err := toStarlark(x[k])
			if err != nil {
				return nil, err
			}
			if err := d.SetKey(starlark.String(k), sv); err != nil {
				return nil, err
			}
		}
		return d, nil
	}
	return nil, fmt.Errorf("%T is not JSON data", v)
}

// number converts a JSON number's text.
func number(s string) (starlark.Value, error) {
	if !strings.ContainsAny(s, ".eE") {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return starlark.MakeInt64(n), nil
		}
		if b, ok := new(big.Int).SetString(s, 10); ok {
			return starlark.MakeBigInt(b), nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("number %s does not fit a float", s)
	}
	return starlark.Float(f), nil
}

// encodeResult writes v as JSON, failing as soon as the text passes
// maxBytes (so a huge result costs no more than the limit) and on any
// value that is not JSON data, naming where it is: result["items"][3].
func encodeResult(v starlark.Value, maxBytes int) (string, error) {
	e := encoder{max: maxBytes}
	if err := e.value(v, 0); err != nil {
		return "", e.fail(err)
	}
	return e.buf.String(), nil
}

type encoder struct {
	buf bytes.Buffer
	max int
	// path is where the failing value sits, innermost segment first; it
	// is filled while the recursion unwinds from a failure.
	path []string
}

// tooLarge stops encoding once the text passes the limit.
type tooLarge struct{}

func (tooLarge) Error() string { return "too large" }

func (e *encoder) fail(err error) error {
	if _, ok := err.(tooLarge); ok {
		return fmt.Errorf("script result is more than %d bytes of JSON, the limit: %w", e.max, ErrTooLarge)
	}
	slices.Reverse(e.path)
	if len(e.path) > 8 {
		e.path = append(e.path[:8], "[…]")
	}
	return &ScriptError{Message: fmt.Sprintf("%s%s %v", ResultName, strings.Join(e.path, ""), err)}
}

func (e *encoder) write(b []byte) error {
	e.buf.Write(b)
	if e.buf.Len() > e.max {
		return tooLarge{}
	}
	return nil
}

func (e *encoder) value(v starlark.Value, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("is nested more than %d levels deep (does a list or dict contain itself?)", maxDepth)
	}
	switch x := v.(type) {
	case starlark.NoneType:
		return e.write([]byte("null"))
	case starlark.Bool:
		return e.write(strconv.AppendBool(nil, bool(x)))
	case starlark.Int:
		if n, ok := x.Int64(); ok {
			return e.write(strconv.AppendInt(nil, n, 10))
		}
		b := x.BigInt()
		if f, _ := new(big.Float).SetInt(b).Float64(); math.IsInf(f, 0) {
			return fmt.Errorf("is an int too large for JSON data (%d digits)", len(b.String()))
		}
		return e.write(b.Append(nil, 10))
	case starlark.Float:
		f := float64(x)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("is %v, which JSON cannot hold", x)
		}
		b, _ := json.Marshal(f)
		return e.write(b)
	case starlark.String:
		b, _ := json.Marshal(string(x)) // invalid UTF-8 becomes U+FFFD
		return e.write(b)
	case *starlark.List:
		return e.array(x.Len(), x.Index, depth)
	case starlark.Tuple:
		return e.array(x.Len(), x.Index, depth)
	case *starlark.Dict:
		if err := e.write([]byte("{")); err != nil {
			return err
		}
		i := 0
		for k, val := range x.Entries() {
			ks, ok := k.(starlark.String)
			if !ok {
				return fmt.Errorf("is a dict with a key of type %s (%s): JSON object keys are strings, convert it with str()", k.Type(), k)
			}
			if i > 0 {
				if err := e.write([]byte(",")); err != nil {
					return err
				}
			}
			i++
			kb, _ := json.Marshal(string(ks))
			if err := e.write(append(kb, ':')); err != nil {
				return err
			}
			if err := e.value(val, depth+1); err != nil {
				e.path = append(e.path, "["+string(kb)+"]")
				return err
			}
		}
		return e.write([]byte("}"))
	case *starlark.Set:
		return fmt.Errorf("is a set, which JSON cannot hold: convert it with sorted() or list()")
	}
	return fmt.Errorf("is a %s, which is not JSON data (None, bool, int, float, str, list, tuple or dict)", v.Type())
}

func (e *encoder) array(n int, at func(int) starlark.Value, depth int) error {
	if err := e.write([]byte("[")); err != nil {
		return err
	}
	for i := range n {
		if i > 0 {
			if err := e.write([]byte(",")); err != nil {
				return err
			}
		}
		if err := e.value(at(i), depth+1); err != nil {
			e.path = append(e.path, "["+strconv.Itoa(i)+"]")
			return err
		}
	}
	return e.write([]byte("]"))
}
