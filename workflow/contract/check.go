package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Status is the outcome of a contract check.
type Status string

const (
	// StatusOK: the value matched the schema as it was.
	StatusOK Status = "ok"
	// StatusNormalized: the value matched after safe repairs; the report
	// lists each one.
	StatusNormalized Status = "normalized"
	// StatusFailed: the value does not match and cannot be safely repaired.
	// The run must stop.
	StatusFailed Status = "failed"
)

// Options tune [Check]. A nil *Options means the defaults.
type Options struct {
	// Start is the run's start input, normalized. Default nil.
	Start map[string]any
	// AllowStartFallback lets Check take a required top-level field that
	// the upstream output lacks from Start (when Start has a non-empty
	// value). Default false: a field the upstream agent dropped usually
	// means it ignored its instructions, and copying the user's input over
	// would hide that. It works whether or not repair is on, because the
	// workflow author asked for it explicitly.
	AllowStartFallback bool
}

// Report describes a contract check. Every list is sorted and never null in
// JSON. Paths are dotted from the checked value: "topic", "meta.author",
// "posts[0].text"; "$" is the value itself.
type Report struct {
	Status Status `json:"status"`
	// SchemaValidBeforeNormalization is true only when the value matched
	// without any repair.
	SchemaValidBeforeNormalization bool `json:"schema_valid_before_normalization"`
	// MissingRequired lists required fields still absent after repair.
	MissingRequired []string `json:"missing_required"`
	// DefaultedOptional lists optional fields filled from the schema's
	// "default".
	DefaultedOptional []string `json:"defaulted_optional"`
	// FallbackFromStart lists required fields taken from Options.Start.
	FallbackFromStart []string `json:"fallback_from_start"`
	// MovedFields lists the original paths of fields moved out of a wrapper
	// object to the top level ("handoff.topic" became "topic").
	MovedFields []string `json:"moved_fields"`
	// CoercedFields lists values whose JSON type was safely converted: a
	// numeric or boolean string to a number or boolean, a single value to a
	// one-element array.
	CoercedFields []string `json:"coerced_fields"`
	// InvalidTypes lists values whose type is wrong and was not converted.
	InvalidTypes []string `json:"invalid_types"`
	// Notes explain, for a person, each repair and each failure, naming the
	// field and the schema rule.
	Notes []string `json:"notes"`
}

// Result is the output of a contract node.
type Result struct {
	// Raw is the upstream output as given.
	Raw any `json:"raw"`
	// Normalized is the checked value, repaired if the status is
	// normalized. It is nil when the status is failed, so that nothing
	// downstream can consume half a schema by mistake.
	Normalized any `json:"normalized"`
	// Contract reports what the check found and did.
	Contract Report `json:"contract"`
}

