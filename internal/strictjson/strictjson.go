// Package strictjson finds the keys of a JSON document that the Go value it
// is decoded into does not declare, and names them by their path
// (middleware.guard.rules[0].nme).
//
// encoding/json's DisallowUnknownFields refuses such a key but names only
// the key itself, and it cannot see into a json.RawMessage kept for later
// decoding, as an agent's middleware settings are. Check walks the document
// and the type side by side:
//
//	var b body
//	if err := json.Unmarshal(data, &b); err != nil { ... }
//	if err := strictjson.Check(data, &b, ""); err != nil {
//		// err is an *UnknownFieldError naming the path and the known keys
//	}
//
// Keys match fields as encoding/json matches them (the json tag or the
// field name, case-insensitively; embedded structs are inlined). Values of
// types with their own UnmarshalJSON or UnmarshalText, interfaces and
// json.RawMessage are not looked into.
package strictjson

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// UnknownFieldError names a key the target type does not declare.
type UnknownFieldError struct {
	// Path is the key's path from the document's root, dot-separated with
	// [i] for array elements: middleware.gaurd.
	Path string
	// Known lists the keys allowed where the unknown one stands, sorted.
	Known []string
}

func (e *UnknownFieldError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("unknown field %q: remove it", e.Path)
	}
	return fmt.Sprintf("unknown field %q: use one of %s", e.Path, strings.Join(e.Known, ", "))
}

// Check reports the first key of data, in sorted order, that v's type does
// not declare, as an *UnknownFieldError whose path starts with at (empty
// for the root). Data that is not valid JSON is not Check's business: it
// returns nil and leaves the error to the decoder.
func Check(data []byte, v any, at string) error {
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil
	}
	return walk(doc, reflect.TypeOf(v), at)
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func walk(doc any, t reflect.Type, at string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := doc.(map[string]any)
		if !ok {
			return nil
		}
		fields := fieldsOf(t)
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			ft, ok := lookup(fields, k)
			if !ok {
				known := make([]string, 0, len(fields))
				for name := range fields {
					known = append(known, name)
				}
				slices.Sort(known)
				return &UnknownFieldError{Path: join(at, k), Known: known}
			}
			if err := walk(obj[k], ft, join(at, k)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		list, ok := doc.([]any)
		if !ok {
			return nil
		}
		for i, el := range list {
			if err := walk(el, t.Elem(), at+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case reflect.Map:
		obj, ok := doc.(map[string]any)
		if !ok {
			return nil
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if err := walk(obj[k], t.Elem(), join(at, k)); err != nil {
				return err
			}
		}
	}
	return nil
}

// join appends key to the path at. A key that is empty or holds the
// path's own punctuation is quoted, so the path stays readable and
// unambiguous: a."b.c", a."".
func join(at, key string) string {
	if key == "" || strings.ContainsAny(key, ".[]\" \t\n") {
		key = strconv.Quote(key)
	}
	if at == "" {
		return key
	}
	return at + "." + key
}

// lookup finds key as encoding/json does: the exact name first, then a
// case-insensitive match.
func lookup(fields map[string]reflect.Type, key string) (reflect.Type, bool) {
	if t, ok := fields[key]; ok {
		return t, true
	}
	for name, t := range fields {
		if strings.EqualFold(name, key) {
			return t, true
		}
	}
	return nil, false
}

// fieldsOf maps the JSON names of t's fields to their types, inlining
// embedded structs that have no name of their own.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for n, typ := range fieldsOf(ft) {
					if _, taken := out[n]; !taken {
						out[n] = typ
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