// Check extracts the JSON value in raw, validates it against s and, if
// repair is true and the value does not match, applies only safe repairs and
// validates again.
//
// raw may be a decoded JSON value (map, slice, number...) or text. From text,
// Check takes the whole text if it is JSON, else the first ```json fence
// that parses, else the first other ``` fence, else the first balanced
// {...} or [...] substring that parses, preferring the kind the schema's
// root type asks for. If the schema's root allows only strings, the text is
// the value. Text without JSON fails the check.
//
// Safe repairs, applied in this order:
//   - wrapper: when required top-level fields are missing and the object
//     has a single key, or a key named data, result, output, response or
//     the schema's title, that the schema does not declare and whose object
//     value holds every missing field, that object's fields move to the top
//     level. Otherwise each missing required field found in exactly one
//     undeclared object one level down moves up.
//   - a numeric string where the schema wants a number or integer, and
//     "true"/"false" (any case) where it wants a boolean, are converted.
//   - a single non-empty value where the schema wants an array becomes a
//     one-element array, if it matches the item type.
//   - an optional property that is missing, or null where the schema does
//     not allow null, gets the schema's "default".
//
// Check never invents a required field: one that is still missing fails
// the check, unless opts allows taking it from the start input. Repairs
// follow "properties", "items", $ref and allOf; they do not guess inside
// anyOf or oneOf. Check never modifies raw.
func Check(raw any, s *Schema, repair bool, opts *Options) Result {
	res := Result{Raw: raw, Contract: Report{
		MissingRequired:   []string{},
		DefaultedOptional: []string{},
		FallbackFromStart: []string{},
		MovedFields:       []string{},
		CoercedFields:     []string{},
		InvalidTypes:      []string{},
		Notes:             []string{},
	}}
	if b, ok := raw.([]byte); ok {
		res.Raw = string(b) // not base64 in the stored result
	}
	rep := &res.Contract
	rep.Status = StatusFailed
	if s == nil || s.compiled == nil {
		rep.Notes = append(rep.Notes, "no schema: compile the contract's schema with contract.Compile")
		return res
	}
	root := s.compiled

	data, err := input(raw, root)
	if err != nil {
		rep.Notes = append(rep.Notes, err.Error())
		return res
	}
	verr := root.Validate(data)
	if verr == nil {
		rep.Status = StatusOK
		rep.SchemaValidBeforeNormalization = true
		res.Normalized = data
		return res
	}

	r := &repairer{rep: rep}
	if repair {
		data = r.unwrap(data, root)
		data = r.coerce(data, root, "")
	}
	if opts != nil && opts.AllowStartFallback {
		r.fallback(data, root, opts.Start)
	}
	if r.changed {
		verr = root.Validate(data)
	}
	for _, l := range [][]string{rep.DefaultedOptional, rep.FallbackFromStart, rep.MovedFields, rep.CoercedFields} {
		slices.Sort(l)
	}
	if verr == nil {
		rep.Status = StatusNormalized
		res.Normalized = data
		return res
	}
	r.explain(verr, data)
	return res
}

// input turns raw into the JSON value to check.
func input(raw any, root *jsonschema.Schema) (any, error) {
	text, ok := textInput(raw)
	if !ok {
		v, err := jsonValue(raw)
		if err != nil {
			return nil, fmt.Errorf("upstream output is not JSON: %v", err)
		}
		return v, nil
	}
	ts := types(root)
	want := kindAny
	switch {
	case ts == nil && (len(required(root)) > 0 || len(properties(root)) > 0):
		want = kindObject
	case slices.Contains(ts, "object") && !slices.Contains(ts, "array"):
		want = kindObject
	case slices.Contains(ts, "array") && !slices.Contains(ts, "object"):
		want = kindArray
	case len(ts) > 0 && !slices.Contains(ts, "object") && !slices.Contains(ts, "array") && slices.Contains(ts, "string"):
		// The contract wants text; the prose is the value.
		return text, nil
	}
	v, err := extractJSON(text, want)
	if err != nil {
		return nil, fmt.Errorf("upstream output is text with no JSON value in it (%d bytes): expected a JSON document, a ```json code fence or a {...} block", len(text))
	}
	return v, nil
}

// repairer applies safe repairs and records them in the report.
type repairer struct {
	rep     *Report
	changed bool
}

// wrapperNames are keys LLMs and agent frameworks commonly wrap their answer
// in.
var wrapperNames = []string{"data", "result", "output", "response"}

// unwrap moves required fields out of a wrapper object (see Check).
func (r *repairer) unwrap(data any, root *jsonschema.Schema) any {
	obj, ok := data.(map[string]any)
	if !ok {
		return data
	}
	var missing []string
	for _, f := range required(root) {
		if _, ok := obj[f]; !ok {
			missing = append(missing, f)
		}
	}
	if len(missing) == 0 {
		return data
	}
	declared := properties(root)
	// "Content Plan" matches the keys "content plan" and "content_plan".
	titleKey := strings.ToLower(title(root))
	titleSnake := strings.ReplaceAll(titleKey, " ", "_")
	keys := sortedKeys(obj)

	// undeclared objects one level down are the only places fields may come
	// from: a declared property is data the schema knows, not a wrapper.
	var wrappers []string
	for _, k := range keys {
		if _, isObj := obj[k].(map[string]any); isObj && !slices.Contains(declared, k) {
			wrappers = append(wrappers, k)
		}
	}

	// Whole wrapper: exactly one candidate holding every missing field and
	// no field that would overwrite a different top-level value.
	var whole []string
	for _, k := range wrappers {
		lk := strings.ToLower(k)
		named := slices.Contains(wrapperNames, lk) || (titleKey != "" && (lk == titleKey || lk == titleSnake))
		if len(obj) != 1 && !named {
			continue
		}
		w := obj[k].(map[string]any)
		if !hasAll(w, missing) || collides(obj, k, w) {
			continue
		}
		whole = append(whole, k)
	}
	if len(whole) == 1 {
		k := whole[0]
		w := obj[k].(map[string]any)
		delete(obj, k)
		var moved []string
		for _, f := range sortedKeys(w) {
			obj[f] = w[f]
			moved = append(moved, k+"."+f)
		}
		r.changed = true
		r.rep.MovedFields = append(r.rep.MovedFields, moved...)
		r.rep.Notes = append(r.rep.Notes, fmt.Sprintf(
			"moved the fields of wrapper object %q to the top level (%s): the schema requires %s at the top level (schema rule #/required)",
			k, strings.Join(moved, ", "), strings.Join(missing, ", ")))
		return obj
	}

	// Field by field: each missing field found in exactly one wrapper.
	for _, f := range missing {
		var from []string
		for _, k := range wrappers {
			// A wrapper emptied by an earlier move is gone from obj.
			w, _ := obj[k].(map[string]any)
			if _, ok := w[f]; ok {
				from = append(from, k)
			}
		}
		switch len(from) {
		case 0:
			continue
		case 1:
		default:
			r.rep.Notes = append(r.rep.Notes, fmt.Sprintf(
				"did not move required field %q: it appears in several nested objects (%s), so the right one cannot be told",
				f, strings.Join(from, ", ")))
			continue
		}
		k := from[0]
		w := obj[k].(map[string]any)
		obj[f] = w[f]
		delete(w, f)
		if len(w) == 0 {
			delete(obj, k)
		}
		r.changed = true
		r.rep.MovedFields = append(r.rep.MovedFields, k+"."+f)
		r.rep.Notes = append(r.rep.Notes, fmt.Sprintf(
			"moved %s to %s: the schema requires %q at the top level (schema rule #/required)", k+"."+f, f, f))
	}
	return obj
}

func hasAll(m map[string]any, keys []string) bool {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

// collides reports whether unwrapping w (at key k of obj) would replace a
// top-level value with a different one.
func collides(obj map[string]any, k string, w map[string]any) bool {
	for f, v := range w {
		if f == k {
			continue
		}
		if top, ok := obj[f]; ok && !jsonEqual(top, v) {
			return true
		}
	}
	return false
}

// coerce converts values whose type the schema safely implies and fills
// optional defaults, walking the value along the schema. path is the dotted
// path of v.
func (r *repairer) coerce(v any, sch *jsonschema.Schema, path string) any {
	if sch == nil {
		return v
	}
	ts := types(sch)
	if !allows(ts, v) {
		return r.convert(v, sch, ts, path)
	}
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(v) {
			if p := property(sch, k); p != nil {
				v[k] = r.coerce(v[k], p, joinKey(path, k))
			}
		}
		r.defaults(v, sch, path)
	case []any:
		it := items(sch)
		for i := range v {
			v[i] = r.coerce(v[i], it, joinIndex(path, i))
		}
	}
	return v
}

// convert repairs a value of a type the schema does not allow, if a safe
// conversion exists; otherwise it returns v unchanged for validation to
// report.
func (r *repairer) convert(v any, sch *jsonschema.Schema, ts []string, path string) any {
	shown := displayPath(path)
	if s, ok := v.(string); ok {
		wantNumber := slices.Contains(ts, "number")
		if wantNumber || slices.Contains(ts, "integer") {
			if n, ok := numericString(s); ok && (wantNumber || isInteger(n)) {
				r.coerced(path, fmt.Sprintf("converted string %q at %s to a number (schema rule %s)", s, shown, typeRule(sch, ts)))
				return n
			}
		}
		if slices.Contains(ts, "boolean") {
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "true":
				r.coerced(path, fmt.Sprintf("converted string %q at %s to a boolean (schema rule %s)", s, shown, typeRule(sch, ts)))
				return true
			case "false":
				r.coerced(path, fmt.Sprintf("converted string %q at %s to a boolean (schema rule %s)", s, shown, typeRule(sch, ts)))
				return false
			}
		}
	}
	if slices.Contains(ts, "array") && !isEmpty(v, false) {
		if _, isArr := v.([]any); !isArr {
			// Repair the item on a scratch report first: its conversions
			// count only if the wrap happens.
			it := items(sch)
			scratch := &repairer{rep: &Report{}}
			item := scratch.coerce(mustCopy(v), it, joinIndex(path, 0))
			if it == nil || allows(types(it), item) {
				r.rep.CoercedFields = append(r.rep.CoercedFields, scratch.rep.CoercedFields...)
				r.rep.DefaultedOptional = append(r.rep.DefaultedOptional, scratch.rep.DefaultedOptional...)
				r.rep.Notes = append(r.rep.Notes, scratch.rep.Notes...)
				r.coerced(path, fmt.Sprintf("wrapped the single %s at %s in a one-element array (schema rule %s)", jsonType(v), shown, typeRule(sch, ts)))
				return []any{item}
			}
		}
	}
	return v
}

func (r *repairer) coerced(path, note string) {
	r.changed = true
	r.rep.CoercedFields = append(r.rep.CoercedFields, displayPath(path))
	r.rep.Notes = append(r.rep.Notes, note)
}

// defaults fills the optional properties of obj that have a schema default
// and are missing, or null where the schema does not allow null.
func (r *repairer) defaults(obj map[string]any, sch *jsonschema.Schema, path string) {
	req := required(sch)
	for _, name := range properties(sch) {
		if slices.Contains(req, name) {
			continue
		}
		p := property(sch, name)
		if p == nil || p.Default == nil {
			continue
		}
		cur, present := obj[name]
		if present && (cur != nil || allows(types(p), nil)) {
			continue
		}
		obj[name] = mustCopy(*p.Default)
		field := joinKey(path, name)
		r.changed = true
		r.rep.DefaultedOptional = append(r.rep.DefaultedOptional, field)
		was := "missing"
		if present {
			was = "null"
		}
		def, _ := json.Marshal(*p.Default)
		r.rep.Notes = append(r.rep.Notes, fmt.Sprintf(
			"filled optional field %s, which was %s, with the schema default %s (schema rule %s)",
			field, was, def, ruleOf(p, "default")))
	}
}

// fallback takes required top-level fields that are still missing or null
// from the start input.
func (r *repairer) fallback(data any, root *jsonschema.Schema, start map[string]any) {
	obj, ok := data.(map[string]any)
	if !ok || start == nil {
		return
	}
	for _, f := range required(root) {
		if v, ok := obj[f]; ok && v != nil {
			continue
		}
		sv, ok := start[f]
		if !ok || isEmpty(sv, true) {
			continue
		}
		c, err := jsonValue(sv)
		if err != nil {
			continue
		}
		obj[f] = c
		r.changed = true
		r.rep.FallbackFromStart = append(r.rep.FallbackFromStart, f)
		r.rep.Notes = append(r.rep.Notes, fmt.Sprintf(
			"took required field %q from the run's start input: the upstream output lacks it (schema rule #/required; start fallback is enabled)", f))
	}
}

// printer renders the validator's messages; English keeps notes stable.
var printer = message.NewPrinter(language.English)

// explain turns a validation error into the report's failure lists and
// notes, and marks the check failed.
func (r *repairer) explain(err error, data any) {
	rep := r.rep
	rep.Status = StatusFailed
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		rep.Notes = append(rep.Notes, "schema validation failed: "+err.Error())
		return
	}
	var notes []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		at := instancePath(data, e.InstanceLocation)
		rule := keywordLocation(e)
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			for _, m := range k.Missing {
				f := joinKey(at, m)
				rep.MissingRequired = append(rep.MissingRequired, f)
				notes = append(notes, fmt.Sprintf(
					"missing required field %s (schema rule %s); contracts never invent required values", f, rule))
			}
		case *kind.Type:
			rep.InvalidTypes = append(rep.InvalidTypes, displayPath(at))
			notes = append(notes, fmt.Sprintf(
				"%s is %s, want %s, and cannot be converted safely (schema rule %s)",
				displayPath(at), k.Got, strings.Join(k.Want, " or "), rule))
		default:
			notes = append(notes, fmt.Sprintf("%s: %s (schema rule %s)",
				displayPath(at), e.ErrorKind.LocalizedString(printer), rule))
		}
	}
	walk(ve)
	rep.MissingRequired = sortedUnique(rep.MissingRequired)
	rep.InvalidTypes = sortedUnique(rep.InvalidTypes)
	// The validator visits map keys in random order; sorting keeps reports
	// deterministic.
	rep.Notes = append(rep.Notes, sortedUnique(notes)...)
}

// keywordLocation names the schema rule of a validation error as a JSON
// pointer into the schema, such as "#/properties/tags/type".
func keywordLocation(e *jsonschema.ValidationError) string {
	loc := e.SchemaURL
	if ref, ok := e.ErrorKind.(*kind.Reference); ok {
		return fragment(ref.URL)
	}
	for _, t := range e.ErrorKind.KeywordPath() {
		loc += "/" + strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
	}
	return fragment(loc)
}

func fragment(url string) string {
	if _, frag, ok := strings.Cut(url, "#"); ok {
		if frag == "" || frag[0] != '/' {
			frag = "/" + frag
		}
		return "#" + strings.TrimSuffix(frag, "/")
	}
	return "#"
}

func ruleOf(sch *jsonschema.Schema, keyword string) string {
	return fragment(sch.Location + "/" + keyword)
}

func typeRule(sch *jsonschema.Schema, ts []string) string {
	return fmt.Sprintf("%s = %s", ruleOf(sch, "type"), strings.Join(ts, "|"))
}

// numericString parses a string holding exactly one JSON number.
func numericString(s string) (json.Number, bool) {
	v, err := decodeJSON(s)
	if err != nil {
		return "", false
	}
	n, ok := v.(json.Number)
	return n, ok
}

// instancePath renders an instance location as a dotted path, using the
// value to tell array indexes from object keys.
func instancePath(data any, loc []string) string {
	path := ""
	cur := data
	for _, tok := range loc {
		switch c := cur.(type) {
		case []any:
			i, err := strconv.Atoi(tok)
			if err == nil && i >= 0 && i < len(c) {
				path = joinIndex(path, i)
				cur = c[i]
				continue
			}
			cur = nil
		case map[string]any:
			cur = c[tok]
		default:
			cur = nil
		}
		path = joinKey(path, tok)
	}
	return path
}

func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func joinIndex(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// displayPath shows the root as "$".
func displayPath(path string) string {
	if path == "" {
		return "$"
	}
	return path
}

func sortedUnique(s []string) []string {
	slices.Sort(s)
	s = slices.Compact(s)
	if s == nil {
		return []string{}
	}
	return s
}

// jsonEqual compares two JSON values; numbers compare by value, so 1,
// 1.0 and json.Number("1") are equal.
func jsonEqual(a, b any) bool {
	if na, ok := numberValue(a); ok {
		nb, ok := numberValue(b)
		return ok && na == nb
	}
	switch a := a.(type) {
	case nil:
		return b == nil
	case bool:
		bb, ok := b.(bool)
		return ok && a == bb
	case string:
		bs, ok := b.(string)
		return ok && a == bs
	case []any:
		bs, ok := b.([]any)
		if !ok || len(a) != len(bs) {
			return false
		}
		for i := range a {
			if !jsonEqual(a[i], bs[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, av := range a {
			bv, ok := bm[k]
			if !ok || !jsonEqual(av, bv) {
				return false
			}
		}
		return true
	}
	return false
}
